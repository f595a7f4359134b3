//! The async client (tokio).
use crate::builder::{sealed, Build, ClientBuilder};
use crate::error::{codes, DriverError, Error};
use crate::generated::operations as ops;
use crate::interactive::{approval_of, check_declared, execution_of, PendingApproval, PendingExecution, ToolFunctions, ToolStream};
use crate::sse::SseDecoder;
use crate::tail::{JobTail, RunTail, TailOptions};
use crate::transport::{transport_error, ClientConfig, Transport};
use crate::types::*;
use crate::validate::{self, EventValidator};
use futures_core::Stream;
use futures_util::StreamExt;
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
        let body = self.transport.get_json(ops::GET_PROTOCOL.path).await?;
        Ok(validate::protocol_info(body)?)
    }

    /// `GET v1/providers`: the providers this token may use (10 s bound). `refresh`
    /// asks the host to probe again instead of answering from its discovery cache.
    pub async fn providers(&self, refresh: bool) -> Result<Vec<Provider>, Error> {
        let path = if refresh { format!("{}?refresh=true", ops::LIST_PROVIDERS.path) } else { ops::LIST_PROVIDERS.path.to_owned() };
        let body = self.transport.get_json(&path).await?;
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
        let body = self.transport.post_json(ops::RUN.path, request_body(request)?).await?;
        Ok(validate::answer(&ops::RUN, body, request)?)
    }

    /// Decides a pending approval (`approval.requested`); the receipt is checked
    /// against the decision. A malformed decision fails `INVALID_APPROVAL` before it is
    /// sent. Within a stream loop, [`approval`](Self::approval) is the one-call form.
    pub async fn decide_approval(&self, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error> {
        validate::approval_decision(&ops::DECIDE_APPROVAL, decision)?;
        let body = self.transport.post_json(ops::DECIDE_APPROVAL.path, request_body(decision)?).await?;
        Ok(validate::answer(&ops::DECIDE_APPROVAL, body, decision)?)
    }

    /// Reports real progress on a dispatched application tool (resets the run's idle timer).
    /// A malformed identity fails `INVALID_TOOL_EXECUTION` before it is sent.
    pub async fn report_tool_progress(&self, identity: &ToolExecutionIdentity) -> Result<ToolExecutionReceipt, Error> {
        validate::request(&ops::REPORT_TOOL_PROGRESS, identity)?;
        let body = self.transport.post_json(ops::REPORT_TOOL_PROGRESS.path, request_body(identity)?).await?;
        Ok(validate::answer(&ops::REPORT_TOOL_PROGRESS, body, identity)?)
    }

    /// Delivers the one result of a dispatched application tool. A malformed result (not
    /// exactly one of `output` and `error`, say) fails `INVALID_TOOL_EXECUTION` before it
    /// is sent. Within a stream loop, [`execution`](Self::execution) is the one-call form.
    pub async fn complete_tool(&self, result: &ToolExecutionResult) -> Result<ToolExecutionReceipt, Error> {
        validate::tool_result(result)?;
        let body = self.transport.post_json(ops::COMPLETE_TOOL.path, request_body(result)?).await?;
        Ok(validate::answer(&ops::COMPLETE_TOOL, body, result)?)
    }

    /// `POST v1/sessions/create`: a conversation session. The receipt must echo the
    /// request (provider, model, mode, instructions, history) at revision 0, ready. A
    /// malformed request fails `INVALID_SESSION` before it is sent.
    pub async fn create_session(&self, request: &SessionCreate) -> Result<SessionSnapshot, Error> {
        validate::request(&ops::CREATE_SESSION, request)?;
        let body = self.transport.post_json(ops::CREATE_SESSION.path, request_body(request)?).await?;
        Ok(validate::answer(&ops::CREATE_SESSION, body, request)?)
    }

    /// `POST v1/sessions/read`: the session and its visible history (retention is not extended).
    pub async fn read_session(&self, id: &str) -> Result<SessionSnapshot, Error> {
        let id = SessionIdentity { id: id.to_owned() };
        validate::request(&ops::READ_SESSION, &id)?;
        let body = self.transport.post_json(ops::READ_SESSION.path, request_body(&id)?).await?;
        Ok(validate::answer(&ops::READ_SESSION, body, &id)?)
    }

    /// `POST v1/sessions/list`: the subject's sessions on providers this token may use, most
    /// recently used first (at most `limit`, default 20), each checked.
    pub async fn list_sessions(&self, request: &SessionListRequest) -> Result<Vec<SessionInfo>, Error> {
        validate::request(&ops::LIST_SESSIONS, request)?;
        let body = self.transport.post_json(ops::LIST_SESSIONS.path, request_body(request)?).await?;
        Ok(validate::answer::<SessionList, _>(&ops::LIST_SESSIONS, body, request)?.sessions)
    }

    /// `POST v1/sessions/delete`; a turn running on the session ends `SESSION_DELETED`.
    pub async fn delete_session(&self, id: &str) -> Result<SessionDeleteResult, Error> {
        let id = SessionIdentity { id: id.to_owned() };
        validate::request(&ops::DELETE_SESSION, &id)?;
        let body = self.transport.post_json(ops::DELETE_SESSION.path, request_body(&id)?).await?;
        Ok(validate::answer(&ops::DELETE_SESSION, body, &id)?)
    }

    /// `POST v1/jobs/submit`: a durable job. The same key and request again return the
    /// same job, so a lost answer is recovered by submitting again. The answer must name
    /// the submitted provider and model. A malformed submission fails `INVALID_JOB`
    /// before it is sent.
    pub async fn submit_job(&self, submission: &JobSubmit) -> Result<JobInfo, Error> {
        validate::request(&ops::SUBMIT_JOB, submission)?;
        let body = self.transport.post_json(ops::SUBMIT_JOB.path, request_body(submission)?).await?;
        Ok(validate::answer(&ops::SUBMIT_JOB, body, submission)?)
    }

    /// `POST v1/jobs/read`: the job's current state.
    pub async fn read_job(&self, id: &str) -> Result<JobInfo, Error> {
        let id = JobIdentity { id: id.to_owned() };
        validate::request(&ops::READ_JOB, &id)?;
        let body = self.transport.post_json(ops::READ_JOB.path, request_body(&id)?).await?;
        Ok(validate::answer(&ops::READ_JOB, body, &id)?)
    }

    /// `POST v1/jobs/list`: the subject's jobs this token may read, optionally in one
    /// `state`, most recently updated first (at most `limit`, default 20), each checked.
    pub async fn list_jobs(&self, request: &JobListRequest) -> Result<Vec<JobInfo>, Error> {
        validate::request(&ops::LIST_JOBS, request)?;
        let body = self.transport.post_json(ops::LIST_JOBS.path, request_body(request)?).await?;
        Ok(validate::answer::<JobList, _>(&ops::LIST_JOBS, body, request)?.jobs)
    }

    /// `POST v1/jobs/cancel`: a queued job is cancelled at once, a running one gets
    /// `cancelRequested` and ends with its own terminal event, a finished one is unchanged.
    pub async fn cancel_job(&self, id: &str) -> Result<JobInfo, Error> {
        let id = JobIdentity { id: id.to_owned() };
        validate::request(&ops::CANCEL_JOB, &id)?;
        let body = self.transport.post_json(ops::CANCEL_JOB.path, request_body(&id)?).await?;
        Ok(validate::answer(&ops::CANCEL_JOB, body, &id)?)
    }

    /// `POST v1/jobs/events`: one page of committed events after `request.after`, checked
    /// as the continuation of events `1..=after` (the job's run, contiguous sequences,
    /// nothing beyond the job's cursor, a terminal event only last in a finished job and
    /// consistent with its state). `has_more` means more is committed now; continue with
    /// `after = next_cursor`.
    pub async fn job_events(&self, request: &JobEventsRequest) -> Result<JobEventPage, Error> {
        validate::request(&ops::JOB_EVENTS, request)?;
        let body = self.transport.post_json(ops::JOB_EVENTS.path, request_body(request)?).await?;
        Ok(validate::answer(&ops::JOB_EVENTS, body, request)?)
    }

    /// `POST v1/runs/read`: any run of this token's subject, attached or background — its
    /// state and cursor, and once finished its `result` or `error` and `usage`, checked
    /// against itself and the id asked for. A malformed id fails `INVALID_RUN_READ` before
    /// it is sent; another subject's run, or one whose retention ended, is `RUN_NOT_FOUND`.
    pub async fn read_run(&self, run_id: &str) -> Result<RunInfo, Error> {
        let request = RunReadRequest { run_id: run_id.to_owned() };
        validate::request(&ops::READ_RUN, &request)?;
        let body = self.transport.post_json(ops::READ_RUN.path, request_body(&request)?).await?;
        Ok(validate::answer(&ops::READ_RUN, body, &request)?)
    }

    /// `POST v1/runs/events`: one validated page of the run's committed events after
    /// `after` (at most `limit`, default 100); continue with `after = next_cursor` while `has_more`.
    pub async fn run_events(&self, request: &RunEventsRequest) -> Result<RunEventPage, Error> {
        validate::request(&ops::RUN_EVENTS, request)?;
        let body = self.transport.post_json(ops::RUN_EVENTS.path, request_body(request)?).await?;
        Ok(validate::answer(&ops::RUN_EVENTS, body, request)?)
    }

    /// `POST v1/retrieval/search`: the validated hits of one corpus. The answer must be the
    /// requested corpus with at most `limit` (default 8) unique chunks, each from a selected
    /// source and at or above `min_score`, and at most `max_context_bytes` (default 65,536)
    /// bytes of text, else `INVALID_RESPONSE`. A malformed request fails `INVALID_RETRIEVAL`
    /// before it is sent.
    pub async fn search_retrieval(&self, request: &RetrievalSearch) -> Result<RetrievalResult, Error> {
        validate::request(&ops::SEARCH_RETRIEVAL, request)?;
        let body = self.transport.post_json(ops::SEARCH_RETRIEVAL.path, request_body(request)?).await?;
        Ok(validate::answer(&ops::SEARCH_RETRIEVAL, body, request)?)
    }

    /// `POST v1/retrieval/index`: indexes a source revision's own chunks; the receipt must
    /// name the corpus, source and revision.
    pub async fn index_source(&self, request: &RetrievalIndexRequest) -> Result<RetrievalIndexReceipt, Error> {
        validate::request(&ops::INDEX_SOURCE, request)?;
        let body = self.transport.post_json(ops::INDEX_SOURCE.path, request_body(request)?).await?;
        Ok(validate::answer(&ops::INDEX_SOURCE, body, request)?)
    }

    /// `POST v1/retrieval/delete`: removes one source revision; the receipt must name it.
    pub async fn delete_source(&self, request: &RetrievalDeleteRequest) -> Result<RetrievalDeleteResult, Error> {
        validate::request(&ops::DELETE_SOURCE, request)?;
        let body = self.transport.post_json(ops::DELETE_SOURCE.path, request_body(request)?).await?;
        Ok(validate::answer(&ops::DELETE_SOURCE, body, request)?)
    }

    /// `POST v1/retrieval/ingest`: extracts, chunks and indexes one document. The receipt
    /// must name the corpus and the document's source and revision, and carry an ingestion
    /// manifest counting its chunks. A malformed request fails `INVALID_INGESTION` before
    /// it is sent.
    pub async fn ingest_document(&self, request: &IngestRequest) -> Result<IngestResult, Error> {
        validate::request(&ops::INGEST_DOCUMENT, request)?;
        let body = self.transport.post_json(ops::INGEST_DOCUMENT.path, request_body(request)?).await?;
        Ok(validate::answer(&ops::INGEST_DOCUMENT, body, request)?)
    }

    /// Follows a job's events live (`GET v1/jobs/{id}/stream`) from `options.after` to
    /// its terminal event. It reads the job first and checks every event against it (the
    /// job's run, contiguous sequences, each frame's SSE id equal to its sequence,
    /// run.started exactly at 1, no approval or application-tool events, no unknown
    /// types). A dropped connection is resumed by itself with `Last-Event-ID` set to the
    /// last sequence yielded, after a doubling backoff, so nothing is yielded twice or
    /// skipped; after `options.max_attempts` attempts in a row that yielded nothing the
    /// stream ends with `JOB_STREAM_LOST`. Rule violations and non-retryable host errors
    /// end it at once. Dropping the stream never cancels the job ([`cancel_job`](Self::cancel_job) does).
    pub async fn tail_job(&self, id: &str, options: &TailOptions) -> Result<JobTail, Error> {
        let job = self.read_job(id).await?;
        JobTail::start(Arc::clone(&self.transport), job, options.clone())
    }

    /// Follows any run's committed events live (`GET v1/runs/{id}/stream`), on any replica,
    /// from `options.after` to its terminal event — as [`tail_job`](Self::tail_job) does for
    /// a job: the run is read first, every event is checked against it, a dropped connection
    /// is resumed with `Last-Event-ID`, and after `options.max_attempts` attempts in a row
    /// that yielded nothing the stream ends with `RUN_STREAM_LOST`. Dropping the stream
    /// closes the connection; the run goes on (an attached run lives as long as the
    /// connection that started it).
    ///
    /// On a background run, when the host advertises `interactive-jobs` (read from
    /// [`protocol`](Self::protocol)), its `approval.requested` and `tool.execution.requested`
    /// are answered with [`approval`](Self::approval) and [`execution`](Self::execution)
    /// exactly as on a stream; without the feature such an event ends the stream with
    /// `UNSUPPORTED_EVENT`, so no handle is made.
    pub async fn follow_run(&self, run_id: &str, options: &TailOptions) -> Result<RunTail, Error> {
        let run = self.read_run(run_id).await?;
        let interactive_jobs = run.mode == RunMode::Background && self.protocol().await?.features.iter().any(|f| f == "interactive-jobs");
        JobTail::follow(Arc::clone(&self.transport), run, options.clone(), interactive_jobs)
    }

    /// A background run's `result()`: waits for any run of this token's subject to end and
    /// returns its result, or its error (as [`run`](Self::run) does). A finished run is
    /// answered from its record; a running one is followed from its cursor to its terminal
    /// event (`options.after` is ignored). It decides nothing itself: a run waiting for a
    /// person waits until a handle (or the console) answers.
    pub async fn wait_run(&self, run_id: &str, options: &TailOptions) -> Result<RunResult, Error> {
        let mut run = self.read_run(run_id).await?;
        if matches!(run.state, RunState::Queued | RunState::Running | RunState::Waiting) {
            let mut events = self.follow_run(run_id, &TailOptions { after: run.cursor, ..options.clone() }).await?;
            while let Some(event) = events.next().await {
                match event?.payload {
                    EventPayload::RunCompleted { result } => return Ok(*result),
                    EventPayload::RunFailed { error } | EventPayload::RunCancelled { error } => return Err(DriverError::from(error).into()),
                    _ => {}
                }
            }
            // A journal cut off without a terminal event: the record says how it ended.
            run = self.read_run(run_id).await?;
        }
        match (run.result, run.error) {
            (Some(result), _) => Ok(result),
            (None, Some(error)) => Err(DriverError::from(error).into()),
            (None, None) => {
                Err(Error::driver(codes::INCOMPLETE_STREAM, format!("the run ended {:?} without a result or an error", run.state)))
            }
        }
    }

    /// Starts a run and returns its validated events. The stream ends after the first
    /// terminal event (`run.failed` / `run.cancelled` are yielded, not errors) or after
    /// the first error. Dropping it closes the connection, which cancels the run.
    pub async fn stream(&self, request: &RunRequest) -> Result<EventStream, Error> {
        let response = self.transport.post_stream(ops::RUN.path, request_body(request)?).await?;
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
