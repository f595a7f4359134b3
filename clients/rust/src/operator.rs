//! The operator client: the `/v1/operator/...` endpoints, open only to a token with the
//! `operator` grant (every subject's runs, one run with its steps, the live update feed,
//! pending approvals, jobs, usage totals, limits and the approval audit log); any other token gets
//! `FORBIDDEN`. Requests are checked before they are sent (`INVALID_OPERATOR_REQUEST`,
//! `INVALID_APPROVAL`), answers like every other answer (`INVALID_RESPONSE`).
use crate::builder::{sealed, Build, ClientBuilder};
use crate::error::{codes, Error};
use crate::generated::checks as schemas;
use crate::generated::operations::{self as ops, Operation};
use crate::sse::SseDecoder;
use crate::transport::{transport_error, ClientConfig, Transport};
use crate::types::*;
use crate::validate::{self, formats::is_lower_uuid};
use futures_core::Stream;
use serde::{de::DeserializeOwned, Serialize};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// An operator client of one host. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct AsyncOperatorClient {
    transport: Arc<Transport>,
}

impl sealed::Sealed for AsyncOperatorClient {}
impl Build for AsyncOperatorClient {
    fn build(config: ClientConfig) -> Result<Self, Error> {
        Ok(AsyncOperatorClient { transport: Arc::new(Transport::new(&config)?) })
    }
}

impl AsyncOperatorClient {
    pub fn new(url: &str, token: &str) -> Result<Self, Error> {
        Self::builder(url, token).build()
    }

    pub fn builder(url: &str, token: &str) -> ClientBuilder<Self> {
        ClientBuilder::new(url, token)
    }

    /// `POST v1/operator/runs`: the runs this replica is serving now and one page of finished
    /// runs, newest first, filtered by `state`, `subject`, `provider` and `search`; pass
    /// `next_before` as `before` for the next page.
    pub async fn runs(&self, request: &OperatorRunsRequest) -> Result<OperatorRunList, Error> {
        self.call(&ops::OPERATOR_LIST_RUNS, request).await
    }

    /// `GET v1/operator/runs/{id}`: one run, with its steps, tools, tokens and timing when this
    /// replica served it; the answer must be about that run.
    pub async fn run(&self, run_id: &str) -> Result<OperatorRunDetail, Error> {
        if !is_lower_uuid(run_id) {
            return Err(Error::driver(codes::INVALID_OPERATOR_REQUEST, "the run id must be a lowercase UUID"));
        }
        let answer = self.transport.get_answer(&ops::OPERATOR_READ_RUN.path.replace("{id}", run_id)).await?;
        let detail: OperatorRunDetail = validate::answer(&ops::OPERATOR_READ_RUN, answer, &())?;
        if detail.run.run_id != run_id {
            return Err(Error::driver(
                codes::INVALID_RESPONSE,
                format!("the host answered with run {} for run {run_id}", detail.run.run_id),
            ));
        }
        Ok(detail)
    }

    /// `GET v1/operator/updates`: the live update feed — a `snapshot`, then each change — until
    /// the host ends the subscription (call again for a new snapshot). Dropping the stream
    /// closes the connection. Each update is validated; one of a type this client does not
    /// know is passed on as it is.
    pub async fn updates(&self) -> Result<OperatorUpdates, Error> {
        let response = self.transport.get_stream(ops::OPERATOR_UPDATES.path, None).await?;
        let feed = Feed { response, decoder: SseDecoder::new(), frames: VecDeque::new(), done: false };
        let updates = futures_util::stream::unfold(feed, |mut feed| async move { feed.next().await.map(|item| (item, feed)) });
        Ok(OperatorUpdates { updates: Box::pin(updates) })
    }

    /// `POST v1/operator/approvals`: pending approvals of every subject, oldest first.
    pub async fn approvals(&self, request: &OperatorListRequest) -> Result<OperatorApprovalList, Error> {
        self.call(&ops::OPERATOR_LIST_APPROVALS, request).await
    }

    /// `POST v1/operator/approvals/decisions`: decides any subject's pending approval; the
    /// receipt must answer exactly this decision.
    pub async fn decide_approval(&self, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error> {
        validate::approval_decision(&ops::OPERATOR_DECIDE_APPROVAL, decision)?;
        let body = serde_json::to_vec(decision).map_err(transport_error)?;
        let answer = self.transport.post_json(ops::OPERATOR_DECIDE_APPROVAL.path, body).await?;
        Ok(validate::answer(&ops::OPERATOR_DECIDE_APPROVAL, answer, decision)?)
    }

    /// `POST v1/operator/jobs`: durable jobs of every subject, most recently updated first.
    pub async fn jobs(&self, request: &OperatorJobsRequest) -> Result<OperatorJobList, Error> {
        self.call(&ops::OPERATOR_LIST_JOBS, request).await
    }

    /// `POST v1/operator/usage`: usage totals, optionally grouped.
    pub async fn usage(&self, request: &OperatorUsageRequest) -> Result<OperatorUsage, Error> {
        self.call(&ops::OPERATOR_USAGE, request).await
    }

    /// `POST v1/operator/limits`: every configured scope's rate limits and budgets (limit,
    /// used, reserved, remaining, reset time), or one subject's.
    pub async fn limits(&self, request: &OperatorLimitsRequest) -> Result<OperatorLimits, Error> {
        self.call(&ops::OPERATOR_LIMITS, request).await
    }

    /// `POST v1/operator/audit`: one page of the approval audit log, newest first; pass
    /// `next_before` as `before` for the next page.
    pub async fn audit(&self, request: &OperatorAuditRequest) -> Result<OperatorAuditPage, Error> {
        self.call(&ops::OPERATOR_AUDIT, request).await
    }

    /// `GET v1/operator/runs/{id}/events`: an active run's recent, then live, events, ending
    /// with its terminal event, or early without one when the host dropped this watcher for
    /// falling behind (the run is never slowed). Dropping the tap closes the connection.
    pub async fn watch_run(&self, run_id: &str) -> Result<OperatorTap, Error> {
        if !is_lower_uuid(run_id) {
            return Err(Error::driver(codes::INVALID_OPERATOR_REQUEST, "the run id must be a lowercase UUID"));
        }
        let response = self.transport.get_stream(&ops::OPERATOR_WATCH_RUN.path.replace("{id}", run_id), None).await?;
        Ok(OperatorTap::start(response, Some(run_id.to_owned()), 0))
    }

    /// `GET v1/operator/jobs/{id}/stream`: any job's committed events after `after`, until its
    /// terminal event. Dropping the tap closes the connection; the job keeps running.
    pub async fn tail_job(&self, job_id: &str, after: u64) -> Result<OperatorTap, Error> {
        validate::request(&ops::READ_JOB, &JobIdentity { id: job_id.to_owned() })?;
        let path = ops::OPERATOR_STREAM_JOB.path.replace("{id}", job_id);
        let response = self.transport.get_stream(&path, (after > 0).then_some(after)).await?;
        Ok(OperatorTap::start(response, None, after))
    }

    async fn call<Q: Serialize, A: DeserializeOwned>(&self, op: &Operation, request: &Q) -> Result<A, Error> {
        validate::request(op, request)?;
        let body = serde_json::to_vec(request).map_err(transport_error)?;
        let answer = self.transport.post_json(op.path, body).await?;
        Ok(validate::answer(op, answer, request)?)
    }
}

/// An operator tap (a run watch or a job stream): the validated events of one run, in
/// rising sequence (a [`futures_core::Stream`]). It ends after the terminal event, when the
/// host closes the stream, or after the first error (`INVALID_RESPONSE` for an event that is
/// invalid, of another run or out of order).
pub struct OperatorTap {
    events: Pin<Box<dyn Stream<Item = Result<Event, Error>> + Send>>,
}

impl Stream for OperatorTap {
    type Item = Result<Event, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }
}

struct Tap {
    response: reqwest::Response,
    decoder: SseDecoder,
    frames: VecDeque<String>,
    run_id: Option<String>,
    last: u64,
    done: bool,
}

impl OperatorTap {
    fn start(response: reqwest::Response, run_id: Option<String>, after: u64) -> OperatorTap {
        let tap = Tap { response, decoder: SseDecoder::new(), frames: VecDeque::new(), run_id, last: after, done: false };
        let events = futures_util::stream::unfold(tap, |mut tap| async move { tap.next().await.map(|item| (item, tap)) });
        OperatorTap { events: Box::pin(events) }
    }
}

impl Tap {
    async fn next(&mut self) -> Option<Result<Event, Error>> {
        while !self.done {
            if let Some(frame) = self.frames.pop_front() {
                let accepted = self.accept(&frame);
                self.done = accepted.as_ref().map_or(true, Event::is_terminal);
                return Some(accepted);
            }
            let chunk = match self.response.chunk().await {
                Ok(Some(bytes)) => bytes,
                Ok(None) => break,
                Err(error) => {
                    self.done = true;
                    return Some(Err(transport_error(error)));
                }
            };
            let mut frames = Vec::new();
            if let Err(error) = self.decoder.feed(&chunk, &mut frames) {
                self.done = true;
                return Some(Err(error.into()));
            }
            self.frames.extend(frames);
        }
        None
    }

    fn accept(&mut self, frame: &str) -> Result<Event, Error> {
        let invalid = |why: String| Error::driver(codes::INVALID_RESPONSE, why);
        let value = validate::parse_json(frame.as_bytes())?;
        schemas::run_event(&value, "").map_err(|e| invalid(format!("an event is invalid: {e}")))?;
        let event = validate::typed_event(value).map_err(|e| invalid(format!("an event is invalid: {e}")))?;
        let run_id = self.run_id.get_or_insert_with(|| event.run_id.clone());
        if event.run_id != *run_id {
            return Err(invalid(format!("an event of run {} arrived on the stream of run {run_id}", event.run_id)));
        }
        if event.sequence <= self.last {
            return Err(invalid(format!("event sequence {} does not follow {}", event.sequence, self.last)));
        }
        self.last = event.sequence;
        Ok(event)
    }
}

/// The operator's live updates (a [`futures_core::Stream`]); it ends when the host ends the
/// subscription, or after the first error.
pub struct OperatorUpdates {
    updates: Pin<Box<dyn Stream<Item = Result<OperatorUpdate, Error>> + Send>>,
}

impl Stream for OperatorUpdates {
    type Item = Result<OperatorUpdate, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.updates.as_mut().poll_next(cx)
    }
}

struct Feed {
    response: reqwest::Response,
    decoder: SseDecoder,
    frames: VecDeque<String>,
    done: bool,
}

impl Feed {
    async fn next(&mut self) -> Option<Result<OperatorUpdate, Error>> {
        if self.done {
            return None;
        }
        let item = self.next_update().await;
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }

    async fn next_update(&mut self) -> Option<Result<OperatorUpdate, Error>> {
        loop {
            if let Some(frame) = self.frames.pop_front() {
                return Some(update(&frame));
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => {
                    let mut frames = Vec::new();
                    if let Err(error) = self.decoder.feed(&bytes, &mut frames) {
                        return Some(Err(error.into()));
                    }
                    self.frames.extend(frames);
                }
                Ok(None) => return self.decoder.finish().err().map(|error| Err(error.into())),
                Err(error) => return Some(Err(transport_error(error))),
            }
        }
    }
}

fn update(frame: &str) -> Result<OperatorUpdate, Error> {
    let value =
        validate::parse_json(frame.as_bytes()).map_err(|e| Error::driver(codes::INVALID_RESPONSE, format!("update: {}", e.message)))?;
    Ok(validate::answer(&ops::OPERATOR_UPDATES, value, &())?)
}
