//! Validation of everything the host sends: schemas (generated into
//! `crate::generated::checks` by `npm run protocol`), cross-field rules (`rules.rs`),
//! stream rules (`stream.rs`).
pub(crate) mod check;
mod decode;
pub(crate) mod formats;
mod receipts;
mod rules;
mod stream;
mod submissions;

pub use receipts::{
    approval_resolution, delete_receipt, index_receipt, ingest_receipt, job_event_page, job_info, job_list, job_submitted, search_result,
    session_created, session_deleted, session_list, session_snapshot, tool_receipt,
};
pub use rules::job_event_order;
pub use stream::{json_run_result, EventValidator};
pub use submissions::{approval_decision, request, tool_result};

use crate::error::{codes, DriverError};
use crate::generated::checks as schema;
use crate::types::{ProtocolInfo, Provider};
use serde::Deserialize;
use serde_json::Value;

fn invalid_response(what: &str, e: String) -> DriverError {
    DriverError::new(codes::INVALID_RESPONSE, format!("{what}: {e}"))
}

pub fn parse_json(bytes: &[u8]) -> Result<Value, DriverError> {
    decode::parse(bytes).map_err(|e| invalid_response("response body", e))
}

pub fn protocol_info(value: Value) -> Result<ProtocolInfo, DriverError> {
    schema::protocol_info(&value, "").and_then(|_| decode::typed(value)).map_err(|e| invalid_response("protocol info", e))
}

pub fn providers(value: Value) -> Result<Vec<Provider>, DriverError> {
    #[derive(Deserialize)]
    struct List {
        providers: Vec<Provider>,
    }
    schema::provider_list(&value, "")
        .and_then(|_| decode::typed::<List>(value))
        .map(|list| list.providers)
        .map_err(|e| invalid_response("provider list", e))
}

/// The wire error of an HTTP error body, when it is a valid `{"error": ErrorInfo}`.
pub fn error_envelope(bytes: &[u8], status: u16) -> Option<DriverError> {
    #[derive(Deserialize)]
    struct Envelope {
        error: crate::types::ErrorInfo,
    }
    let value = decode::parse(bytes).ok()?;
    schema::error_envelope(&value, "").ok()?;
    let Envelope { error } = decode::typed(value).ok()?;
    Some(DriverError { code: error.code, message: error.message, retryable: error.retryable, outcome: error.outcome, status: Some(status) })
}

/// An event that passed its schema check, as the typed [`crate::types::Event`].
pub fn typed_event(value: Value) -> Result<crate::types::Event, String> {
    decode::typed(value)
}

/// A wire schema check from `generated::checks`.
pub type Schema = fn(&Value, &str) -> check::Checked<()>;

/// An operator answer: its schema, then its type.
pub fn operator_answer<T: serde::de::DeserializeOwned>(value: Value, schema: Schema) -> Result<T, DriverError> {
    schema(&value, "").and_then(|_| decode::typed(value)).map_err(|e| invalid_response("operator answer", e))
}
