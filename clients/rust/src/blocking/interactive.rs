//! The blocking twins of the one-call answers and of the function runner.
use super::{AgenticClient, EventIter};
use crate::error::Error;
use crate::interactive::requested_tool;
use crate::types::*;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::runtime::Runtime;

/// The blocking [`crate::PendingApproval`]: `approve()`, `deny()` or `cancel()` it once.
pub struct PendingApproval {
    pub(super) inner: crate::PendingApproval,
    pub(super) runtime: Arc<Runtime>,
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

/// The blocking [`crate::PendingExecution`]: `progress()`, then one `complete(output)` or `fail()`.
pub struct PendingExecution {
    pub(super) inner: crate::PendingExecution,
    pub(super) runtime: Arc<Runtime>,
}

impl PendingExecution {
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

/// Application functions by tool name, for [`AgenticClient::stream_with_tools`].
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

    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(String::as_str)
    }

    fn run(&mut self, pending: PendingExecution) -> Result<ToolExecutionReceipt, Error> {
        let Some(function) = self.functions.get_mut(&pending.call().name) else { return pending.fail() };
        match function(pending.call().arguments.clone(), &pending.context()) {
            Some(output) => pending.complete(output),
            None => pending.fail(),
        }
    }

    fn is_registered(&self, event: &Event) -> bool {
        requested_tool(event).is_some_and(|name| self.functions.contains_key(name))
    }
}

/// The blocking [`crate::ToolStream`] ([`AgenticClient::stream_with_tools`]): events of
/// an [`EventIter`] with registered functions run after their execution request is yielded.
pub struct ToolIter {
    /// `None` once a function's outcome could not be delivered (the stream is closed).
    events: Option<EventIter>,
    functions: ToolFunctions,
    client: AgenticClient,
    due: Option<PendingExecution>,
}

impl ToolIter {
    pub(super) fn new(client: AgenticClient, events: EventIter, functions: ToolFunctions) -> Self {
        ToolIter { events: Some(events), functions, client, due: None }
    }
}

impl Iterator for ToolIter {
    type Item = Result<Event, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(pending) = self.due.take() {
            if let Err(error) = self.functions.run(pending) {
                self.events = None;
                return Some(Err(error));
            }
        }
        let event = self.events.as_mut()?.next()?;
        if let Ok(event) = &event {
            if self.functions.is_registered(event) {
                // The handle copies the request before the caller can touch the event.
                self.due = self.client.execution(event).ok();
            }
        }
        Some(event)
    }
}
