//! The blocking twins of the one-call answers and of the function runner.
use super::EventIter;
use crate::error::Error;
use crate::interactive::requested_tool;
use crate::tickets::StreamTickets;
use crate::types::*;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::runtime::Runtime;

/// The handles of one blocking stream: answers run on the client's runtime.
#[derive(Clone)]
pub(super) struct Answers {
    pub(super) tickets: Arc<StreamTickets>,
    pub(super) runtime: Arc<Runtime>,
}

impl Answers {
    pub(super) fn approval(&self, event: &Event) -> Result<PendingApproval, Error> {
        Ok(PendingApproval { inner: self.tickets.approval(event)?, runtime: Arc::clone(&self.runtime) })
    }

    pub(super) fn execution(&self, event: &Event) -> Result<ToolTicket, Error> {
        Ok(ToolTicket { inner: self.tickets.execution(event)?, runtime: Arc::clone(&self.runtime) })
    }
}

/// The blocking [`crate::PendingApproval`]: `approve()`, `deny()` or `cancel()` it once.
pub struct PendingApproval {
    inner: crate::PendingApproval,
    runtime: Arc<Runtime>,
}

impl PendingApproval {
    pub fn request(&self) -> &ApprovalRequest {
        self.inner.request()
    }

    pub fn call(&self) -> &ToolCall {
        self.inner.call()
    }

    pub fn approve(self) -> Result<ApprovalResolution, Error> {
        self.decide(ApprovalAction::Approve)
    }

    pub fn deny(self) -> Result<ApprovalResolution, Error> {
        self.decide(ApprovalAction::Deny)
    }

    pub fn cancel(self) -> Result<ApprovalResolution, Error> {
        self.decide(ApprovalAction::Cancel)
    }

    pub fn decide(self, action: ApprovalAction) -> Result<ApprovalResolution, Error> {
        self.runtime.block_on(self.inner.decide(action))
    }
}

/// The blocking [`crate::ToolContext`] a registered function receives.
pub struct ToolContext {
    inner: crate::ToolContext,
    runtime: Arc<Runtime>,
}

impl ToolContext {
    pub fn execution(&self) -> &ToolExecution {
        self.inner.execution()
    }

    /// Reports progress after real work (never on a timer): it resets the run's idle timer.
    pub fn progress(&self) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(self.inner.progress())
    }
}

/// The blocking [`crate::ToolTicket`]: `progress()`, then one `complete(output)` or `fail()`.
pub struct ToolTicket {
    inner: crate::ToolTicket,
    runtime: Arc<Runtime>,
}

impl ToolTicket {
    pub fn execution(&self) -> &ToolExecution {
        self.inner.execution()
    }

    pub fn call(&self) -> &ToolCall {
        self.inner.call()
    }

    pub fn progress(&self) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(self.inner.progress())
    }

    pub fn complete(self, output: Value) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(self.inner.complete(output))
    }

    pub fn fail(self) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(self.inner.fail())
    }

    fn context(&self) -> ToolContext {
        ToolContext { inner: self.inner.context().clone(), runtime: Arc::clone(&self.runtime) }
    }
}

type ToolFunction = Box<dyn FnMut(JsonObject, &ToolContext) -> Option<Value> + Send>;

/// Application functions by tool name, for [`EventIter::with_tools`].
#[derive(Default)]
pub struct ToolFunctions {
    functions: HashMap<String, ToolFunction>,
}

impl ToolFunctions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `function(arguments, &context)` on the caller's thread for each execution
    /// request of the application tool `name`; its `Ok` value is delivered as the output
    /// and its `Err` as the tool's failure. Registering a name again replaces the function.
    pub fn register<F, E>(mut self, name: &str, mut function: F) -> Self
    where
        F: FnMut(JsonObject, &ToolContext) -> Result<Value, E> + Send + 'static,
    {
        self.functions.insert(name.to_owned(), Box::new(move |arguments, context| function(arguments, context).ok()));
        self
    }

    fn run(&mut self, ticket: ToolTicket) -> Result<ToolExecutionReceipt, Error> {
        let Some(function) = self.functions.get_mut(&ticket.call().name) else { return ticket.fail() };
        match function(ticket.call().arguments.clone(), &ticket.context()) {
            Some(output) => ticket.complete(output),
            None => ticket.fail(),
        }
    }

    fn is_registered(&self, event: &Event) -> bool {
        requested_tool(event).is_some_and(|name| self.functions.contains_key(name))
    }
}

/// The blocking [`crate::ToolStream`]: events of an [`EventIter`] with registered
/// functions run after their execution request is yielded.
pub struct ToolIter {
    /// `None` once a function's outcome could not be delivered (the stream is closed).
    events: Option<EventIter>,
    functions: ToolFunctions,
    answers: Answers,
    due: Option<ToolTicket>,
}

impl ToolIter {
    pub(super) fn new(events: EventIter, functions: ToolFunctions) -> Result<Self, Error> {
        let answers = events.answers.clone();
        answers.tickets.check_declared(functions.functions.keys().map(String::as_str))?;
        Ok(ToolIter { events: Some(events), functions, answers, due: None })
    }

    pub fn approval(&self, event: &Event) -> Result<PendingApproval, Error> {
        self.answers.approval(event)
    }

    pub fn execution(&self, event: &Event) -> Result<ToolTicket, Error> {
        self.answers.execution(event)
    }
}

impl Iterator for ToolIter {
    type Item = Result<Event, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(ticket) = self.due.take() {
            if let Err(error) = self.functions.run(ticket) {
                self.events = None;
                return Some(Err(error));
            }
        }
        let event = self.events.as_mut()?.next()?;
        if let Ok(event) = &event {
            if self.functions.is_registered(event) {
                self.due = self.answers.execution(event).ok();
            }
        }
        Some(event)
    }
}
