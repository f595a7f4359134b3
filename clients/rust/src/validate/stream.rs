//! The consumer rules of a `/v1/runs` event stream: envelope, ordering, unknown types,
//! negotiation gates, payload schemas and cross-checks against the request.
use super::{check::Checked, decode, rules};
use crate::error::{codes, DriverError};
use crate::generated::checks as schema;
use crate::types::*;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// At most this many application tool invocations per run.
const MAX_TOOL_EXECUTIONS: usize = 2048;

/// Validates the frames of one run stream in order.
pub struct EventValidator {
    request: RunRequest,
    last_sequence: f64,
    run_id: Option<String>,
    /// The call id of each requested approval, by approval id.
    approvals: HashMap<String, String>,
    execution_ids: HashSet<String>,
    call_ids: HashSet<String>,
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
            request,
            last_sequence: 0.0,
            run_id: None,
            approvals: HashMap::new(),
            execution_ids: HashSet::new(),
            call_ids: HashSet::new(),
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
        let event: Event = decode::typed(value).map_err(|e| invalid(format!("{kind} event: {e}")))?;
        self.cross_check(&event).map_err(|e| invalid(format!("{kind} event: {e}")))?;
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

    fn cross_check(&mut self, event: &Event) -> Checked<()> {
        let run_id = event.run_id.as_str();
        match &event.payload {
            EventPayload::RunStarted { provider, model } if *provider != self.request.provider || *model != self.request.model => {
                Err("provider/model differ from the request".into())
            }
            EventPayload::ApprovalRequested { approval } => {
                if approval.run_id != run_id {
                    Err("approval belongs to another run".into())
                } else if Some(approval.idle_policy) != self.request.approvals.as_ref().map(|a| a.idle_policy) {
                    Err("approval idlePolicy differs from the requested policy".into())
                } else {
                    self.approvals.insert(approval.approval_id.clone(), approval.call.id.clone());
                    Ok(())
                }
            }
            EventPayload::ApprovalResolved { resolution } => match self.approvals.get(&resolution.approval_id) {
                _ if resolution.run_id != run_id => Err("resolution belongs to another run".into()),
                None => Err(format!("resolution {} answers no requested approval", resolution.approval_id)),
                Some(call_id) if *call_id != resolution.call_id => Err("resolution callId is not the call of its approval".into()),
                Some(_) => Ok(()),
            },
            EventPayload::ToolExecutionRequested { execution } => self.tool_execution(execution, run_id),
            EventPayload::RunCompleted { result } if result.run_id != run_id => Err("result belongs to another run".into()),
            EventPayload::RunCompleted { result } => rules::run_result(result, &self.request),
            _ => Ok(()),
        }
    }

    fn tool_execution(&mut self, execution: &ToolExecution, run_id: &str) -> Checked<()> {
        let name = &execution.call.name;
        let declared = self.request.application_tools.iter().flatten().any(|t| &t.name == name);
        let selected = self.request.tools.iter().flatten().any(|t| t == name);
        if execution.run_id != run_id {
            Err("execution belongs to another run".into())
        } else if !declared || !selected {
            Err(format!("execution names {name}, which is not a declared and selected application tool"))
        } else if self.execution_ids.contains(&execution.execution_id) {
            Err("executionId repeated".into())
        } else if self.call_ids.contains(&execution.call.id) {
            Err("call id repeated".into())
        } else if self.execution_ids.len() >= MAX_TOOL_EXECUTIONS {
            Err("more than 2048 tool executions in one run".into())
        } else {
            self.execution_ids.insert(execution.execution_id.clone());
            self.call_ids.insert(execution.call.id.clone());
            Ok(())
        }
    }
}

/// A JSON `run` result: schema, then the rules against the request.
pub fn json_run_result(value: Value, request: &RunRequest) -> Result<RunResult, DriverError> {
    let bad = |e: String| DriverError::new(codes::INVALID_RESPONSE, format!("run result: {e}"));
    schema::run_result(&value, "").map_err(bad)?;
    let result: RunResult = decode::typed(value).map_err(bad)?;
    rules::run_result(&result, request).map_err(bad)?;
    Ok(result)
}
