//! One-call answers to a stream's `approval.requested` and `tool.execution.requested`
//! events, and a runner for application functions registered by tool name.
use crate::async_client::{AsyncAgenticClient, EventStream};
use crate::error::{codes, Error};
use crate::types::*;
use futures_core::Stream;
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// An `approval.requested` ([`AsyncAgenticClient::approval`]): `approve()`, `deny()` or
/// `cancel()` it once. Each returns the host's checked receipt; what then happens to the
/// run arrives as events (`approval.resolved`, then the tool's events or the terminal).
pub struct PendingApproval {
    client: AsyncAgenticClient,
    request: ApprovalRequest,
}

impl PendingApproval {
    pub(crate) fn new(client: AsyncAgenticClient, request: ApprovalRequest) -> Self {
        PendingApproval { client, request }
    }

    /// The approval exactly as the host requested it.
    pub fn request(&self) -> &ApprovalRequest {
        &self.request
    }

    /// The proposed call (name and arguments) a person is asked to review.
    pub fn call(&self) -> &ToolCall {
        &self.request.call
    }

    /// Lets the reviewed call run.
    pub async fn approve(self) -> Result<ApprovalResolution, Error> {
        self.decide(ApprovalAction::Approve).await
    }

    /// Refuses the call; the run fails with `APPROVAL_DENIED` and the tool never runs.
    pub async fn deny(self) -> Result<ApprovalResolution, Error> {
        self.decide(ApprovalAction::Deny).await
    }

    /// Cancels the whole run (`run.cancelled` with `CANCELLED`).
    pub async fn cancel(self) -> Result<ApprovalResolution, Error> {
        self.decide(ApprovalAction::Cancel).await
    }

    pub async fn decide(self, action: ApprovalAction) -> Result<ApprovalResolution, Error> {
        self.client.decide_approval(&self.request.decision(action)).await
    }
}

/// What an application function sees of its execution: the exact request and a way to
/// report real progress.
#[derive(Clone)]
pub struct ToolContext {
    client: AsyncAgenticClient,
    execution: ToolExecution,
}

impl ToolContext {
    pub fn execution(&self) -> &ToolExecution {
        &self.execution
    }

    /// Reports progress after real work (never on a timer): it resets the run's idle timer.
    pub async fn progress(&self) -> Result<ToolExecutionReceipt, Error> {
        self.client.report_tool_progress(&self.execution.identity()).await
    }
}

/// A `tool.execution.requested` ([`AsyncAgenticClient::execution`]): a single-use
/// ticket. Report [`progress`](Self::progress) after real work, then deliver one result
/// with [`complete`](Self::complete) or [`fail`](Self::fail); the host rejects a second
/// result with `TOOL_EXECUTION_NOT_FOUND`.
pub struct PendingExecution {
    context: ToolContext,
}

impl PendingExecution {
    pub(crate) fn new(client: AsyncAgenticClient, execution: ToolExecution) -> Self {
        PendingExecution { context: ToolContext { client, execution } }
    }

    pub(crate) fn context(&self) -> &ToolContext {
        &self.context
    }

    pub fn execution(&self) -> &ToolExecution {
        &self.context.execution
    }

    /// The call, its arguments already checked by the host against the tool's input schema.
    pub fn call(&self) -> &ToolCall {
        &self.context.execution.call
    }

    pub async fn progress(&self) -> Result<ToolExecutionReceipt, Error> {
        self.context.progress().await
    }

    /// Delivers the tool's JSON output; the host checks it against the tool's output schema.
    pub async fn complete(self, output: Value) -> Result<ToolExecutionReceipt, Error> {
        let result = ToolExecutionResult::success(self.execution().identity(), output);
        self.settle(result).await
    }

    /// Reports that the tool failed; the run then fails with `APPLICATION_TOOL_FAILED`.
    pub async fn fail(self) -> Result<ToolExecutionReceipt, Error> {
        let result = ToolExecutionResult::failure(self.execution().identity());
        self.settle(result).await
    }

    async fn settle(self, result: ToolExecutionResult) -> Result<ToolExecutionReceipt, Error> {
        self.context.client.complete_tool(&result).await
    }
}

/// The tool a `tool.execution.requested` asks to run.
pub(crate) fn requested_tool(event: &Event) -> Option<&str> {
    match &event.payload {
        EventPayload::ToolExecutionRequested { execution } => Some(&execution.call.name),
        _ => None,
    }
}

/// `None` when the function failed.
type ToolFuture = Pin<Box<dyn Future<Output = Option<Value>> + Send>>;
type ToolFunction = Box<dyn Fn(JsonObject, ToolContext) -> ToolFuture + Send + Sync>;

/// Application functions by tool name, for [`AsyncAgenticClient::stream_with_tools`].
#[derive(Default)]
pub struct ToolFunctions {
    functions: HashMap<String, ToolFunction>,
}

impl ToolFunctions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `function(arguments, context)` for each execution request of the application
    /// tool `name`; its `Ok` value is delivered as the output and its `Err` as the tool's
    /// failure (the error itself stays in the application). Registering a name again
    /// replaces the earlier function.
    pub fn register<F, Fut, E>(mut self, name: &str, function: F) -> Self
    where
        F: Fn(JsonObject, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, E>> + Send + 'static,
    {
        let boxed: ToolFunction = Box::new(move |arguments, context| {
            let output = function(arguments, context);
            Box::pin(async move { output.await.ok() })
        });
        self.functions.insert(name.to_owned(), boxed);
        self
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(String::as_str)
    }

    fn is_registered(&self, event: &Event) -> bool {
        requested_tool(event).is_some_and(|name| self.functions.contains_key(name))
    }

    /// Runs the registered function of `pending`'s tool and delivers its outcome.
    async fn run(&self, pending: PendingExecution) -> Result<ToolExecutionReceipt, Error> {
        let Some(function) = self.functions.get(&pending.call().name) else { return pending.fail().await };
        match function(pending.call().arguments.clone(), pending.context().clone()).await {
            Some(output) => pending.complete(output).await,
            None => pending.fail().await,
        }
    }
}

/// The events of a run whose registered functions are run
/// ([`AsyncAgenticClient::stream_with_tools`]). After yielding a `tool.execution.requested`
/// of a registered tool it runs that function before reading on; requests for other tools
/// are left to the caller ([`AsyncAgenticClient::execution`]). A failed delivery of a
/// function's outcome is yielded as the stream's last item.
pub struct ToolStream {
    events: Pin<Box<dyn Stream<Item = Result<Event, Error>> + Send>>,
}

struct Runner {
    client: AsyncAgenticClient,
    events: EventStream,
    functions: ToolFunctions,
    due: Option<PendingExecution>,
}

impl Runner {
    async fn step(&mut self) -> Option<Result<Event, Error>> {
        if let Some(pending) = self.due.take() {
            if let Err(error) = self.functions.run(pending).await {
                return Some(Err(error));
            }
        }
        let event = self.events.next().await?;
        if let Ok(event) = &event {
            if self.functions.is_registered(event) {
                // The handle copies the request before the caller can touch the event.
                self.due = execution_of(&self.client, event).ok();
            }
        }
        Some(event)
    }
}

impl ToolStream {
    pub(crate) fn new(client: AsyncAgenticClient, events: EventStream, functions: ToolFunctions) -> Self {
        let runner = Runner { client, events, functions, due: None };
        let events = futures_util::stream::unfold(Some(runner), |runner| async move {
            let mut runner = runner?;
            match runner.step().await? {
                Ok(event) => Some((Ok(event), Some(runner))),
                Err(error) => Some((Err(error), None)),
            }
        });
        ToolStream { events: Box::pin(events) }
    }
}

impl Stream for ToolStream {
    type Item = Result<Event, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }
}

fn not_a(what: &str) -> Error {
    Error::driver(codes::INVALID_ARGUMENT, format!("this answer needs a {what} event"))
}

/// A handle on a private copy of an `approval.requested` event's request.
pub(crate) fn approval_of(client: &AsyncAgenticClient, event: &Event) -> Result<PendingApproval, Error> {
    match &event.payload {
        EventPayload::ApprovalRequested { approval } => Ok(PendingApproval::new(client.clone(), approval.clone())),
        _ => Err(not_a("approval.requested")),
    }
}

/// A handle on a private copy of a `tool.execution.requested` event's execution.
pub(crate) fn execution_of(client: &AsyncAgenticClient, event: &Event) -> Result<PendingExecution, Error> {
    match &event.payload {
        EventPayload::ToolExecutionRequested { execution } => Ok(PendingExecution::new(client.clone(), execution.clone())),
        _ => Err(not_a("tool.execution.requested")),
    }
}

/// Functions may only be registered for application tools the request declares.
pub(crate) fn check_declared<'a>(request: &RunRequest, mut names: impl Iterator<Item = &'a str>) -> Result<(), Error> {
    let declared = |name: &str| request.application_tools.iter().flatten().any(|tool| tool.name == name);
    match names.find(|name| !declared(name)) {
        Some(name) => Err(Error::driver(
            codes::INVALID_ARGUMENT,
            format!("a function is registered for {name}, which the request does not declare in applicationTools"),
        )),
        None => Ok(()),
    }
}
