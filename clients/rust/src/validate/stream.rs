//! The consumer rules of a `/v1/runs` event stream: envelope, ordering, unknown types,
//! negotiation gates and payload schemas here (they decide, before the payload is even
//! validated, whether an event is skipped, `UNSUPPORTED_EVENT` or `INVALID_STREAM`, as in
//! every client), then the generated rules of set `runEvent` against the request.
use super::{decode, rules};
use crate::error::{codes, DriverError};
use crate::generated::checks as schema;
use crate::types::*;
use serde_json::{json, Value};
use std::sync::Arc;

/// Validates the frames of one run stream in order.
pub struct EventValidator {
    request: RunRequest,
    /// The request as the rules read it.
    request_value: Arc<Value>,
    last_sequence: f64,
    run_id: Option<String>,
    /// What the rules of later events need to know of earlier ones: `{approvalId, callId}`
    /// of each requested approval, `{executionId, callId}` of each requested execution.
    /// (JSON lists, shared with each event's rule scope rather than copied into it.)
    approvals: Arc<Value>,
    executions: Arc<Value>,
    finished: bool,
}

fn invalid(message: impl Into<String>) -> DriverError {
    DriverError::new(codes::INVALID_STREAM, message)
}

fn unsupported(message: impl Into<String>) -> DriverError {
    DriverError::new(codes::UNSUPPORTED_EVENT, message)
}

impl EventValidator {
    pub fn new(request: RunRequest) -> Self {
        EventValidator {
            // A RunRequest always serializes (its JSON values are serde_json values).
            request_value: Arc::new(serde_json::to_value(&request).unwrap_or_default()),
            request,
            last_sequence: 0.0,
            run_id: None,
            approvals: Arc::new(Value::Array(Vec::new())),
            executions: Arc::new(Value::Array(Vec::new())),
            finished: false,
        }
    }

    /// Whether a terminal event was accepted (nothing may follow it).
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// One frame's data. `Ok(None)` is an unfamiliar optional event, skipped.
    pub fn accept(&mut self, data: &str) -> Result<Option<Event>, DriverError> {
        let value = decode::parse(data.as_bytes()).map_err(|e| invalid(format!("event is {e}")))?;
        schema::event_envelope(&value, "").map_err(|e| invalid(format!("event envelope: {e}")))?;
        // The envelope check guarantees these fields and their types.
        let field = |key: &str| &value[key];
        let kind = field("type").as_str().unwrap_or_default().to_owned();
        let sequence = field("sequence").as_f64().unwrap_or_default();
        self.check_order(&kind, field("runId").as_str().unwrap_or_default(), sequence)?;
        let optional = field("optional").as_bool();
        let Some(check) = schema::event_check(&kind) else {
            return match optional {
                Some(true) => Ok(None),
                _ => Err(unsupported(format!("unknown required event type {kind}"))),
            };
        };
        self.check_negotiated(&kind)?;
        check(&value, "").map_err(|e| invalid(format!("{kind} event: {e}")))?;
        self.check_rules(&kind, value.clone())?;
        let event: Event = decode::typed(value).map_err(|e| invalid(format!("{kind} event: {e}")))?;
        match &event.payload {
            EventPayload::ApprovalRequested { approval } => {
                push(&mut self.approvals, json!({"approvalId": approval.approval_id, "callId": approval.call.id}))
            }
            EventPayload::ToolExecutionRequested { execution } => {
                push(&mut self.executions, json!({"executionId": execution.execution_id, "callId": execution.call.id}));
            }
            _ => {}
        }
        self.finished = event.is_terminal();
        Ok(Some(event))
    }

    fn check_order(&mut self, kind: &str, run_id: &str, sequence: f64) -> Result<(), DriverError> {
        if sequence != self.last_sequence + 1.0 {
            return Err(invalid(format!("event sequence {sequence} does not follow {}", self.last_sequence)));
        }
        match &self.run_id {
            None if kind != "run.started" => return Err(invalid("the first event is not run.started")),
            None => self.run_id = Some(run_id.to_owned()),
            Some(_) if kind == "run.started" => return Err(invalid("run.started repeated")),
            Some(id) if id != run_id => return Err(invalid("event belongs to another run")),
            Some(_) => {}
        }
        self.last_sequence = sequence;
        Ok(())
    }

    /// The rules of set `runEvent`: the event against the request and the events before it.
    fn check_rules(&self, kind: &str, event: Value) -> Result<(), DriverError> {
        let mut scope = rules::Scope::new();
        scope.insert("event".to_owned(), Arc::new(event));
        scope.insert("request".to_owned(), Arc::clone(&self.request_value));
        scope.insert("approvals".to_owned(), Arc::clone(&self.approvals));
        scope.insert("executions".to_owned(), Arc::clone(&self.executions));
        if let Some(run_id) = &self.run_id {
            scope.insert("runId".to_owned(), Arc::new(Value::from(run_id.as_str())));
        }
        match rules::evaluate("runEvent", &scope) {
            Some(broken) => Err(invalid(format!("{kind} event is inconsistent: {broken}"))),
            None => Ok(()),
        }
    }

    fn check_negotiated(&self, kind: &str) -> Result<(), DriverError> {
        let negotiated = match kind {
            "approval.requested" | "approval.resolved" => self.request.approvals.is_some(),
            "tool.execution.requested" => self.request.application_tools.as_ref().is_some_and(|t| !t.is_empty()),
            _ => true,
        };
        if negotiated {
            Ok(())
        } else {
            Err(unsupported(format!("{kind} was not negotiated by the request")))
        }
    }
}

fn push(list: &mut Arc<Value>, entry: Value) {
    if let Value::Array(items) = Arc::make_mut(list) {
        items.push(entry);
    }
}

/// One committed event of a job's log or of a run read back (`rules`: `jobEvent`,
/// `runLogEvent`) against the record it belongs to, named `what` in the rules' scope.
pub(crate) fn log_event(rules_name: &str, what: &str, record: Value, event: &Value, sequence: u64) -> Result<(), String> {
    let scope = rules::scope([("event", event.clone()), (what, record), ("sequence", Value::from(sequence))]);
    rules::evaluate(rules_name, &scope).map_or(Ok(()), |broken| Err(broken.to_string()))
}
