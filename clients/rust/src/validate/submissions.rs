//! Bodies this client submits (approval decisions, tool progress and results), checked
//! before they are sent. The host parses them strictly; a malformed one fails here with
//! the code the host would answer (`INVALID_APPROVAL` / `INVALID_TOOL_EXECUTION`) and no
//! request is spent, so a corrected retry is still possible.
use super::check::Checked;
use super::formats::is_tool_name;
use crate::error::{codes, DriverError};
use crate::types::*;
use serde_json::Value;

/// Nesting the host still treats as plain JSON.
const MAX_DEPTH: usize = 64;

fn ticket_id(value: &str, at: &str) -> Checked<()> {
    // JSON Schema lengths count code points.
    match value.chars().count() {
        1..=256 => Ok(()),
        _ => Err(format!("{at} must have 1 to 256 characters")),
    }
}

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

fn identity(execution_id: &str, run_id: &str, call_id: &str) -> Checked<()> {
    ticket_id(execution_id, "executionId")?;
    ticket_id(run_id, "runId")?;
    ticket_id(call_id, "callId")
}

pub fn approval_decision(decision: &ApprovalDecision) -> Result<(), DriverError> {
    let check = || -> Checked<()> {
        ticket_id(&decision.approval_id, "approvalId")?;
        ticket_id(&decision.run_id, "runId")?;
        ticket_id(&decision.call.id, "call.id")?;
        if !is_tool_name(&decision.call.name) {
            return Err("call.name must be a tool name".into());
        }
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
    identity(&id.execution_id, &id.run_id, &id.call_id).map_err(invalid_execution)
}

pub fn tool_result(result: &ToolExecutionResult) -> Result<(), DriverError> {
    let check = || -> Checked<()> {
        identity(&result.execution_id, &result.run_id, &result.call_id)?;
        match (&result.output, &result.error) {
            (Some(output), None) if is_plain_json(output, 0) => Ok(()),
            (Some(_), None) => Err("output must be plain JSON".into()),
            (None, Some(_)) => Ok(()),
            _ => Err("it must carry exactly one of output or error".into()),
        }
    };
    check().map_err(invalid_execution)
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
