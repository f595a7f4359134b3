//! Bodies this client submits (approval decisions, tool progress and results), checked
//! before they are sent. The host parses them strictly; a malformed one fails here with
//! the code the host would answer (`INVALID_APPROVAL` / `INVALID_TOOL_EXECUTION`) and no
//! request is spent, so a corrected retry is still possible.
//! The shapes are the generated `approval_decision`, `tool_execution_identity` and
//! `tool_execution_result` checks; what stays here is the host's plain-JSON rule.
use super::check::Checked;
use crate::error::{codes, DriverError};
use crate::generated::checks as schema;
use crate::types::*;
use serde::Serialize;
use serde_json::Value;

/// Nesting the host still treats as plain JSON.
const MAX_DEPTH: usize = 64;

/// Whether `value` survives the host's JSON parsing unchanged: no `__proto__` key at any
/// depth (JavaScript would not keep it as data) and at most 64 levels of nesting.
fn is_plain_json(value: &Value, depth: usize) -> bool {
    match value {
        _ if depth > MAX_DEPTH => false,
        Value::Array(items) => items.iter().all(|item| is_plain_json(item, depth + 1)),
        Value::Object(map) => is_plain_object(map, depth),
        _ => true,
    }
}

fn is_plain_object(map: &JsonObject, depth: usize) -> bool {
    depth <= MAX_DEPTH && !map.contains_key("__proto__") && map.values().all(|child| is_plain_json(child, depth + 1))
}

/// The body as JSON, checked against its generated wire schema.
fn checked<T: Serialize>(body: &T, schema: fn(&Value, &str) -> Checked<()>) -> Checked<Value> {
    let value = serde_json::to_value(body).map_err(|e| format!("it is not representable as JSON: {e}"))?;
    schema(&value, "")?;
    Ok(value)
}

pub fn approval_decision(decision: &ApprovalDecision) -> Result<(), DriverError> {
    let check = || -> Checked<()> {
        checked(decision, schema::approval_decision)?;
        if !is_plain_object(&decision.call.arguments, 0) {
            return Err("call.arguments must be plain JSON".into());
        }
        Ok(())
    };
    check().map_err(|e| DriverError::new(codes::INVALID_APPROVAL, format!("the approval decision is invalid: {e}")))
}

fn invalid_execution(e: String) -> DriverError {
    DriverError::new(codes::INVALID_TOOL_EXECUTION, format!("the tool execution submission is invalid: {e}"))
}

pub fn tool_identity(id: &ToolExecutionIdentity) -> Result<(), DriverError> {
    checked(id, schema::tool_execution_identity).map(drop).map_err(invalid_execution)
}

pub fn tool_result(result: &ToolExecutionResult) -> Result<(), DriverError> {
    let check = || -> Checked<()> {
        checked(result, schema::tool_execution_result)?;
        match &result.output {
            Some(output) if !is_plain_json(output, 0) => Err("output must be plain JSON".into()),
            _ => Ok(()),
        }
    };
    check().map_err(invalid_execution)
}

fn invalid_session(e: String) -> DriverError {
    DriverError::new(codes::INVALID_SESSION, format!("the session request is invalid: {e}"))
}

fn invalid_job(e: String) -> DriverError {
    DriverError::new(codes::INVALID_JOB, format!("the job request is invalid: {e}"))
}

pub fn session_create(request: &SessionCreate) -> Result<(), DriverError> {
    checked(request, schema::session_create).map(drop).map_err(invalid_session)
}

pub fn session_identity(id: &SessionIdentity) -> Result<(), DriverError> {
    checked(id, schema::session_identity).map(drop).map_err(invalid_session)
}

pub fn job_submit(submission: &JobSubmit) -> Result<(), DriverError> {
    checked(submission, schema::job_submit).map(drop).map_err(invalid_job)
}

pub fn job_identity(id: &JobIdentity) -> Result<(), DriverError> {
    checked(id, schema::job_identity).map(drop).map_err(invalid_job)
}

pub fn job_list_request(request: &JobListRequest) -> Result<(), DriverError> {
    checked(request, schema::job_list_request).map(drop).map_err(invalid_job)
}

pub fn session_list_request(request: &SessionListRequest) -> Result<(), DriverError> {
    checked(request, schema::session_list_request).map(drop).map_err(invalid_session)
}

pub fn job_events_request(request: &JobEventsRequest) -> Result<(), DriverError> {
    checked(request, schema::job_events_request).map(drop).map_err(invalid_job)
}

fn invalid_retrieval(e: String) -> DriverError {
    DriverError::new(codes::INVALID_RETRIEVAL, format!("the retrieval request is invalid: {e}"))
}

pub fn retrieval_search(request: &RetrievalSearch) -> Result<(), DriverError> {
    checked(request, schema::retrieval_search).map(drop).map_err(invalid_retrieval)
}

pub fn retrieval_index(request: &RetrievalIndexRequest) -> Result<(), DriverError> {
    checked(request, schema::retrieval_index_request).map(drop).map_err(invalid_retrieval)
}

pub fn retrieval_delete(request: &RetrievalDeleteRequest) -> Result<(), DriverError> {
    checked(request, schema::retrieval_delete_request).map(drop).map_err(invalid_retrieval)
}

pub fn ingest_request(request: &IngestRequest) -> Result<(), DriverError> {
    checked(request, schema::ingest_request)
        .map(drop)
        .map_err(|e| DriverError::new(codes::INVALID_INGESTION, format!("the ingestion request is invalid: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_json_has_no_proto_key_and_bounded_depth() {
        assert!(is_plain_json(&json!({"a": [{"b": 1}], "__proto": 2}), 0));
        assert!(!is_plain_json(&json!({"a": [{"__proto__": {}}]}), 0));
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH {
            deep = json!([deep]);
        }
        assert!(is_plain_json(&deep, 0));
        assert!(!is_plain_json(&json!([deep]), 0));
    }
}
