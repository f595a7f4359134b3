//! The async client (tokio).
use crate::builder::{sealed, Build, ClientBuilder};
use crate::error::{codes, Error};
use crate::interactive::{approval_of, check_declared, execution_of, PendingApproval, PendingExecution, ToolFunctions, ToolStream};
use crate::sse::SseDecoder;
use crate::transport::{transport_error, ClientConfig, Transport};
use crate::types::*;
use crate::validate::{self, EventValidator};
use futures_core::Stream;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A client of one AgenticDriver host. Cheap to clone; clones share connections.
///
/// It never follows redirects, never retries, and has no deadline on runs (set
/// `idleTimeoutMs` on the request, or drop the future / stream to cancel).
#[derive(Clone)]
pub struct AsyncAgenticClient {
    transport: Arc<Transport>,
}

impl sealed::Sealed for AsyncAgenticClient {}
impl Build for AsyncAgenticClient {
    fn build(config: ClientConfig) -> Result<Self, Error> {
        Ok(AsyncAgenticClient { transport: Arc::new(Transport::new(&config)?) })
    }
}

fn request_body(request: &impl serde::Serialize) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(request).map_err(transport_error)
}

impl AsyncAgenticClient {
    /// A client for `url` (a base URL; endpoints resolve below its path) and `token`.
    pub fn new(url: &str, token: &str) -> Result<Self, Error> {
        Self::builder(url, token).build()
    }

    pub fn builder(url: &str, token: &str) -> ClientBuilder<Self> {
        ClientBuilder::new(url, token)
    }

    /// `GET v1/protocol`: the negotiated version and the host's features (10 s bound).
    pub async fn protocol(&self) -> Result<ProtocolInfo, Error> {
        let body = self.transport.get_json("v1/protocol").await?;
        Ok(validate::protocol_info(body)?)
    }

    /// `GET v1/providers`: the providers this token may use (10 s bound). `refresh`
    /// asks the host to probe again instead of answering from its discovery cache.
    pub async fn providers(&self, refresh: bool) -> Result<Vec<Provider>, Error> {
        let path = if refresh { "v1/providers?refresh=true" } else { "v1/providers" };
        let body = self.transport.get_json(path).await?;
        Ok(validate::providers(body)?)
    }

    /// Runs to completion and returns the result (a buffered JSON response). A failed or
    /// cancelled run is an [`Error::Driver`] with the host's code. Approvals and
    /// application tools need [`stream`](Self::stream).
    pub async fn run(&self, request: &RunRequest) -> Result<RunResult, Error> {
        if request.application_tools.as_ref().is_some_and(|t| !t.is_empty()) {
            return Err(Error::driver(codes::TOOL_STREAM_REQUIRED, "application tools need a streaming run"));
        }
        if request.approvals.is_some() {
            return Err(Error::driver(codes::APPROVAL_STREAM_REQUIRED, "interactive approvals need a streaming run"));
        }
        let body = self.transport.post_json("v1/runs", request_body(request)?).await?;
        Ok(validate::json_run_result(body, request)?)
    }

    /// Decides a pending approval (`approval.requested`); the receipt is checked
    /// against the decision. A malformed decision fails `INVALID_APPROVAL` before it is
    /// sent. Within a stream loop, [`approval`](Self::approval) is the one-call form.
    pub async fn decide_approval(&self, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error> {
        validate::approval_decision(decision)?;
        let body = self.transport.post_json("v1/approvals/decisions", request_body(decision)?).await?;
        Ok(validate::approval_resolution(body, decision)?)
    }

    /// Reports real progress on a dispatched application tool (resets the run's idle timer).
    /// A malformed identity fails `INVALID_TOOL_EXECUTION` before it is sent.
    pub async fn report_tool_progress(&self, identity: &ToolExecutionIdentity) -> Result<ToolExecutionReceipt, Error> {
        validate::tool_identity(identity)?;
        let body = self.transport.post_json("v1/tool-executions/progress", request_body(identity)?).await?;
        Ok(validate::tool_receipt(body, identity, ReceiptStatus::Progress)?)
    }

    /// Delivers the one result of a dispatched application tool. A malformed result (not
    /// exactly one of `output` and `error`, say) fails `INVALID_TOOL_EXECUTION` before it
    /// is sent. Within a stream loop, [`execution`](Self::execution) is the one-call form.
    pub async fn complete_tool(&self, result: &ToolExecutionResult) -> Result<ToolExecutionReceipt, Error> {
        validate::tool_result(result)?;
        let body = self.transport.post_json("v1/tool-executions/results", request_body(result)?).await?;
        let identity = ToolExecutionIdentity {
            execution_id: result.execution_id.clone(),
            run_id: result.run_id.clone(),
            call_id: result.call_id.clone(),
        };
        Ok(validate::tool_receipt(body, &identity, ReceiptStatus::Accepted)?)
    }

    /// Starts a run and returns its validated events. The stream ends after the first
    /// terminal event (`run.failed` / `run.cancelled` are yielded, not errors) or after
    /// the first error. Dropping it closes the connection, which cancels the run.
    pub async fn stream(&self, request: &RunRequest) -> Result<EventStream, Error> {
        let response = self.transport.post_stream("v1/runs", request_body(request)?).await?;
        let reader =
            Reader { response, decoder: SseDecoder::new(), validator: EventValidator::new(request.clone()), frames: VecDeque::new() };
        let events = futures_util::stream::unfold(Some(reader), |reader| async move {
            let mut reader = reader?;
            match reader.next_event().await {
                Ok(event) => {
                    let rest = if reader.validator.finished() { None } else { Some(reader) };
                    Some((Ok(event), rest))
                }
                Err(error) => Some((Err(error), None)),
            }
        });
        Ok(EventStream { events: Box::pin(events) })
    }

    /// [`stream`](Self::stream) that also runs `functions` for the execution requests of
    /// their tools (see [`ToolStream`]). Nothing else is ever executed; a function
    /// registered for a tool the request does not declare in `applicationTools` fails
    /// `INVALID_ARGUMENT` before anything is sent.
    pub async fn stream_with_tools(&self, request: &RunRequest, functions: ToolFunctions) -> Result<ToolStream, Error> {
        check_declared(request, functions.names())?;
        let events = self.stream(request).await?;
        Ok(ToolStream::new(self.clone(), events, functions))
    }

    /// An `approval.requested` event as a handle: `client.approval(&event)?.approve().await?`.
    /// The handle keeps its own copy of the request, so it answers exactly what the host
    /// asked. Any other event fails `INVALID_ARGUMENT`.
    pub fn approval(&self, event: &Event) -> Result<PendingApproval, Error> {
        approval_of(self, event)
    }

    /// A `tool.execution.requested` event as a single-use handle:
    /// `client.execution(&event)?.complete(output).await?`. Any other event fails
    /// `INVALID_ARGUMENT`.
    pub fn execution(&self, event: &Event) -> Result<PendingExecution, Error> {
        execution_of(self, event)
    }
}

struct Reader {
    response: reqwest::Response,
    decoder: SseDecoder,
    validator: EventValidator,
    frames: VecDeque<String>,
}

impl Reader {
    async fn next_event(&mut self) -> Result<Event, Error> {
        loop {
            if let Some(frame) = self.frames.pop_front() {
                match self.validator.accept(&frame)? {
                    Some(event) => return Ok(event),
                    None => continue,
                }
            }
            match self.response.chunk().await.map_err(transport_error)? {
                Some(bytes) => {
                    let mut frames = Vec::new();
                    self.decoder.feed(&bytes, &mut frames)?;
                    self.frames.extend(frames);
                }
                None => {
                    self.decoder.finish()?;
                    return Err(Error::driver(codes::INCOMPLETE_STREAM, "the stream ended before a terminal event"));
                }
            }
        }
    }
}

/// The validated events of one run (a [`futures_core::Stream`]). After a terminal event
/// or an error it yields nothing more and the connection is already closed.
pub struct EventStream {
    events: Pin<Box<dyn Stream<Item = Result<Event, Error>> + Send>>,
}

impl EventStream {
    /// Closes the connection (the host cancels the run if it was still going).
    pub fn close(self) {}
}

impl Stream for EventStream {
    type Item = Result<Event, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }
}
