//! `tail_job` and `follow_run`: a job's or any run's live committed events, resumed after dropped connections.
use crate::error::{codes, DriverError, Error};
use crate::generated::checks as schema;
use crate::generated::operations as ops;
use crate::sse::SseDecoder;
use crate::transport::{transport_error, Transport};
use crate::types::*;
use crate::validate;
use futures_core::Stream;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// How [`tail_job`](crate::AsyncAgenticClient::tail_job) and
/// [`follow_run`](crate::AsyncAgenticClient::follow_run) start and reconnect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailOptions {
    /// The last sequence the caller already has; the tail starts after it.
    pub after: u64,
    /// Connection attempts in a row that may fail without yielding an event before the
    /// tail gives up with `JOB_STREAM_LOST` (`RUN_STREAM_LOST` for a run; at least 1).
    pub max_attempts: u32,
    /// The wait before the first reconnection; it doubles after each further failure,
    /// up to `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for TailOptions {
    fn default() -> Self {
        TailOptions { after: 0, max_attempts: 5, initial_backoff: Duration::from_millis(200), max_backoff: Duration::from_secs(5) }
    }
}

/// The validated events of a job or a run, live, through reconnections (a
/// [`futures_core::Stream`]). It ends after the terminal event, or after the first error.
pub struct JobTail {
    events: Pin<Box<dyn Stream<Item = Result<Event, Error>> + Send>>,
}

impl Stream for JobTail {
    type Item = Result<Event, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }
}

struct Connection {
    response: reqwest::Response,
    decoder: SseDecoder,
    frames: VecDeque<String>,
    progressed: bool,
}

/// The live events of a run, as [`JobTail`] follows a job's (see
/// [`follow_run`](crate::AsyncAgenticClient::follow_run)).
pub type RunTail = JobTail;

/// What a tail follows: a job or a run, read first.
struct Followed {
    /// `"job"` or `"run"`: the rules' name for the record, and the messages'.
    what: &'static str,
    /// The stream rule set every event must pass (`jobEvent`, `runLogEvent`).
    rules: &'static str,
    /// The record read first, as the rules read it.
    record: serde_json::Value,
    /// The stream's path.
    path: String,
    /// The code the tail gives up with.
    lost: &'static str,
    /// A background run followed on a host that did not advertise `interactive-jobs`: it may
    /// not ask for approvals or application-tool results.
    refuses_interactive: bool,
}

struct Tail {
    transport: Arc<Transport>,
    followed: Followed,
    last: u64,
    options: TailOptions,
    connection: Option<Connection>,
    failures: u32,
    backoff: Duration,
    done: bool,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::driver(codes::INVALID_STREAM, message)
}

/// Whether a failed attempt may be retried: the connection broke, or the host said to
/// try again. Rule violations are final.
fn reconnectable(error: &Error) -> bool {
    match error {
        Error::Transport(_) => true,
        Error::Driver(e) => match e.code.as_str() {
            codes::INCOMPLETE_STREAM => true,
            codes::INVALID_STREAM | codes::INVALID_RESPONSE | codes::UNSUPPORTED_EVENT | codes::RESPONSE_TOO_LARGE => false,
            _ => e.retryable,
        },
    }
}

impl JobTail {
    pub(crate) fn start(transport: Arc<Transport>, job: JobInfo, options: TailOptions) -> Result<JobTail, Error> {
        if options.after > job.cursor {
            return Err(Error::driver(
                codes::INVALID_ARGUMENT,
                format!("after {} is beyond the job's cursor {}", options.after, job.cursor),
            ));
        }
        let finished = !matches!(job.state, JobState::Queued | JobState::Running) && options.after == job.cursor;
        let followed = Followed {
            what: "job",
            rules: "jobEvent",
            path: ops::STREAM_JOB.path.replace("{id}", &job.id),
            record: serde_json::to_value(&job).map_err(|e| Error::driver(codes::INVALID_RESPONSE, e.to_string()))?,
            lost: codes::JOB_STREAM_LOST,
            refuses_interactive: false,
        };
        Ok(Self::tail(transport, followed, options, finished))
    }

    /// `interactive_jobs`: the host advertises `interactive-jobs`, so a background run may ask
    /// for people on its follow stream (answered with the client's `approval` and `execution`).
    pub(crate) fn follow(transport: Arc<Transport>, run: RunInfo, options: TailOptions, interactive_jobs: bool) -> Result<RunTail, Error> {
        if options.after > run.cursor {
            return Err(Error::driver(
                codes::INVALID_RUN_CURSOR,
                format!("after {} is beyond the run's cursor {}", options.after, run.cursor),
            ));
        }
        let finished = !matches!(run.state, RunState::Queued | RunState::Running | RunState::Waiting) && options.after == run.cursor;
        let refuses_interactive = run.mode == RunMode::Background && !interactive_jobs;
        let followed = Followed {
            what: "run",
            rules: "runLogEvent",
            path: ops::STREAM_RUN.path.replace("{id}", &run.run_id),
            record: serde_json::to_value(&run).map_err(|e| Error::driver(codes::INVALID_RESPONSE, e.to_string()))?,
            lost: codes::RUN_STREAM_LOST,
            refuses_interactive,
        };
        Ok(Self::tail(transport, followed, options, finished))
    }

    fn tail(transport: Arc<Transport>, followed: Followed, options: TailOptions, finished: bool) -> JobTail {
        let tail = Tail {
            transport,
            last: options.after,
            backoff: options.initial_backoff,
            options: TailOptions { max_attempts: options.max_attempts.max(1), ..options },
            followed,
            connection: None,
            failures: 0,
            done: finished,
        };
        let events = futures_util::stream::unfold(tail, |mut tail| async move { tail.next().await.map(|item| (item, tail)) });
        JobTail { events: Box::pin(events) }
    }
}

impl Tail {
    async fn next(&mut self) -> Option<Result<Event, Error>> {
        if self.done {
            return None;
        }
        loop {
            let connection = match &mut self.connection {
                Some(connection) => connection,
                None => match self.connect().await {
                    Ok(connection) => self.connection.insert(connection),
                    Err(error) => match self.failed(error, false).await {
                        Some(error) => return Some(Err(error)),
                        None => continue,
                    },
                },
            };
            match next_frame(connection, self.followed.what).await {
                Ok((frame, id)) => {
                    let accepted = accept(&self.followed, self.last, &frame, id);
                    match &accepted {
                        Ok(event) => {
                            connection.progressed = true;
                            self.last = event.sequence;
                            self.done = event.is_terminal();
                        }
                        Err(_) => self.done = true,
                    }
                    if self.done {
                        self.connection = None;
                    }
                    return Some(accepted);
                }
                Err(error) => {
                    let progressed = connection.progressed;
                    self.connection = None;
                    if let Some(error) = self.failed(error, progressed).await {
                        return Some(Err(error));
                    }
                }
            }
        }
    }

    async fn connect(&self) -> Result<Connection, Error> {
        let response = self.transport.get_stream(&self.followed.path, Some(self.last)).await?;
        Ok(Connection { response, decoder: SseDecoder::with_ids(), frames: VecDeque::new(), progressed: false })
    }

    /// After a failed attempt: `Some(error)` ends the tail, `None` means reconnect (after
    /// the backoff).
    async fn failed(&mut self, error: Error, progressed: bool) -> Option<Error> {
        if !reconnectable(&error) {
            self.done = true;
            return Some(error);
        }
        if progressed {
            self.failures = 0;
            self.backoff = self.options.initial_backoff;
        } else {
            self.failures += 1;
            if self.failures >= self.options.max_attempts {
                self.done = true;
                return Some(Error::Driver(DriverError {
                    code: self.followed.lost.to_owned(),
                    message: format!(
                        "the {} stream failed {} times in a row after sequence {}: {error}",
                        self.followed.what, self.failures, self.last
                    ),
                    retryable: true,
                    outcome: None,
                    status: None,
                }));
            }
        }
        tokio::time::sleep(self.backoff).await;
        self.backoff = (self.backoff * 2).min(self.options.max_backoff.max(self.options.initial_backoff));
        None
    }
}

/// The next frame and its `id` field; a body that ends first is `INCOMPLETE_STREAM`.
async fn next_frame(connection: &mut Connection, what: &str) -> Result<(String, Option<String>), Error> {
    loop {
        if let Some(frame) = connection.frames.pop_front() {
            return Ok((frame, connection.decoder.next_id().flatten()));
        }
        match connection.response.chunk().await.map_err(transport_error)? {
            Some(bytes) => {
                let mut frames = Vec::new();
                connection.decoder.feed(&bytes, &mut frames)?;
                connection.frames.extend(frames);
            }
            None => {
                connection.decoder.finish()?;
                return Err(Error::driver(codes::INCOMPLETE_STREAM, format!("the {what} stream ended before the terminal event")));
            }
        }
    }
}

/// One frame of the stream. Every type must be known: a log is replayed as stored, so an
/// unknown event is refused even when it is marked optional.
fn accept(followed: &Followed, last: u64, frame: &str, id: Option<String>) -> Result<Event, Error> {
    let value = crate::validate::parse_json(frame.as_bytes()).map_err(|e| invalid(format!("event: {}", e.message)))?;
    schema::event_envelope(&value, "").map_err(|e| invalid(format!("event envelope: {e}")))?;
    let kind = value["type"].as_str().unwrap_or_default().to_owned();
    let Some(check) = schema::event_check(&kind) else {
        return Err(Error::driver(codes::UNSUPPORTED_EVENT, format!("event type {kind} is not a {} event", followed.what)));
    };
    check(&value, "").map_err(|e| invalid(format!("{kind} event: {e}")))?;
    if followed.refuses_interactive && matches!(kind.as_str(), "approval.requested" | "approval.resolved" | "tool.execution.requested") {
        return Err(Error::driver(
            codes::UNSUPPORTED_EVENT,
            format!("the host sent {kind} on a background run, but did not advertise interactive-jobs"),
        ));
    }
    validate::log_event(followed.rules, followed.what, followed.record.clone(), &value, last + 1)
        .map_err(|e| invalid(format!("{kind} event is inconsistent: {e}")))?;
    let event: Event = validate::typed_event(value).map_err(|e| invalid(format!("{kind} event: {e}")))?;
    if id.is_some_and(|id| id != event.sequence.to_string()) {
        return Err(invalid(format!("the frame id is not the event's sequence {}", event.sequence)));
    }
    Ok(event)
}
