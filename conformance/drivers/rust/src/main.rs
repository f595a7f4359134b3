//! The Rust driver of the cross-language conformance harness (conformance/CONTRACT.md):
//! every vector and live-host scenario, once with the async client and once with the
//! blocking one. A small binary crate of its own that uses `clients/rust` by path; run
//! through `conformance/drivers/rust/run`.
use agenticdriver::blocking::{self, AgenticClient};
use agenticdriver::*;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, Instant};

const GREETING: &str = "Hello 🌍";

struct Env {
    transport: String,
    reference: String,
    live: String,
    token: String,
    restricted: String,
    ca: Option<Vec<u8>>,
    untrusted: Option<String>,
    mismatch: Option<String>,
    fixtures: Value,
    versioning: Value,
    skip: Value,
    base_urls: Value,
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

fn read_json(path: &str) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))).unwrap_or_else(|e| panic!("{path}: {e}"))
}

impl Env {
    fn load() -> Self {
        Env {
            transport: var("AGENTICDRIVER_TEST_TRANSPORT"),
            reference: var("AGENTICDRIVER_TEST_REFERENCE_URL"),
            live: var("AGENTICDRIVER_TEST_URL"),
            token: var("AGENTICDRIVER_TEST_TOKEN"),
            restricted: var("AGENTICDRIVER_TEST_RESTRICTED_TOKEN"),
            ca: std::env::var("AGENTICDRIVER_TEST_CA_FILE").ok().map(|p| std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))),
            untrusted: std::env::var("AGENTICDRIVER_TEST_UNTRUSTED_URL").ok(),
            mismatch: std::env::var("AGENTICDRIVER_TEST_MISMATCH_URL").ok(),
            fixtures: read_json(&var("AGENTICDRIVER_TEST_FIXTURES")),
            versioning: read_json(&var("AGENTICDRIVER_TEST_VERSIONING")),
            skip: read_json(&var("AGENTICDRIVER_TEST_SKIP")),
            base_urls: read_json(&var("AGENTICDRIVER_TEST_BASE_URLS")),
        }
    }
}

/// Sees each event as it arrives, with the one-call answers of its stream; returning
/// true stops reading (closing the connection).
type Visit<'a> = &'a mut dyn FnMut(&Event, &dyn Answers) -> bool;

/// The one-call answers of the client whose stream is being read (`client.approval(&event)`,
/// `client.execution(&event)`), in either client style.
trait Answers {
    fn decide(&self, event: &Event, action: ApprovalAction) -> Result<ApprovalResolution, Error>;
    fn progress(&self, event: &Event) -> Result<ToolExecutionReceipt, Error>;
    fn complete(&self, event: &Event, output: Value) -> Result<ToolExecutionReceipt, Error>;
}

/// An application function for the stream's function runner: it reports progress, then
/// answers with `output(arguments)`.
#[derive(Clone, Copy)]
struct Function {
    tool: &'static str,
    output: fn(&JsonObject) -> Value,
}

/// One client style. Each call builds a fresh client, trusting the test CA when given;
/// `Sync` so that a scenario can make two calls at once.
trait Mode: Sync {
    fn name(&self) -> &'static str;
    fn protocol(&self, url: &str, token: &str) -> Result<ProtocolInfo, Error>;
    fn providers(&self, url: &str, token: &str) -> Result<Vec<Provider>, Error>;
    fn run(&self, url: &str, token: &str, request: &RunRequest) -> Result<RunResult, Error>;
    /// Makes a client (sending nothing): the base-URL rules.
    fn make(&self, url: &str, token: &str) -> Result<(), Error>;
    /// The events read until a terminal event or until `visit` stops the stream, with
    /// `function` (if any) run by the client's function runner.
    fn stream(&self, url: &str, token: &str, request: &RunRequest, function: Option<Function>, visit: Visit) -> Result<Vec<Event>, Error>;
    fn decide(&self, url: &str, token: &str, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error>;
    fn progress(&self, url: &str, token: &str, identity: &ToolExecutionIdentity) -> Result<ToolExecutionReceipt, Error>;
    fn complete(&self, url: &str, token: &str, result: &ToolExecutionResult) -> Result<ToolExecutionReceipt, Error>;
    /// A session or job call; what it returns was validated by the client.
    fn call(&self, url: &str, token: &str, operation: &Operation) -> Result<Reply, Error>;
    /// The events of a job's tail after `after`; stopping after `limit` events (dropping
    /// the tail) closes the connection.
    fn tail(&self, url: &str, token: &str, id: &JobIdentity, after: u64, limit: Option<usize>) -> Result<Vec<Event>, Error>;
    /// The events of a run followed after `after`, as `tail` reads a job's.
    fn follow(&self, url: &str, token: &str, run_id: &str, after: u64, limit: Option<usize>) -> Result<Vec<Event>, Error>;
    /// A run followed from its start, `visit` seeing each event with the one-call answers
    /// of the following client (a background run's handles).
    fn follow_answering(&self, url: &str, token: &str, run_id: &str, visit: Visit) -> Result<Vec<Event>, Error>;
    /// The client's wait on a run: its result, or its error.
    fn wait_run(&self, url: &str, token: &str, run_id: &str) -> Result<RunResult, Error>;
}

/// What a session or job call returned.
#[derive(Debug)]
enum Reply {
    Session(Box<SessionSnapshot>),
    Deleted(SessionDeleteResult),
    Job(Box<JobInfo>),
    /// A page of job events (validated by the client; no scenario reads it).
    Page,
    /// A run read back.
    Run(Box<RunInfo>),
    /// A page of a run's events.
    RunPage(Box<RunEventPage>),
    /// An ingestion receipt.
    Ingested(Box<IngestResult>),
    /// A search answer.
    Found(Box<RetrievalResult>),
}

/// Reads events from a job tail until its end or `limit` events.
fn take_events(tail: impl Iterator<Item = Result<Event, Error>>, limit: Option<usize>) -> Result<Vec<Event>, Error> {
    let mut events = Vec::new();
    for event in tail {
        events.push(event?);
        if limit.is_some_and(|limit| events.len() >= limit) {
            break;
        }
    }
    Ok(events)
}

/// The document every `ingest` case sends (CONTRACT.md); the peer answers the case's receipt.
fn ingest_request() -> IngestRequest {
    IngestRequest {
        corpus: "library".into(),
        document: IngestDocument::Text {
            source: ContextSource { id: "paper".into(), revision: "r1".into(), ..Default::default() },
            media_type: "text/markdown".into(),
            text: "# Paper\n\nA short paper.\n".into(),
        },
        chunking: None,
        idle_timeout_ms: None,
    }
}

/// The session and job operations of the vectors, with the case's request data.
enum Operation {
    SessionCreate(SessionCreate),
    SessionRead(SessionIdentity),
    SessionDelete(SessionIdentity),
    JobSubmit(Box<JobSubmit>),
    JobRead(JobIdentity),
    JobCancel(JobIdentity),
    JobEvents(JobEventsRequest),
    RunRead(String),
    RunEvents(RunEventsRequest),
    Ingest(Box<IngestRequest>),
    Search(Box<RetrievalSearch>),
}

impl Operation {
    fn of(name: &str, case: &Value) -> Result<Option<Operation>, String> {
        Ok(Some(match name {
            "session-create" => Operation::SessionCreate(fixture(case, "sessionCreate")?),
            "session-read" => Operation::SessionRead(fixture(case, "sessionIdentity")?),
            "session-delete" => Operation::SessionDelete(fixture(case, "sessionIdentity")?),
            "job-submit" => Operation::JobSubmit(Box::new(fixture(case, "jobSubmit")?)),
            "job-read" => Operation::JobRead(fixture(case, "jobIdentity")?),
            "job-cancel" => Operation::JobCancel(fixture(case, "jobIdentity")?),
            "job-events" => Operation::JobEvents(fixture(case, "jobEvents")?),
            "run-read" => Operation::RunRead(fixture::<RunReadRequest>(case, "runIdentity")?.run_id),
            "run-events" => Operation::RunEvents(fixture(case, "runEvents")?),
            "ingest" => Operation::Ingest(Box::new(ingest_request())),
            _ => return Ok(None),
        }))
    }
}

/// A stream being read: its events and its answers.
trait Reading: Answers {
    fn next_event(&mut self) -> Option<Result<Event, Error>>;
    fn answers(&self) -> &dyn Answers;
}

/// Reads events until a terminal one or until `visit` says stop.
fn collect(stream: &mut dyn Reading, visit: Visit) -> Result<Vec<Event>, Error> {
    let mut events = Vec::new();
    while let Some(event) = stream.next_event() {
        let event = event?;
        let stop = visit(&event, stream.answers());
        events.push(event);
        if stop {
            break;
        }
    }
    Ok(events)
}

struct Async {
    runtime: tokio::runtime::Runtime,
    ca: Option<Vec<u8>>,
}

impl Async {
    fn client(&self, url: &str, token: &str) -> Result<AsyncAgenticClient, Error> {
        let builder = AsyncAgenticClient::builder(url, token);
        match &self.ca {
            Some(pem) => builder.with_ca_pem(pem).build(),
            None => builder.build(),
        }
    }
}

impl Mode for Async {
    fn name(&self) -> &'static str {
        "async"
    }
    fn protocol(&self, url: &str, token: &str) -> Result<ProtocolInfo, Error> {
        self.runtime.block_on(async { self.client(url, token)?.protocol().await })
    }
    fn providers(&self, url: &str, token: &str) -> Result<Vec<Provider>, Error> {
        self.runtime.block_on(async { self.client(url, token)?.providers(false).await })
    }
    fn run(&self, url: &str, token: &str, request: &RunRequest) -> Result<RunResult, Error> {
        self.runtime.block_on(async { self.client(url, token)?.run(request).await })
    }
    fn make(&self, url: &str, token: &str) -> Result<(), Error> {
        self.client(url, token).map(drop)
    }
    fn stream(&self, url: &str, token: &str, request: &RunRequest, function: Option<Function>, visit: Visit) -> Result<Vec<Event>, Error> {
        let mut functions = ToolFunctions::new();
        if let Some(Function { tool, output }) = function {
            functions = functions.register(tool, move |arguments, context| async move {
                context.progress().await?;
                Ok::<_, Error>(output(&arguments))
            });
        }
        let client = self.client(url, token)?;
        let stream = self.runtime.block_on(client.stream_with_tools(request, functions))?;
        // One block_on per event, so `visit` may make its own calls between reads.
        collect(&mut AsyncReading { runtime: &self.runtime, client, stream }, visit)
    }
    fn follow_answering(&self, url: &str, token: &str, run_id: &str, visit: Visit) -> Result<Vec<Event>, Error> {
        let client = self.client(url, token)?;
        let stream = self.runtime.block_on(client.follow_run(run_id, &TailOptions::default()))?;
        collect(&mut AsyncReading { runtime: &self.runtime, client, stream }, visit)
    }
    fn wait_run(&self, url: &str, token: &str, run_id: &str) -> Result<RunResult, Error> {
        self.runtime.block_on(async { self.client(url, token)?.wait_run(run_id, &TailOptions::default()).await })
    }
    fn decide(&self, url: &str, token: &str, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error> {
        self.runtime.block_on(async { self.client(url, token)?.decide_approval(decision).await })
    }
    fn progress(&self, url: &str, token: &str, identity: &ToolExecutionIdentity) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(async { self.client(url, token)?.report_tool_progress(identity).await })
    }
    fn complete(&self, url: &str, token: &str, result: &ToolExecutionResult) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(async { self.client(url, token)?.complete_tool(result).await })
    }
    fn call(&self, url: &str, token: &str, operation: &Operation) -> Result<Reply, Error> {
        self.runtime.block_on(async {
            let client = self.client(url, token)?;
            match operation {
                Operation::SessionCreate(request) => client.create_session(request).await.map(|s| Reply::Session(Box::new(s))),
                Operation::SessionRead(id) => client.read_session(&id.id).await.map(|s| Reply::Session(Box::new(s))),
                Operation::SessionDelete(id) => client.delete_session(&id.id).await.map(Reply::Deleted),
                Operation::JobSubmit(submission) => client.submit_job(submission).await.map(|j| Reply::Job(Box::new(j))),
                Operation::JobRead(id) => client.read_job(&id.id).await.map(|j| Reply::Job(Box::new(j))),
                Operation::JobCancel(id) => client.cancel_job(&id.id).await.map(|j| Reply::Job(Box::new(j))),
                Operation::JobEvents(request) => client.job_events(request).await.map(|_| Reply::Page),
                Operation::RunRead(run_id) => client.read_run(run_id).await.map(|r| Reply::Run(Box::new(r))),
                Operation::RunEvents(request) => client.run_events(request).await.map(|p| Reply::RunPage(Box::new(p))),
                Operation::Ingest(request) => client.ingest_document(request).await.map(|r| Reply::Ingested(Box::new(r))),
                Operation::Search(request) => client.search_retrieval(request).await.map(|r| Reply::Found(Box::new(r))),
            }
        })
    }
    fn tail(&self, url: &str, token: &str, id: &JobIdentity, after: u64, limit: Option<usize>) -> Result<Vec<Event>, Error> {
        let client = self.client(url, token)?;
        let mut tail = self.runtime.block_on(client.tail_job(&id.id, &TailOptions { after, ..TailOptions::default() }))?;
        // One block_on per event; dropping the tail closes its connection.
        take_events(std::iter::from_fn(|| self.runtime.block_on(tail.next())), limit)
    }
    fn follow(&self, url: &str, token: &str, run_id: &str, after: u64, limit: Option<usize>) -> Result<Vec<Event>, Error> {
        let client = self.client(url, token)?;
        let mut tail = self.runtime.block_on(client.follow_run(run_id, &TailOptions { after, ..TailOptions::default() }))?;
        take_events(std::iter::from_fn(|| self.runtime.block_on(tail.next())), limit)
    }
}

/// A stream being read by the async client: a run's (`ToolStream`) or a followed run's (`RunTail`).
struct AsyncReading<'r, S> {
    runtime: &'r tokio::runtime::Runtime,
    client: AsyncAgenticClient,
    stream: S,
}

impl<S> Answers for AsyncReading<'_, S> {
    fn decide(&self, event: &Event, action: ApprovalAction) -> Result<ApprovalResolution, Error> {
        self.runtime.block_on(self.client.approval(event)?.decide(action))
    }
    fn progress(&self, event: &Event) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(self.client.execution(event)?.progress())
    }
    fn complete(&self, event: &Event, output: Value) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(self.client.execution(event)?.complete(output))
    }
}

impl<S: futures_util::Stream<Item = Result<Event, Error>> + Unpin> Reading for AsyncReading<'_, S> {
    fn next_event(&mut self) -> Option<Result<Event, Error>> {
        self.runtime.block_on(self.stream.next())
    }
    fn answers(&self) -> &dyn Answers {
        self
    }
}

/// Events being read by the blocking client: a run's (`ToolIter`) or a followed run's (`JobTailIter`).
struct BlockingReading<I> {
    client: AgenticClient,
    events: I,
}

impl<I> Answers for BlockingReading<I> {
    fn decide(&self, event: &Event, action: ApprovalAction) -> Result<ApprovalResolution, Error> {
        self.client.approval(event)?.decide(action)
    }
    fn progress(&self, event: &Event) -> Result<ToolExecutionReceipt, Error> {
        self.client.execution(event)?.progress()
    }
    fn complete(&self, event: &Event, output: Value) -> Result<ToolExecutionReceipt, Error> {
        self.client.execution(event)?.complete(output)
    }
}

impl<I: Iterator<Item = Result<Event, Error>>> Reading for BlockingReading<I> {
    fn next_event(&mut self) -> Option<Result<Event, Error>> {
        self.events.next()
    }
    fn answers(&self) -> &dyn Answers {
        self
    }
}

struct Blocking {
    ca: Option<Vec<u8>>,
}

impl Blocking {
    fn client(&self, url: &str, token: &str) -> Result<AgenticClient, Error> {
        let builder = AgenticClient::builder(url, token);
        match &self.ca {
            Some(pem) => builder.with_ca_pem(pem).build(),
            None => builder.build(),
        }
    }
}

impl Mode for Blocking {
    fn name(&self) -> &'static str {
        "blocking"
    }
    fn protocol(&self, url: &str, token: &str) -> Result<ProtocolInfo, Error> {
        self.client(url, token)?.protocol()
    }
    fn providers(&self, url: &str, token: &str) -> Result<Vec<Provider>, Error> {
        self.client(url, token)?.providers(false)
    }
    fn run(&self, url: &str, token: &str, request: &RunRequest) -> Result<RunResult, Error> {
        self.client(url, token)?.run(request)
    }
    fn make(&self, url: &str, token: &str) -> Result<(), Error> {
        self.client(url, token).map(drop)
    }
    fn stream(&self, url: &str, token: &str, request: &RunRequest, function: Option<Function>, visit: Visit) -> Result<Vec<Event>, Error> {
        let mut functions = blocking::ToolFunctions::new();
        if let Some(Function { tool, output }) = function {
            functions = functions.register(tool, move |arguments, context| {
                context.progress()?;
                Ok::<_, Error>(output(&arguments))
            });
        }
        let client = self.client(url, token)?;
        let events = client.stream_with_tools(request, functions)?;
        collect(&mut BlockingReading { client, events }, visit)
    }
    fn follow_answering(&self, url: &str, token: &str, run_id: &str, visit: Visit) -> Result<Vec<Event>, Error> {
        let client = self.client(url, token)?;
        let events = client.follow_run(run_id, &TailOptions::default())?;
        collect(&mut BlockingReading { client, events }, visit)
    }
    fn wait_run(&self, url: &str, token: &str, run_id: &str) -> Result<RunResult, Error> {
        self.client(url, token)?.wait_run(run_id, &TailOptions::default())
    }
    fn decide(&self, url: &str, token: &str, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error> {
        self.client(url, token)?.decide_approval(decision)
    }
    fn progress(&self, url: &str, token: &str, identity: &ToolExecutionIdentity) -> Result<ToolExecutionReceipt, Error> {
        self.client(url, token)?.report_tool_progress(identity)
    }
    fn complete(&self, url: &str, token: &str, result: &ToolExecutionResult) -> Result<ToolExecutionReceipt, Error> {
        self.client(url, token)?.complete_tool(result)
    }
    fn call(&self, url: &str, token: &str, operation: &Operation) -> Result<Reply, Error> {
        let client = self.client(url, token)?;
        match operation {
            Operation::SessionCreate(request) => client.create_session(request).map(|s| Reply::Session(Box::new(s))),
            Operation::SessionRead(id) => client.read_session(&id.id).map(|s| Reply::Session(Box::new(s))),
            Operation::SessionDelete(id) => client.delete_session(&id.id).map(Reply::Deleted),
            Operation::JobSubmit(submission) => client.submit_job(submission).map(|j| Reply::Job(Box::new(j))),
            Operation::JobRead(id) => client.read_job(&id.id).map(|j| Reply::Job(Box::new(j))),
            Operation::JobCancel(id) => client.cancel_job(&id.id).map(|j| Reply::Job(Box::new(j))),
            Operation::JobEvents(request) => client.job_events(request).map(|_| Reply::Page),
            Operation::RunRead(run_id) => client.read_run(run_id).map(|r| Reply::Run(Box::new(r))),
            Operation::RunEvents(request) => client.run_events(request).map(|p| Reply::RunPage(Box::new(p))),
            Operation::Ingest(request) => client.ingest_document(request).map(|r| Reply::Ingested(Box::new(r))),
            Operation::Search(request) => client.search_retrieval(request).map(|r| Reply::Found(Box::new(r))),
        }
    }
    fn tail(&self, url: &str, token: &str, id: &JobIdentity, after: u64, limit: Option<usize>) -> Result<Vec<Event>, Error> {
        let client = self.client(url, token)?;
        take_events(client.tail_job(&id.id, &TailOptions { after, ..TailOptions::default() })?, limit)
    }
    fn follow(&self, url: &str, token: &str, run_id: &str, after: u64, limit: Option<usize>) -> Result<Vec<Event>, Error> {
        let client = self.client(url, token)?;
        take_events(client.follow_run(run_id, &TailOptions { after, ..TailOptions::default() })?, limit)
    }
}

#[derive(Default)]
struct Report {
    passed: u32,
    failed: u32,
    skipped: u32,
    failures: Vec<Value>,
}

impl Report {
    fn record(&mut self, id: &str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => self.passed += 1,
            Err(detail) => {
                self.failed += 1;
                self.failures.push(json!({ "id": id, "detail": detail }));
            }
        }
    }
}

fn describe(error: &Error) -> String {
    format!("{error}")
}

/// A stream's outcome: the failure of a failed/cancelled terminal is an error too.
fn stream_outcome(events: Result<Vec<Event>, Error>) -> Result<Vec<Event>, Error> {
    let events = events?;
    match events.last().map(|e| &e.payload) {
        Some(EventPayload::RunFailed { error } | EventPayload::RunCancelled { error }) => Err(Error::Driver(error.clone().into())),
        _ => Ok(events),
    }
}

fn expect(outcome: Result<(), Error>, case: &Value) -> Result<(), String> {
    let expected = case.get("expectedError").and_then(Value::as_str);
    let transport = case.get("expectTransportError").and_then(Value::as_bool) == Some(true);
    match (outcome, expected) {
        (Err(error), Some(code)) if error.code() == Some(code) => match case.get("retryable").and_then(Value::as_bool) {
            Some(retryable) if retryable != error.retryable() => Err(format!("retryable should be {retryable}: {}", describe(&error))),
            _ => Ok(()),
        },
        (Err(error), Some(code)) => Err(format!("expected {code}, got {}", describe(&error))),
        (Ok(()), Some(code)) => Err(format!("expected {code}, got success")),
        (Err(_), None) if transport => Ok(()),
        (Ok(()), None) if transport => Err("expected a transport failure, got success".into()),
        (Err(error), None) => Err(format!("expected success, got {}", describe(&error))),
        (Ok(()), None) => Ok(()),
    }
}

fn case_request(case: &Value) -> Result<RunRequest, String> {
    let mut request = Map::new();
    request.insert("provider".into(), json!("mock"));
    request.insert("model".into(), json!("demo"));
    request.insert("input".into(), json!("Hello"));
    for key in ["approvals", "session", "applicationTools", "tools", "retrieval"] {
        if let Some(value) = case.get(key) {
            request.insert(key.into(), value.clone());
        }
    }
    serde_json::from_value(Value::Object(request)).map_err(|e| format!("case request does not fit RunRequest: {e}"))
}

fn fixture<T: serde::de::DeserializeOwned>(case: &Value, key: &str) -> Result<T, String> {
    serde_json::from_value(case[key].clone()).map_err(|e| format!("case {key} does not fit its type: {e}"))
}

fn completed_text(events: &[Event]) -> Result<(), Error> {
    match events.last().map(|e| &e.payload) {
        Some(EventPayload::RunCompleted { result }) if result.text == GREETING => Ok(()),
        other => Err(Error::Transport(format!("expected run.completed with {GREETING:?}, got {other:?}").into())),
    }
}

fn vector_case(mode: &dyn Mode, env: &Env, case: &Value) -> Result<(), String> {
    let id = case["id"].as_str().unwrap_or_default();
    let url = format!("{}/fixtures/{id}/", env.reference);
    let outcome = match case.get("operation").and_then(Value::as_str) {
        Some("providers") => mode.providers(&url, &env.token).map(drop),
        Some("protocol") => mode.protocol(&url, &env.token).map(drop),
        Some("approval") => {
            let decision: ApprovalDecision = fixture(case, "decision")?;
            mode.decide(&url, &env.token, &decision).map(drop)
        }
        Some("tool-progress") => mode.progress(&url, &env.token, &fixture(case, "toolIdentity")?).map(drop),
        Some("tool-result") => mode.complete(&url, &env.token, &fixture(case, "toolResult")?).map(drop),
        Some(other) => match Operation::of(other, case)? {
            Some(operation) => mode.call(&url, &env.token, &operation).map(drop),
            None => return Err(format!("operation {other} is not implemented by the rust driver")),
        },
        None => {
            let request = case_request(case)?;
            if case.get("cancel").and_then(Value::as_bool) == Some(true) {
                let events = mode.stream(&url, &env.token, &request, None, &mut |e, _| e.kind() == "text.delta");
                return match events {
                    Ok(events) if events.last().is_some_and(|e| e.kind() == "text.delta") => Ok(()),
                    Ok(events) => Err(format!("no text.delta to cancel after: {:?}", events.iter().map(Event::kind).collect::<Vec<_>>())),
                    Err(error) => Err(describe(&error)),
                };
            }
            stream_outcome(mode.stream(&url, &env.token, &request, None, &mut |_, _| false)).and_then(|events| completed_text(&events))
        }
    };
    expect(outcome, case)
}

fn versioning_case(mode: &dyn Mode, env: &Env, case: &Value) -> Result<(), String> {
    let id = case["id"].as_str().unwrap_or_default();
    let url = format!("{}/versioning/{id}/", env.reference);
    let request = RunRequest::new("mock", "demo", "Hello");
    let outcome = stream_outcome(mode.stream(&url, &env.token, &request, None, &mut |_, _| false));
    if let (Ok(events), Some(expected)) = (&outcome, case.get("expectedTypes")) {
        let delivered: Vec<&str> = events.iter().map(Event::kind).collect();
        if json!(delivered) != *expected {
            return Err(format!("delivered {delivered:?}, expected {expected}"));
        }
    }
    expect(outcome.map(drop), case)
}

fn skipped(env: &Env, case: &Value) -> bool {
    let listed = |group: &str, key: Option<&str>| key.is_some_and(|k| env.skip[group].get(k).is_some());
    listed("operations", case.get("operation").and_then(Value::as_str)) || listed("cases", case["id"].as_str())
}

fn mock_script(actions: Value) -> String {
    json!({ "mockScript": { "steps": [{ "actions": actions }] } }).to_string()
}

fn want(condition: bool, detail: impl FnOnce() -> String) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(detail())
    }
}

fn code_is(outcome: Result<impl std::fmt::Debug, Error>, code: &str) -> Result<(), String> {
    match outcome {
        Err(error) if error.code() == Some(code) => Ok(()),
        Err(error) => Err(format!("expected {code}, got {}", describe(&error))),
        Ok(value) => Err(format!("expected {code}, got {value:?}")),
    }
}

/// `cancelled` runs of the live host, read through the peer.
fn live_cancelled(env: &Env) -> Result<u64, String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let mut builder = reqwest::Client::builder().no_proxy();
        if let Some(pem) = &env.ca {
            builder = builder.add_root_certificate(reqwest::Certificate::from_pem(pem).map_err(|e| e.to_string())?);
        }
        let response = builder
            .build()
            .map_err(|e| e.to_string())?
            .get(format!("{}/live-metrics", env.reference))
            .bearer_auth(&env.token)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let bytes = response.bytes().await.map_err(|e| e.to_string())?;
        let body: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
        body["cancelled"].as_u64().ok_or_else(|| format!("live-metrics without cancelled: {body}"))
    })
}

fn live_scenarios(mode: &dyn Mode, env: &Env, report: &mut Report) {
    let live = env.live.as_str();
    let token = env.token.as_str();
    let hello = RunRequest::new("mock", "demo", "Hello");
    let scripted =
        |actions: Value, idle: Option<u64>| RunRequest { idle_timeout_ms: idle, ..RunRequest::new("mock", "demo", mock_script(actions)) };

    report.record(
        "live:protocol",
        mode.protocol(live, token).map_err(|e| describe(&e)).and_then(|info| {
            let has = |f: &str| info.features.iter().any(|x| x == f);
            want(
                info.version == "1.0" && info.supported_versions.iter().any(|v| v == "1.0") && has("json-results") && has("event-stream"),
                || format!("{info:?}"),
            )
        }),
    );
    report.record(
        "live:providers",
        (|| {
            let main = mode.providers(live, token).map_err(|e| describe(&e))?;
            want(main.iter().any(|p| p.id == "mock" && p.capabilities.tools), || format!("main token sees {main:?}"))?;
            let restricted = mode.providers(live, &env.restricted).map_err(|e| describe(&e))?;
            want(restricted.is_empty(), || format!("restricted token sees {restricted:?}"))
        })(),
    );
    report.record(
        "live:run",
        mode.run(live, token, &hello).map_err(|e| describe(&e)).and_then(|r| want(r.text == "Hello", || format!("text {:?}", r.text))),
    );
    report.record(
        "live:stream",
        stream_outcome(mode.stream(live, token, &hello, None, &mut |_, _| false)).map_err(|e| describe(&e)).and_then(|events| {
            let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
            let ordered = events.iter().enumerate().all(|(i, e)| e.sequence == i as u64 + 1);
            want(kinds.first() == Some(&"run.started") && kinds.last() == Some(&"run.completed") && ordered, || format!("events {kinds:?}"))
        }),
    );
    report.record("live:unauthorized", code_is(mode.run(live, "wrong-token-for-the-conformance-run", &hello), "UNAUTHORIZED"));
    report.record(
        "live:forbidden",
        code_is(mode.run(live, &env.restricted, &hello), "FORBIDDEN")
            .and_then(|_| code_is(mode.run(live, token, &RunRequest { tools: Some(vec!["nope".into()]), ..hello.clone() }), "FORBIDDEN")),
    );
    report.record(
        "live:quiet",
        mode.run(live, token, &scripted(json!([{ "stallMs": 80 }, { "text": "quiet" }]), None))
            .map_err(|e| describe(&e))
            .and_then(|r| want(r.text == "quiet", || format!("text {:?}", r.text))),
    );
    report.record("live:idle-timeout", code_is(mode.run(live, token, &scripted(json!([{ "hang": true }]), Some(30))), "IDLE_TIMEOUT"));
    report.record(
        "live:progress",
        mode.run(live, token, &scripted(json!([{ "progress": 16, "everyMs": 20 }, { "text": "done" }]), Some(150)))
            .map(drop)
            .map_err(|e| describe(&e)),
    );
    report.record(
        "live:cancel",
        (|| {
            let before = live_cancelled(env)?;
            let events = mode
                .stream(live, token, &scripted(json!([{ "hang": true }]), None), None, &mut |e, _| e.kind() == "run.started")
                .map_err(|e| describe(&e))?;
            want(events.len() == 1, || format!("events {:?}", events.iter().map(Event::kind).collect::<Vec<_>>()))?;
            let deadline = Instant::now() + Duration::from_secs(5);
            while live_cancelled(env)? <= before {
                if Instant::now() > deadline {
                    return Err("the live host did not cancel the run within 5 s of the close".into());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(())
        })(),
    );
    for (name, action, expires) in [
        ("live:approval-approve", Some(ApprovalAction::Approve), None),
        ("live:approval-deny", Some(ApprovalAction::Deny), None),
        ("live:approval-cancel", Some(ApprovalAction::Cancel), None),
        ("live:approval-expire", None, Some(20)),
    ] {
        report.record(name, approval_scenario(mode, env, action, expires));
    }
    report.record("live:background-approval", background_approval_scenario(mode, env));
    report.record("live:application-tool", application_tool_scenario(mode, env, false));
    report.record("live:application-tool-approved", application_tool_scenario(mode, env, true));
    report.record("live:idempotency", idempotency_scenario(mode, env));
    report.record("live:job-tail", job_tail_scenario(mode, env));
    report.record("live:run-read-back", run_read_back_scenario(mode, env));
    report.record("live:run-follow", run_follow_scenario(mode, env));
    report.record("live:session", session_scenario(mode, env));
    report.record("live:retrieval", retrieval_scenario(mode, env));
    for (name, url) in [("live:tls-untrusted", &env.untrusted), ("live:tls-mismatch", &env.mismatch)] {
        if let Some(url) = url {
            report.record(
                name,
                match mode.protocol(url, token) {
                    Err(Error::Transport(_)) => Ok(()),
                    other => Err(format!("expected a TLS handshake failure, got {other:?}")),
                },
            );
        }
    }
}

fn tool_then_echo(tool: &str, arguments: Value) -> String {
    json!({ "mockScript": { "steps": [
        { "actions": [{ "toolCall": { "name": tool, "arguments": arguments } }] },
        { "actions": [{ "echoToolResults": true }] },
    ]}})
    .to_string()
}

fn interactive(expires_after_ms: Option<u32>) -> Option<ApprovalOptions> {
    Some(ApprovalOptions { mode: ApprovalMode::Interactive, idle_policy: IdlePolicy::Pause, expires_after_ms })
}

fn terminal(events: &[Event]) -> Option<&EventPayload> {
    events.last().map(|e| &e.payload)
}

fn completed_with(events: &[Event], expected: Value) -> Result<(), String> {
    match terminal(events) {
        Some(EventPayload::RunCompleted { result }) if serde_json::from_str::<Value>(&result.text).ok() == Some(expected.clone()) => Ok(()),
        other => Err(format!("expected run.completed with text {expected}, got {other:?}")),
    }
}

fn failed_with(events: &[Event], kind: &str, code: &str) -> Result<(), String> {
    match terminal(events) {
        Some(EventPayload::RunFailed { error }) if kind == "run.failed" && error.code == code => Ok(()),
        Some(EventPayload::RunCancelled { error }) if kind == "run.cancelled" && error.code == code => Ok(()),
        other => Err(format!("expected {kind} {code}, got {other:?}")),
    }
}

fn approval_scenario(mode: &dyn Mode, env: &Env, action: Option<ApprovalAction>, expires: Option<u32>) -> Result<(), String> {
    let request = RunRequest {
        tools: Some(vec!["guarded".into()]),
        approvals: interactive(expires),
        ..RunRequest::new("mock", "demo", tool_then_echo("guarded", json!({ "text": "hi" })))
    };
    let mut problems = Vec::new();
    let mut requested = None;
    let events = mode
        .stream(&env.live, &env.token, &request, None, &mut |event, answers| {
            match (&event.payload, action) {
                (EventPayload::ApprovalRequested { .. }, Some(action)) => {
                    requested = Some(event.clone());
                    match answers.decide(event, action) {
                        Ok(receipt) if receipt.outcome == action.outcome() => {}
                        other => problems.push(format!("decision receipt: {other:?}")),
                    }
                }
                // A decided approval is consumed: answering it again is refused.
                (EventPayload::ApprovalResolved { .. }, Some(action)) => {
                    let again = requested.as_ref().map(|requested| answers.decide(requested, action));
                    problems.extend(again.map(|again| code_is(again, "APPROVAL_NOT_FOUND")).and_then(Result::err));
                }
                _ => {}
            }
            false
        })
        .map_err(|e| describe(&e))?;
    problems.first().map_or(Ok(()), |p| Err(p.clone()))?;
    let outcome = events.iter().find_map(|e| match &e.payload {
        EventPayload::ApprovalResolved { resolution } => Some(resolution.outcome),
        _ => None,
    });
    let expected = action.map_or(ApprovalOutcome::Expired, ApprovalAction::outcome);
    want(outcome == Some(expected), || format!("approval.resolved outcome {outcome:?}, expected {expected:?}"))?;
    let tool_completed = events.iter().any(|e| e.kind() == "tool.completed");
    want(tool_completed == (action == Some(ApprovalAction::Approve)), || format!("tool.completed seen: {tool_completed}"))?;
    match action {
        Some(ApprovalAction::Approve) => completed_with(&events, json!([{ "approved": true, "arguments": { "text": "hi" } }])),
        Some(ApprovalAction::Deny) => failed_with(&events, "run.failed", "APPROVAL_DENIED"),
        Some(ApprovalAction::Cancel) => failed_with(&events, "run.cancelled", "CANCELLED"),
        None => failed_with(&events, "run.failed", "APPROVAL_EXPIRED"),
    }
}

/// A job that waits for approval is followed, approved through the handle made from the
/// followed event, then waited for.
fn background_approval_scenario(mode: &dyn Mode, env: &Env) -> Result<(), String> {
    let (live, token) = (env.live.as_str(), env.token.as_str());
    let request = RunRequest {
        tools: Some(vec!["guarded".into()]),
        approvals: interactive(None),
        ..RunRequest::new("mock", "demo", tool_then_echo("guarded", json!({ "text": "hi" })))
    };
    let job = job_of(mode.call(live, token, &Operation::JobSubmit(Box::new(JobSubmit { key: fresh_key(), request }))))?;
    let mut receipts = Vec::new();
    let events = mode
        .follow_answering(live, token, &job.run_id, &mut |event, answers| {
            if let EventPayload::ApprovalRequested { .. } = event.payload {
                receipts.push(answers.decide(event, ApprovalAction::Approve).map(|r| r.outcome).map_err(|e| describe(&e)));
            }
            false
        })
        .map_err(|e| describe(&e))?;
    want(matches!(receipts.as_slice(), [Ok(ApprovalOutcome::Approved)]), || format!("receipts {receipts:?}"))?;
    let sequences: Vec<u64> = events.iter().map(|e| e.sequence).collect();
    want(sequences.iter().enumerate().all(|(i, &s)| s == i as u64 + 1), || format!("sequences {sequences:?}"))?;
    let resolved = events.iter().find_map(|e| match &e.payload {
        EventPayload::ApprovalResolved { resolution } => Some(resolution.outcome),
        _ => None,
    });
    want(resolved == Some(ApprovalOutcome::Approved), || format!("approval.resolved outcome {resolved:?}"))?;
    want(events.iter().any(|e| e.kind() == "tool.completed"), || "no tool.completed".into())?;
    let expected = json!([{ "approved": true, "arguments": { "text": "hi" } }]);
    completed_with(&events, expected.clone())?;
    let result = mode.wait_run(live, token, &job.run_id).map_err(|e| format!("wait_run: {}", describe(&e)))?;
    want(result.run_id == job.run_id && serde_json::from_str::<Value>(&result.text).ok() == Some(expected), || {
        format!("wait_run: {result:?}")
    })?;
    let read = run_of(mode.call(live, token, &Operation::RunRead(job.run_id.clone())))?;
    want(read.mode == RunMode::Background && read.state == RunState::Completed && read.cursor == events.len() as u64, || {
        format!("read_run: {:?} {:?} at cursor {}", read.mode, read.state, read.cursor)
    })
}

/// The application function of the live scenarios.
const LOOKUP: Function = Function { tool: "application_lookup", output: |_| json!({ "answer": 42 }) };

fn application_tool_scenario(mode: &dyn Mode, env: &Env, requires_approval: bool) -> Result<(), String> {
    let tool = ApplicationToolDefinition {
        name: LOOKUP.tool.into(),
        description: "Look something up".into(),
        input_schema: json!({ "type": "object", "properties": { "query": { "type": "string" } }, "required": ["query"] })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        output_schema: json!({ "type": "object" }).as_object().cloned(),
        requires_approval: requires_approval.then_some(true),
    };
    let request = RunRequest {
        application_tools: Some(vec![tool]),
        tools: Some(vec![LOOKUP.tool.into()]),
        approvals: if requires_approval { interactive(None) } else { None },
        ..RunRequest::new("mock", "demo", tool_then_echo(LOOKUP.tool, json!({ "query": "x" })))
    };
    let mut problems = Vec::new();
    let mut executions = Vec::new();
    let events = mode
        .stream(&env.live, &env.token, &request, Some(LOOKUP), &mut |event, answers| {
            match &event.payload {
                EventPayload::ApprovalRequested { .. } => {
                    problems.extend(answers.decide(event, ApprovalAction::Approve).err().map(|e| format!("approve: {e}")))
                }
                EventPayload::ToolExecutionRequested { .. } => executions.push(event.clone()),
                // The function's result was accepted: its ticket is spent.
                EventPayload::ToolCompleted { .. } => {
                    for execution in &executions {
                        problems.extend(code_is(answers.progress(execution), "TOOL_EXECUTION_NOT_FOUND").err());
                        problems.extend(code_is(answers.complete(execution, json!({ "answer": 0 })), "TOOL_EXECUTION_NOT_FOUND").err());
                    }
                }
                _ => {}
            }
            false
        })
        .map_err(|e| describe(&e))?;
    problems.first().map_or(Ok(()), |p| Err(p.clone()))?;
    want(executions.len() == 1, || format!("{} executions requested", executions.len()))?;
    completed_with(&events, json!([{ "answer": 42 }]))
}

/// A key no earlier mode, transport or harness run used, so each run of the idempotency
/// scenario starts fresh: two values of std's randomly seeded hasher.
fn fresh_key() -> String {
    let random = || RandomState::new().hash_one(std::time::SystemTime::now());
    format!("conformance-{:016x}{:016x}", random(), random())
}

/// The typed error `code` with the given `retryable` flag.
fn error_is(outcome: Result<impl std::fmt::Debug, Error>, code: &str, retryable: bool) -> Result<(), String> {
    match outcome {
        Err(error) if error.code() == Some(code) && error.retryable() == retryable => Ok(()),
        Err(error) => {
            Err(format!("expected {code} with retryable {retryable}, got {} (retryable {})", describe(&error), error.retryable()))
        }
        Ok(value) => Err(format!("expected {code}, got {value:?}")),
    }
}

/// The same key and request replay the recorded run (JSON and SSE), a different request under
/// the key conflicts, and a duplicate while the first still runs is refused as in progress.
fn idempotency_scenario(mode: &dyn Mode, env: &Env) -> Result<(), String> {
    let (live, token) = (env.live.as_str(), env.token.as_str());
    let request = RunRequest { idempotency_key: Some(fresh_key()), ..RunRequest::new("mock", "demo", "Hello") };
    let first = mode.run(live, token, &request).map_err(|e| describe(&e))?;
    let again = mode.run(live, token, &request).map_err(|e| format!("the repeat: {}", describe(&e)))?;
    want(first.text == "Hello" && again.text == "Hello", || format!("texts {:?}, {:?}", first.text, again.text))?;
    want(again.run_id == first.run_id, || format!("the repeat has runId {}, the first {}", again.run_id, first.run_id))?;
    let events = mode.stream(live, token, &request, None, &mut |_, _| false).map_err(|e| format!("streamed replay: {}", describe(&e)))?;
    let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
    want(kinds.first() == Some(&"run.started"), || format!("streamed replay: events {kinds:?}"))?;
    want(events.iter().enumerate().all(|(i, e)| e.sequence == i as u64 + 1 && e.run_id == first.run_id), || {
        "streamed replay: runId or sequence differs".into()
    })?;
    match terminal(&events) {
        Some(EventPayload::RunCompleted { result }) if result.text == "Hello" => {}
        other => return Err(format!("streamed replay: expected run.completed with text Hello, got {other:?}")),
    }
    let other = RunRequest { input: "Other".into(), ..request.clone() };
    error_is(mode.run(live, token, &other), "IDEMPOTENCY_CONFLICT", false)
        .map_err(|e| format!("a different request under the key: {e}"))?;

    let slow = RunRequest {
        idempotency_key: Some(fresh_key()),
        ..RunRequest::new("mock", "demo", mock_script(json!([{ "stallMs": 400 }, { "text": "late" }])))
    };
    let (busy, late) = std::thread::scope(|scope| {
        let running = scope.spawn(|| mode.run(live, token, &slow));
        std::thread::sleep(Duration::from_millis(100));
        let busy = mode.run(live, token, &slow);
        (busy, running.join())
    });
    error_is(busy, "OPERATION_IN_PROGRESS", true).map_err(|e| format!("a duplicate while running: {e}"))?;
    let late = late.map_err(|_| "the first run's thread panicked".to_string())?.map_err(|e| format!("the first run: {}", describe(&e)))?;
    want(late.text == "late", || format!("the first run's text {:?}", late.text))?;
    let retried = mode.run(live, token, &slow).map_err(|e| format!("the retry: {}", describe(&e)))?;
    want(retried.run_id == late.run_id && retried.text == "late", || {
        format!("the retry got {} {:?}, the first {}", retried.run_id, retried.text, late.run_id)
    })
}

/// The session snapshot of a reply, or what came instead.
fn session_of(reply: Result<Reply, Error>) -> Result<SessionSnapshot, String> {
    match reply.map_err(|e| describe(&e))? {
        Reply::Session(snapshot) => Ok(*snapshot),
        other => Err(format!("expected a session, got {other:?}")),
    }
}

/// The job of a reply, or what came instead.
fn job_of(reply: Result<Reply, Error>) -> Result<JobInfo, String> {
    match reply.map_err(|e| describe(&e))? {
        Reply::Job(job) => Ok(*job),
        other => Err(format!("expected a job, got {other:?}")),
    }
}

/// A job submitted by key is tailed for three events, the connection is dropped, and a
/// second tail from the last sequence delivers the rest exactly once.
fn job_tail_scenario(mode: &dyn Mode, env: &Env) -> Result<(), String> {
    let (live, token) = (env.live.as_str(), env.token.as_str());
    let script = mock_script(json!([{ "text": "one " }, { "stallMs": 150 }, { "text": "two " }, { "stallMs": 150 }, { "text": "three" }]));
    let submission = JobSubmit { key: fresh_key(), request: RunRequest::new("mock", "demo", script) };
    let job = job_of(mode.call(live, token, &Operation::JobSubmit(Box::new(submission.clone()))))?;
    let id = JobIdentity { id: job.id.clone() };
    let first = mode.tail(live, token, &id, 0, Some(3)).map_err(|e| format!("the first tail: {}", describe(&e)))?;
    want(first.len() == 3, || format!("the first tail delivered {} events", first.len()))?;
    let rest = mode.tail(live, token, &id, first[2].sequence, None).map_err(|e| format!("the second tail: {}", describe(&e)))?;
    let events: Vec<Event> = first.into_iter().chain(rest).collect();
    let sequences: Vec<u64> = events.iter().map(|e| e.sequence).collect();
    want(sequences.iter().enumerate().all(|(i, &s)| s == i as u64 + 1), || format!("sequences {sequences:?}"))?;
    match terminal(&events) {
        Some(EventPayload::RunCompleted { result }) if result.text == "one two three" => {}
        other => return Err(format!("expected run.completed with text \"one two three\", got {other:?}")),
    }
    let read = job_of(mode.call(live, token, &Operation::JobRead(id.clone())))?;
    want(read.state == JobState::Completed && read.cursor == events.len() as u64, || {
        format!("read_job: {:?} at cursor {}, {} events tailed", read.state, read.cursor, events.len())
    })?;
    let again = job_of(mode.call(live, token, &Operation::JobSubmit(Box::new(submission))))?;
    want(again.id == job.id, || format!("the same key and request again got job {}, the first {}", again.id, job.id))
}

fn run_of(reply: Result<Reply, Error>) -> Result<RunInfo, String> {
    match reply.map_err(|e| describe(&e))? {
        Reply::Run(run) => Ok(*run),
        other => Err(format!("expected a run, got {other:?}")),
    }
}

/// An attached run is read back by its run id and its events paged; another subject's
/// token gets RUN_NOT_FOUND.
fn run_read_back_scenario(mode: &dyn Mode, env: &Env) -> Result<(), String> {
    let (live, token) = (env.live.as_str(), env.token.as_str());
    let result = mode.run(live, token, &RunRequest::new("mock", "demo", "Hello")).map_err(|e| format!("the run: {}", describe(&e)))?;
    let read = run_of(mode.call(live, token, &Operation::RunRead(result.run_id.clone())))?;
    want(read.mode == RunMode::Attached && read.state == RunState::Completed, || format!("read_run: {:?} {:?}", read.mode, read.state))?;
    want(read.result.as_ref().is_some_and(|r| r.text == "Hello" && r.run_id == result.run_id), || {
        format!("read_run result {:?}", read.result)
    })?;
    let request = RunEventsRequest { run_id: result.run_id.clone(), after: 0, limit: None };
    let page = match mode.call(live, token, &Operation::RunEvents(request)).map_err(|e| describe(&e))? {
        Reply::RunPage(page) => *page,
        other => return Err(format!("expected a page, got {other:?}")),
    };
    let sequences: Vec<u64> = page.events.iter().map(|e| e.sequence).collect();
    want(sequences.len() as u64 == read.cursor && sequences.iter().enumerate().all(|(i, &s)| s == i as u64 + 1), || {
        format!("run_events: sequences {sequences:?}, cursor {}", read.cursor)
    })?;
    match terminal(&page.events) {
        Some(EventPayload::RunCompleted { result }) if result.text == "Hello" && !page.has_more => {}
        other => return Err(format!("run_events: expected run.completed with text \"Hello\" at the end, got {other:?}")),
    }
    code_is(mode.call(live, &env.restricted, &Operation::RunRead(result.run_id)), "RUN_NOT_FOUND")
        .map_err(|e| format!("another subject: {e}"))
}

/// A background run is followed by its run id for three events, the connection is dropped,
/// and a second follow from the last sequence delivers the rest exactly once.
fn run_follow_scenario(mode: &dyn Mode, env: &Env) -> Result<(), String> {
    let (live, token) = (env.live.as_str(), env.token.as_str());
    let script = mock_script(json!([{ "text": "one " }, { "stallMs": 150 }, { "text": "two " }, { "stallMs": 150 }, { "text": "three" }]));
    let submission = JobSubmit { key: fresh_key(), request: RunRequest::new("mock", "demo", script) };
    let job = job_of(mode.call(live, token, &Operation::JobSubmit(Box::new(submission))))?;
    let first = mode.follow(live, token, &job.run_id, 0, Some(3)).map_err(|e| format!("the first follow: {}", describe(&e)))?;
    want(first.len() == 3, || format!("the first follow delivered {} events", first.len()))?;
    let rest =
        mode.follow(live, token, &job.run_id, first[2].sequence, None).map_err(|e| format!("the second follow: {}", describe(&e)))?;
    let events: Vec<Event> = first.into_iter().chain(rest).collect();
    let sequences: Vec<u64> = events.iter().map(|e| e.sequence).collect();
    want(sequences.iter().enumerate().all(|(i, &s)| s == i as u64 + 1), || format!("sequences {sequences:?}"))?;
    match terminal(&events) {
        Some(EventPayload::RunCompleted { result }) if result.text == "one two three" => {}
        other => return Err(format!("expected run.completed with text \"one two three\", got {other:?}")),
    }
    let read = run_of(mode.call(live, token, &Operation::RunRead(job.run_id.clone())))?;
    want(read.mode == RunMode::Background && read.job_id.as_deref() == Some(job.id.as_str()), || {
        format!("read_run: {:?}, job {:?}", read.mode, read.job_id)
    })?;
    want(read.state == RunState::Completed && read.cursor == events.len() as u64, || {
        format!("read_run: {:?} at cursor {}, {} events followed", read.state, read.cursor, events.len())
    })
}

/// A run at revision 0 advances the session to 1, the stale revision conflicts, the
/// history holds both messages, and a deleted session is not found.
fn session_scenario(mode: &dyn Mode, env: &Env) -> Result<(), String> {
    let (live, token) = (env.live.as_str(), env.token.as_str());
    let create =
        SessionCreate { provider: "mock".into(), model: "demo".into(), mode: SessionMode::History, history: None, instructions: None };
    let created = session_of(mode.call(live, token, &Operation::SessionCreate(create)))?;
    want(created.session.revision == 0, || format!("created at revision {}", created.session.revision))?;
    let id = SessionIdentity { id: created.session.id.clone() };
    let request =
        RunRequest { session: Some(SessionBinding { id: id.id.clone(), revision: 0 }), ..RunRequest::new("mock", "demo", "Hello") };
    let result = mode.run(live, token, &request).map_err(|e| format!("the run: {}", describe(&e)))?;
    want(result.text == "Hello" && result.session.as_ref().map(|s| s.revision) == Some(1), || {
        format!("the run: text {:?}, session {:?}", result.text, result.session)
    })?;
    code_is(mode.run(live, token, &request), "SESSION_REVISION_CONFLICT").map_err(|e| format!("revision 0 again: {e}"))?;
    let read = session_of(mode.call(live, token, &Operation::SessionRead(id.clone())))?;
    want(read.session.revision == 1 && read.history.len() == 2, || {
        format!("read_session: revision {}, {} messages", read.session.revision, read.history.len())
    })?;
    match mode.call(live, token, &Operation::SessionDelete(id.clone())).map_err(|e| describe(&e))? {
        Reply::Deleted(receipt) if receipt.deleted && receipt.id == id.id => {}
        other => return Err(format!("delete_session: {other:?}")),
    }
    code_is(mode.call(live, token, &Operation::SessionRead(id)), "SESSION_NOT_FOUND")
        .map_err(|e| format!("reading the deleted session: {e}"))
}

/// The retrieval scenario's Markdown document: the same in every driver, mode and
/// transport (a repeated ingest is `unchanged`).
fn retrieval_document() -> IngestRequest {
    IngestRequest {
        corpus: "default".into(),
        document: IngestDocument::Text {
            source: ContextSource { id: "conformance-lighthouse".into(), revision: "r1".into(), ..Default::default() },
            media_type: "text/markdown".into(),
            text: "# Lighthouse keeping\n\nThe lamp is lit at dusk and trimmed every four hours.\n\n## Fog\n\nIn fog the keeper sounds the horn every thirty seconds.\n"
                .into(),
        },
        chunking: None,
        idle_timeout_ms: None,
    }
}

/// Ingest a Markdown document, search it, run grounded on it, and check the run's citations.
fn retrieval_scenario(mode: &dyn Mode, env: &Env) -> Result<(), String> {
    let (live, token) = (env.live.as_str(), env.token.as_str());
    let receipt = match mode.call(live, token, &Operation::Ingest(Box::new(retrieval_document()))).map_err(|e| describe(&e))? {
        Reply::Ingested(receipt) => receipt,
        other => return Err(format!("ingest_document: {other:?}")),
    };
    want(receipt.ingestion.format == "markdown" && receipt.chunks >= 1, || format!("ingest receipt {receipt:?}"))?;
    let scope = RetrievalOptions {
        corpus: "default".into(),
        query: Some("horn".into()),
        source_ids: Some(vec!["conformance-lighthouse".into()]),
        ..Default::default()
    };
    let search =
        RetrievalSearch { corpus: scope.corpus.clone(), query: "horn".into(), source_ids: scope.source_ids.clone(), ..Default::default() };
    let found = match mode.call(live, token, &Operation::Search(Box::new(search))).map_err(|e| describe(&e))? {
        Reply::Found(found) => found,
        other => return Err(format!("search_retrieval: {other:?}")),
    };
    want(found.hits.iter().any(|hit| hit.text.contains("horn")), || format!("search found {:?}", found.hits))?;
    // A vector index as 1.0 defines it (what installed clients require), ranked as the additive field says.
    let index = &found.index;
    want(index.metric == "cosine" && index.provider_id == "builtin" && index.ranking.as_deref() == Some("bm25"), || {
        format!("search index {index:?}")
    })?;
    let request = RunRequest { retrieval: Some(scope), ..RunRequest::new("mock", "demo", "When is the horn sounded?") };
    let result = mode.run(live, token, &request).map_err(|e| format!("the grounded run: {}", describe(&e)))?;
    let hits: Vec<String> = result.retrieval.iter().flat_map(|r| r.hits.iter().map(|hit| hit.chunk_id.clone())).collect();
    want(!hits.is_empty(), || "the run retrieved nothing".into())?;
    let cited: Vec<String> = check_citations(&result).map_err(|e| format!("check_citations: {e:?}"))?.into_iter().map(|s| s.id).collect();
    want(cited == hits, || format!("the answer cites {cited:?}, the hits are {hits:?}"))
}

fn run_mode(mode: &dyn Mode, env: &Env) -> Report {
    let mut report = Report::default();
    for case in env.fixtures["cases"].as_array().into_iter().flatten() {
        if skipped(env, case) {
            report.skipped += 1;
        } else {
            report.record(case["id"].as_str().unwrap_or("?"), vector_case(mode, env, case));
        }
    }
    for case in env.versioning["cases"].as_array().into_iter().flatten() {
        report.record(&format!("versioning:{}", case["id"].as_str().unwrap_or("?")), versioning_case(mode, env, case));
    }
    let token = env.base_urls["token"].as_str().unwrap_or("");
    for case in env.base_urls["cases"].as_array().into_iter().flatten() {
        let (url, expected) = (case["url"].as_str().unwrap_or(""), case["expectedError"].as_str());
        let outcome = match (mode.make(url, token), expected) {
            (Ok(()), None) => Ok(()),
            (Err(e), Some(code)) if e.code() == Some(code) => Ok(()),
            (got, _) => Err(format!("{url}: expected {expected:?}, got {got:?}")),
        };
        report.record(&format!("base-url:{}", case["id"].as_str().unwrap_or("?")), outcome);
    }
    live_scenarios(mode, env, &mut report);
    report
}

fn main() {
    let env = Env::load();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a tokio runtime");
    let modes: [&dyn Mode; 2] = [&Async { runtime, ca: env.ca.clone() }, &Blocking { ca: env.ca.clone() }];
    let mut failed = false;
    for mode in modes {
        let report = run_mode(mode, &env);
        failed |= report.failed > 0;
        let line = json!({ "conformance": {
            "language": "rust", "mode": mode.name(), "transport": env.transport,
            "passed": report.passed, "failed": report.failed, "skipped": report.skipped, "failures": report.failures,
        }});
        println!("{line}");
    }
    std::process::exit(i32::from(failed));
}
