//! Validation of everything the host sends: schemas (generated into
//! `crate::generated::checks` by `npm run protocol`), the generated cross-field rules
//! (`generated/rules.json`, evaluated by `rules.rs`), stream rules (`stream.rs`).
pub(crate) mod check;
mod decode;
pub(crate) mod formats;
pub(crate) mod rules;
mod stream;
mod submissions;

pub(crate) use stream::log_event;
pub use stream::EventValidator;
pub use submissions::{approval_decision, request, tool_result};

use crate::error::{codes, DriverError};
use crate::generated::checks as schema;
use crate::generated::operations::Operation;
use crate::types::{ProtocolInfo, Provider};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
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

/// An operation's JSON answer: its schema, then the operation's rules against the request
/// (`INVALID_RESPONSE` naming the broken rule), then its type.
pub fn answer<T: DeserializeOwned, R: Serialize>(op: &Operation, value: Value, request: &R) -> Result<T, DriverError> {
    (op.response)(&value, "").map_err(|e| invalid_response(&format!("the host's {} answer", op.id), e))?;
    if let Some(name) = op.answer_rules {
        let request = serde_json::to_value(request).map_err(|e| DriverError::new(codes::INVALID_ARGUMENT, e.to_string()))?;
        if let Some(broken) = rules::evaluate(name, &rules::scope([("answer", value.clone()), ("request", request)])) {
            return Err(invalid_response(&format!("the host's {} answer does not match the request", op.id), broken.to_string()));
        }
    }
    decode::typed(value).map_err(|e| invalid_response(&format!("the host's {} answer", op.id), e))
}
