//! What one stream delivered: private copies of its `approval.requested` and
//! `tool.execution.requested` payloads, by id. A handle made from an event is built from
//! the copy, so it decides or reports exactly what the host asked, whatever the
//! application did to its own event value in the meantime.
use crate::async_client::AsyncAgenticClient;
use crate::error::{codes, Error};
use crate::interactive::{PendingApproval, ToolTicket};
use crate::types::*;
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

pub(crate) struct StreamTickets {
    client: AsyncAgenticClient,
    /// The application tools the request declares.
    declared: HashSet<String>,
    delivered: Mutex<Delivered>,
}

#[derive(Default)]
struct Delivered {
    approvals: HashMap<String, ApprovalRequest>,
    executions: HashMap<String, ToolExecution>,
}

fn not_delivered(what: &str) -> Error {
    Error::driver(codes::INVALID_ARGUMENT, format!("the {what} event was not delivered by this stream"))
}

impl StreamTickets {
    pub fn new(client: AsyncAgenticClient, request: &RunRequest) -> Self {
        let declared = request.application_tools.iter().flatten().map(|tool| tool.name.clone()).collect();
        StreamTickets { client, declared, delivered: Mutex::default() }
    }

    fn delivered(&self) -> std::sync::MutexGuard<'_, Delivered> {
        // Every critical section is a map insert or lookup; a poisoned lock is still consistent.
        self.delivered.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a validated event before the stream yields it.
    pub fn note(&self, event: &Event) {
        match &event.payload {
            EventPayload::ApprovalRequested { approval } => {
                self.delivered().approvals.entry(approval.approval_id.clone()).or_insert_with(|| approval.clone());
            }
            EventPayload::ToolExecutionRequested { execution } => {
                self.delivered().executions.entry(execution.execution_id.clone()).or_insert_with(|| execution.clone());
            }
            _ => {}
        }
    }

    pub fn approval(&self, event: &Event) -> Result<PendingApproval, Error> {
        let EventPayload::ApprovalRequested { approval } = &event.payload else { return Err(not_delivered("approval.requested")) };
        let request = self.delivered().approvals.get(&approval.approval_id).cloned().ok_or_else(|| not_delivered("approval.requested"))?;
        Ok(PendingApproval::new(self.client.clone(), request))
    }

    pub fn execution(&self, event: &Event) -> Result<ToolTicket, Error> {
        let EventPayload::ToolExecutionRequested { execution } = &event.payload else {
            return Err(not_delivered("tool.execution.requested"));
        };
        let execution =
            self.delivered().executions.get(&execution.execution_id).cloned().ok_or_else(|| not_delivered("tool.execution.requested"))?;
        Ok(ToolTicket::new(self.client.clone(), execution))
    }

    /// Functions may only be registered for application tools the request declares.
    pub fn check_declared<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Result<(), Error> {
        match names.into_iter().find(|name| !self.declared.contains(*name)) {
            Some(name) => Err(Error::driver(
                codes::INVALID_ARGUMENT,
                format!("a function is registered for {name}, which the request does not declare in applicationTools"),
            )),
            None => Ok(()),
        }
    }
}
