//! One-call answers to a stream's `approval.requested` and `tool.execution.requested`
//! events, and a runner for application functions registered by tool name.
use crate::async_client::{AsyncAgenticClient, EventStream};
use crate::error::Error;
use crate::tickets::StreamTickets;
use crate::types::*;
use futures_core::Stream;
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// An `approval.requested` of a stream ([`EventStream::approval`]): `approve()`, `deny()` or
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

/// A `tool.execution.requested` of a stream ([`EventStream::execution`]): a single-use
/// ticket. Report [`progress`](Self::progress) after real work, then deliver one result
/// with [`complete`](Self::complete) or [`fail`](Self::fail); the host rejects a second
/// result with `TOOL_EXECUTION_NOT_FOUND`.
pub struct ToolTicket {
    context: ToolContext,
}

impl ToolTicket {
    pub(crate) fn new(client: AsyncAgenticClient, execution: ToolExecution) -> Self {
        ToolTicket { context: ToolContext { client, execution } }
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

/// Application functions by tool name, for [`EventStream::with_tools`].
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

    fn names(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(String::as_str)
    }

    fn is_registered(&self, event: &Event) -> bool {
        requested_tool(event).is_some_and(|name| self.functions.contains_key(name))
    }

    /// Runs the registered function of `ticket`'s tool and delivers its outcome.
    async fn run(&self, ticket: ToolTicket) -> Result<ToolExecutionReceipt, Error> {
        let Some(function) = self.functions.get(&ticket.call().name) else { return ticket.fail().await };
        match function(ticket.call().arguments.clone(), ticket.context().clone()).await {
            Some(output) => ticket.complete(output).await,
            None => ticket.fail().await,
        }
    }
}

/// The events of an [`EventStream`] with registered functions run
/// ([`EventStream::with_tools`]). After yielding a `tool.execution.requested` of a
/// registered tool it runs that function before reading on; requests for other tools are
/// left to the caller. A failed delivery of a function's outcome is yielded as the
/// stream's last item.
pub struct ToolStream {
    events: Pin<Box<dyn Stream<Item = Result<Event, Error>> + Send>>,
    tickets: Arc<StreamTickets>,
}

struct Runner {
    events: EventStream,
    functions: ToolFunctions,
    due: Option<ToolTicket>,
}

impl Runner {
    async fn step(&mut self) -> Option<Result<Event, Error>> {
        if let Some(ticket) = self.due.take() {
            if let Err(error) = self.functions.run(ticket).await {
                return Some(Err(error));
            }
        }
        let event = self.events.next().await?;
        if let Ok(event) = &event {
            if self.functions.is_registered(event) {
                self.due = self.events.execution(event).ok();
            }
        }
        Some(event)
    }
}

impl ToolStream {
    pub(crate) fn new(events: EventStream, functions: ToolFunctions) -> Result<Self, Error> {
        let tickets = Arc::clone(events.tickets());
        tickets.check_declared(functions.names())?;
        let runner = Runner { events, functions, due: None };
        let events = futures_util::stream::unfold(Some(runner), |runner| async move {
            let mut runner = runner?;
            match runner.step().await? {
                Ok(event) => Some((Ok(event), Some(runner))),
                Err(error) => Some((Err(error), None)),
            }
        });
        Ok(ToolStream { events: Box::pin(events), tickets })
    }

    /// See [`EventStream::approval`].
    pub fn approval(&self, event: &Event) -> Result<PendingApproval, Error> {
        self.tickets.approval(event)
    }

    /// See [`EventStream::execution`] (for tools without a registered function).
    pub fn execution(&self, event: &Event) -> Result<ToolTicket, Error> {
        self.tickets.execution(event)
    }
}

impl Stream for ToolStream {
    type Item = Result<Event, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }
}
