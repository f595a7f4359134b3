//! Bodies this client submits, checked before they are sent. The host parses them
//! strictly; a malformed one fails here with the code the host would answer
//! (`INVALID_APPROVAL`, `INVALID_SESSION`, ...) and no request is spent, so a corrected
//! retry is still possible.
//! The shapes and codes come from the generated operation table; what stays here is the
//! host's plain-JSON rule.
use super::check::Checked;
use crate::error::{codes, DriverError};
use crate::generated::operations::{self, Operation};
use crate::types::{ApprovalDecision, JsonObject, ToolExecutionResult};
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

/// A request body checked against its operation's generated request check and request
/// rules: a malformed one fails with the operation's code (the host's) before anything is sent.
pub fn request<T: Serialize>(op: &Operation, body: &T) -> Result<(), DriverError> {
    checked_for(op, body).map(drop)
}

fn checked_for<T: Serialize>(op: &Operation, body: &T) -> Result<Value, DriverError> {
    let (Some(schema), Some(code)) = (op.request, op.invalid_code) else {
        return serde_json::to_value(body).map_err(|e| DriverError::new(codes::INVALID_ARGUMENT, e.to_string()));
    };
    let invalid = |e| DriverError::new(code, format!("the {} request is invalid: {e}", op.id));
    let value = checked(body, schema).map_err(invalid)?;
    if let Some(broken) = op.request_rules.and_then(|name| super::rules::evaluate(name, &super::rules::scope([("request", value.clone())])))
    {
        return Err(invalid(broken.to_string()));
    }
    Ok(value)
}

/// A decision (to `op`, the caller's or the operator's endpoint), whose call arguments must
/// also be plain JSON.
pub fn approval_decision(op: &Operation, decision: &ApprovalDecision) -> Result<(), DriverError> {
    checked_for(op, decision)?;
    if !is_plain_object(&decision.call.arguments, 0) {
        return Err(DriverError::new(codes::INVALID_APPROVAL, "the approval decision is invalid: call.arguments must be plain JSON"));
    }
    Ok(())
}

/// A tool result, whose output must also be plain JSON.
pub fn tool_result(result: &ToolExecutionResult) -> Result<(), DriverError> {
    checked_for(&operations::COMPLETE_TOOL, result)?;
    match &result.output {
        Some(output) if !is_plain_json(output, 0) => {
            Err(DriverError::new(codes::INVALID_TOOL_EXECUTION, "the tool execution submission is invalid: output must be plain JSON"))
        }
        _ => Ok(()),
    }
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
