//! The wire-compatibility test of the published `agenticdriver` 0.1.0 crate: every call it
//! has, made by its blocking and its async client, against a live host of this repository
//! (compat/run.ts starts the host, over HTTP and verified HTTPS, and runs this binary).
//!
//! Prints one JSON line per call, `{"compat":{"client","call","ok","detail"}}`, and exits
//! non-zero when any call failed or was not reached.
use agenticdriver::blocking::AgenticClient;
use agenticdriver::*;
use serde_json::{json, Value};
use std::time::Duration;

/// Every call of the crate this test makes, per client style; a call that was not reached
/// (an earlier step it needs failed) is reported as failed.
const CALLS: &[&str] = &[
    "protocol",
    "providers",
    "refresh_providers",
    "run",
    "stream",
    "run:error-envelope",
    "run:idempotent-replay",
    "run:context-and-artifact",
    "run:output-schema",
    "stream:approval",
    "decide_approval",
    "decide_approval:deny",
    "stream:application-tool",
    "report_tool_progress",
    "complete_tool",
    "complete_tool:failure",
    "create_session",
    "run:session",
    "read_session",
    "delete_session",
    "submit_job",
    "read_job",
    "job_events",
    "cancel_job",
    "index_context",
    "search_context",
    "delete_context",
    "ingest_context:markdown",
    "ingest_context:email",
    "ingest_context:pdf",
    "search_context:after-ingest",
    "run:retrieval",
    "stream:retrieval",
    "job_events:retrieval",
];

type R<T> = std::result::Result<T, Error>;

/// The crate's calls, in one shape for both of its client styles.
trait Client {
    fn protocol(&self) -> R<ProtocolInfo>;
    fn providers(&self) -> R<Vec<Provider>>;
    fn refresh_providers(&self) -> R<Vec<Provider>>;
    fn run(&self, request: &RunRequest) -> R<RunResult>;
    /// Visits every event; like the blocking client, a `run.failed`/`run.cancelled` event is
    /// visited and then returned as `Error::Driver`.
    fn stream(&self, request: &RunRequest, visit: &mut dyn FnMut(&Event)) -> R<()>;
    fn decide_approval(&self, decision: &ApprovalDecision) -> R<ApprovalResolution>;
    fn report_tool_progress(&self, identity: &ToolExecutionIdentity) -> R<ToolExecutionReceipt>;
    fn complete_tool(&self, result: &ToolExecutionResult) -> R<ToolExecutionReceipt>;
    fn create_session(&self, request: &SessionCreate) -> R<SessionSnapshot>;
    fn read_session(&self, request: &SessionIdentity) -> R<SessionSnapshot>;
    fn delete_session(&self, request: &SessionIdentity) -> R<SessionDeleteResult>;
    fn submit_job(&self, request: &JobSubmit) -> R<JobInfo>;
    fn read_job(&self, request: &JobIdentity) -> R<JobInfo>;
    fn cancel_job(&self, request: &JobIdentity) -> R<JobInfo>;
    fn job_events(&self, request: &JobEventsRequest) -> R<JobEventPage>;
    fn index_context(&self, request: &RetrievalIndexRequest) -> R<RetrievalIndexResult>;
    fn search_context(&self, request: &RetrievalSearch) -> R<RetrievalResult>;
    fn delete_context(&self, request: &RetrievalDelete) -> R<RetrievalDeleteResult>;
    fn ingest_context(&self, request: &IngestRequest) -> R<IngestResult>;
}

impl Client for AgenticClient {
    fn protocol(&self) -> R<ProtocolInfo> {
        AgenticClient::protocol(self)
    }
    fn providers(&self) -> R<Vec<Provider>> {
        AgenticClient::providers(self)
    }
    fn refresh_providers(&self) -> R<Vec<Provider>> {
        AgenticClient::refresh_providers(self)
    }
    fn run(&self, request: &RunRequest) -> R<RunResult> {
        AgenticClient::run(self, request)
    }
    fn stream(&self, request: &RunRequest, visit: &mut dyn FnMut(&Event)) -> R<()> {
        AgenticClient::stream(self, request, |event| {
            visit(&event);
            true
        })
    }
    fn decide_approval(&self, decision: &ApprovalDecision) -> R<ApprovalResolution> {
        AgenticClient::decide_approval(self, decision)
    }
    fn report_tool_progress(&self, identity: &ToolExecutionIdentity) -> R<ToolExecutionReceipt> {
        AgenticClient::report_tool_progress(self, identity)
    }
    fn complete_tool(&self, result: &ToolExecutionResult) -> R<ToolExecutionReceipt> {
        AgenticClient::complete_tool(self, result)
    }
    fn create_session(&self, request: &SessionCreate) -> R<SessionSnapshot> {
        AgenticClient::create_session(self, request)
    }
    fn read_session(&self, request: &SessionIdentity) -> R<SessionSnapshot> {
        AgenticClient::read_session(self, request)
    }
    fn delete_session(&self, request: &SessionIdentity) -> R<SessionDeleteResult> {
        AgenticClient::delete_session(self, request)
    }
    fn submit_job(&self, request: &JobSubmit) -> R<JobInfo> {
        AgenticClient::submit_job(self, request)
    }
    fn read_job(&self, request: &JobIdentity) -> R<JobInfo> {
        AgenticClient::read_job(self, request)
    }
    fn cancel_job(&self, request: &JobIdentity) -> R<JobInfo> {
        AgenticClient::cancel_job(self, request)
    }
    fn job_events(&self, request: &JobEventsRequest) -> R<JobEventPage> {
        AgenticClient::job_events(self, request)
    }
    fn index_context(&self, request: &RetrievalIndexRequest) -> R<RetrievalIndexResult> {
        AgenticClient::index_context(self, request)
    }
    fn search_context(&self, request: &RetrievalSearch) -> R<RetrievalResult> {
        AgenticClient::search_context(self, request)
    }
    fn delete_context(&self, request: &RetrievalDelete) -> R<RetrievalDeleteResult> {
        AgenticClient::delete_context(self, request)
    }
    fn ingest_context(&self, request: &IngestRequest) -> R<IngestResult> {
        AgenticClient::ingest_context(self, request)
    }
}

/// The async client on a current-thread runtime; the test's own code stays synchronous.
struct Async {
    client: AsyncAgenticClient,
    runtime: tokio::runtime::Runtime,
}

impl Client for Async {
    fn protocol(&self) -> R<ProtocolInfo> {
        self.runtime.block_on(self.client.protocol())
    }
    fn providers(&self) -> R<Vec<Provider>> {
        self.runtime.block_on(self.client.providers())
    }
    fn refresh_providers(&self) -> R<Vec<Provider>> {
        self.runtime.block_on(self.client.refresh_providers())
    }
    fn run(&self, request: &RunRequest) -> R<RunResult> {
        self.runtime.block_on(self.client.run(request))
    }
    fn stream(&self, request: &RunRequest, visit: &mut dyn FnMut(&Event)) -> R<()> {
        let mut stream = self.runtime.block_on(self.client.stream(request))?;
        while let Some(event) = self.runtime.block_on(stream.next()) {
            let event = event?;
            visit(&event);
            if matches!(event.kind.as_str(), "run.failed" | "run.cancelled") {
                return Err(Error::Driver(event.error.clone().expect("validated by the crate")));
            }
        }
        if !stream.is_closed() {
            return Err(Error::Protocol("the stream ended without closing"));
        }
        Ok(())
    }
    fn decide_approval(&self, decision: &ApprovalDecision) -> R<ApprovalResolution> {
        self.runtime.block_on(self.client.decide_approval(decision))
    }
    fn report_tool_progress(&self, identity: &ToolExecutionIdentity) -> R<ToolExecutionReceipt> {
        self.runtime.block_on(self.client.report_tool_progress(identity))
    }
    fn complete_tool(&self, result: &ToolExecutionResult) -> R<ToolExecutionReceipt> {
        self.runtime.block_on(self.client.complete_tool(result))
    }
    fn create_session(&self, request: &SessionCreate) -> R<SessionSnapshot> {
        self.runtime.block_on(self.client.create_session(request))
    }
    fn read_session(&self, request: &SessionIdentity) -> R<SessionSnapshot> {
        self.runtime.block_on(self.client.read_session(request))
    }
    fn delete_session(&self, request: &SessionIdentity) -> R<SessionDeleteResult> {
        self.runtime.block_on(self.client.delete_session(request))
    }
    fn submit_job(&self, request: &JobSubmit) -> R<JobInfo> {
        self.runtime.block_on(self.client.submit_job(request))
    }
    fn read_job(&self, request: &JobIdentity) -> R<JobInfo> {
        self.runtime.block_on(self.client.read_job(request))
    }
    fn cancel_job(&self, request: &JobIdentity) -> R<JobInfo> {
        self.runtime.block_on(self.client.cancel_job(request))
    }
    fn job_events(&self, request: &JobEventsRequest) -> R<JobEventPage> {
        self.runtime.block_on(self.client.job_events(request))
    }
    fn index_context(&self, request: &RetrievalIndexRequest) -> R<RetrievalIndexResult> {
        self.runtime.block_on(self.client.index_context(request))
    }
    fn search_context(&self, request: &RetrievalSearch) -> R<RetrievalResult> {
        self.runtime.block_on(self.client.search_context(request))
    }
    fn delete_context(&self, request: &RetrievalDelete) -> R<RetrievalDeleteResult> {
        self.runtime.block_on(self.client.delete_context(request))
    }
    fn ingest_context(&self, request: &IngestRequest) -> R<IngestResult> {
        self.runtime.block_on(self.client.ingest_context(request))
    }
}

/// One line per call; remembers which calls were made.
struct Report {
    client: &'static str,
    done: Vec<String>,
    failed: usize,
}

impl Report {
    fn line(&mut self, call: &str, ok: bool, detail: &str) {
        self.done.push(call.to_string());
        if !ok {
            self.failed += 1;
        }
        println!("{}", json!({"compat": {"client": self.client, "call": call, "ok": ok, "detail": detail}}));
    }

    /// Records a call's outcome (the crate's error, or a check on its answer that failed).
    fn record<T>(&mut self, call: &str, outcome: std::result::Result<T, String>) -> Option<T> {
        match outcome {
            Ok(value) => {
                self.line(call, true, "");
                Some(value)
            }
            Err(detail) => {
                self.line(call, false, &detail);
                None
            }
        }
    }

    fn finish(&mut self) {
        for call in CALLS {
            if !self.done.iter().any(|done| done == call) {
                self.line(call, false, "not reached: a step it needs failed");
            }
        }
    }
}

fn text(error: Error) -> String {
    error.to_string()
}

fn want(ok: bool, what: impl FnOnce() -> String) -> std::result::Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what())
    }
}

/// A call's answer checked by `check`, or the crate's error.
fn checked<T>(answer: R<T>, check: impl FnOnce(&T) -> std::result::Result<(), String>) -> std::result::Result<T, String> {
    let value = answer.map_err(text)?;
    check(&value)?;
    Ok(value)
}

fn request(input: &str) -> RunRequest {
    RunRequest::new("mock", "demo", input)
}

fn script(steps: Value) -> String {
    json!({ "mockScript": { "steps": steps } }).to_string()
}

struct Inputs {
    pdf_base64: String,
    prefix: &'static str,
}

fn suite(client: &dyn Client, report: &mut Report, inputs: &Inputs) {
    discovery(client, report);
    runs(client, report, inputs);
    approvals(client, report);
    application_tools(client, report);
    sessions(client, report);
    jobs(client, report, inputs);
    retrieval(client, report, inputs);
    report.finish();
}

fn discovery(client: &dyn Client, report: &mut Report) {
    report.record(
        "protocol",
        checked(client.protocol(), |info| {
            want(info.features.iter().any(|f| f == "event-stream"), || format!("features {:?}", info.features))
        }),
    );
    let mock = |providers: &Vec<Provider>| {
        want(providers.iter().any(|p| p.id == "mock" && p.capabilities.tools), || format!("no mock provider in {providers:?}"))
    };
    report.record("providers", checked(client.providers(), mock));
    report.record("refresh_providers", checked(client.refresh_providers(), mock));
}

fn runs(client: &dyn Client, report: &mut Report, inputs: &Inputs) {
    let hello = request("Hello from 0.1.0 🌍");
    let result = report.record(
        "run",
        checked(client.run(&hello), |result| want(result.text == "Hello from 0.1.0 🌍", || format!("text {:?}", result.text))),
    );
    let mut streamed = String::new();
    let mut kinds = Vec::new();
    let outcome = client.stream(&hello, &mut |event| {
        kinds.push(event.kind.clone());
        match event.payload() {
            Ok(EventPayload::TextDelta { text }) => streamed.push_str(text),
            Ok(_) => {}
            Err(error) => streamed.push_str(&format!("<payload: {error}>")),
        }
    });
    report.record(
        "stream",
        outcome.map_err(text).and_then(|()| {
            want(
                kinds.first().map(String::as_str) == Some("run.started") && kinds.last().map(String::as_str) == Some("run.completed"),
                || format!("events {kinds:?}"),
            )?;
            want(result.as_ref().is_none_or(|r| r.text == streamed), || format!("streamed {streamed:?}"))
        }),
    );

    let mut forbidden = request("Hello");
    forbidden.tools = vec!["nope".into()];
    report.record(
        "run:error-envelope",
        match client.run(&forbidden) {
            Err(Error::Driver(error)) if error.code == "FORBIDDEN" && !error.retryable => Ok(()),
            other => Err(format!("expected a FORBIDDEN driver error, got {other:?}")),
        },
    );

    let mut keyed = request("Hello once");
    keyed.idempotency_key = Some(format!("compat-{}-key", inputs.prefix));
    report.record(
        "run:idempotent-replay",
        client.run(&keyed).map_err(text).and_then(|first| {
            let again = client.run(&keyed).map_err(text)?;
            want(first.run_id == again.run_id && again.text == "Hello once", || format!("replayed {} as {}", first.run_id, again.run_id))
        }),
    );

    let mut grounded = request("Summarize the note.");
    grounded.attachments = vec![ContextInput::Text {
        source: ContextSource {
            id: "note-1".into(),
            revision: "r1".into(),
            title: Some("A note".into()),
            uri: Some("https://example.com/notes/1".into()),
            location: Some(SourceLocation { start_line: Some(1), end_line: Some(2), ..SourceLocation::default() }),
        },
        media_type: "text/plain".into(),
        text: "The lamp is lit at dusk.\nThe horn sounds in fog.".into(),
    }];
    grounded.output_artifact = Some(ArtifactRequest { name: "summary.md".into(), media_type: "text/markdown".into() });
    report.record(
        "run:context-and-artifact",
        checked(client.run(&grounded), |result| {
            let sources = result.sources.as_deref().unwrap_or_default();
            want(sources.len() == 1 && sources[0].source.id == "note-1" && sources[0].origin == "inline", || {
                format!("sources {sources:?}")
            })?;
            let artifacts = result.artifacts.as_deref().unwrap_or_default();
            want(artifacts.len() == 1 && artifacts[0].name == "summary.md", || format!("artifacts {artifacts:?}"))
        }),
    );

    let mut structured = request(r#"{"name":"Ada"}"#);
    structured.output_schema = Some(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}));
    report.record(
        "run:output-schema",
        checked(client.run(&structured), |result| {
            want(result.output == Some(json!({"name": "Ada"})), || format!("output {:?}", result.output))
        }),
    );
}

fn guarded_request() -> RunRequest {
    let mut request = request(&script(json!([
        {"actions": [{"toolCall": {"name": "guarded", "arguments": {"text": "hi"}}}]},
        {"actions": [{"echoToolResults": true}]}
    ])));
    request.tools = vec!["guarded".into()];
    request.approvals = Some(ApprovalPolicy::interactive(ApprovalIdlePolicy::Pause));
    request
}

/// Streams `request`, answering each approval with `action`: the receipts, the final text
/// and how the stream ended.
fn approve_stream(
    client: &dyn Client,
    request: &RunRequest,
    action: ApprovalAction,
) -> (Vec<R<ApprovalResolution>>, String, Vec<String>, R<()>) {
    let mut receipts = Vec::new();
    let mut final_text = String::new();
    let mut kinds = Vec::new();
    let outcome = client.stream(request, &mut |event| {
        kinds.push(event.kind.clone());
        match event.payload() {
            Ok(EventPayload::ApprovalRequested { approval }) => receipts.push(client.decide_approval(&approval.decision(action))),
            Ok(EventPayload::RunCompleted { result }) => final_text = result.text.clone(),
            _ => {}
        }
    });
    (receipts, final_text, kinds, outcome)
}

fn approvals(client: &dyn Client, report: &mut Report) {
    let (receipts, final_text, kinds, outcome) = approve_stream(client, &guarded_request(), ApprovalAction::Approve);
    report.record(
        "stream:approval",
        outcome.map_err(text).and_then(|()| {
            want(kinds.iter().any(|k| k == "approval.resolved") && final_text == r#"[{"approved":true,"arguments":{"text":"hi"}}]"#, || {
                format!("events {kinds:?}, text {final_text:?}")
            })
        }),
    );
    report.record(
        "decide_approval",
        match receipts.as_slice() {
            [Ok(receipt)] => want(receipt.outcome == ApprovalOutcome::Approved, || format!("receipt {receipt:?}")),
            other => Err(format!("receipts {other:?}")),
        },
    );

    let (receipts, _, kinds, outcome) = approve_stream(client, &guarded_request(), ApprovalAction::Deny);
    report.record(
        "decide_approval:deny",
        match (receipts.as_slice(), outcome) {
            ([Ok(receipt)], Err(Error::Driver(error))) if receipt.outcome == ApprovalOutcome::Denied && error.code == "APPROVAL_DENIED" => {
                want(!kinds.iter().any(|k| k == "tool.completed"), || format!("events {kinds:?}"))
            }
            (receipts, outcome) => Err(format!("receipts {receipts:?}, stream {outcome:?}")),
        },
    );
}

fn lookup_request() -> RunRequest {
    let mut request = request(&script(json!([
        {"actions": [{"toolCall": {"name": "application_lookup", "arguments": {"query": "x"}}}]},
        {"actions": [{"echoToolResults": true}]}
    ])));
    request.application_tools = vec![ApplicationToolDefinition {
        name: "application_lookup".into(),
        description: "Look something up".into(),
        input_schema: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        output_schema: None,
        requires_approval: None,
    }];
    request.tools = vec!["application_lookup".into()];
    request
}

fn application_tools(client: &dyn Client, report: &mut Report) {
    let mut progress = Vec::new();
    let mut completion = Vec::new();
    let mut final_text = String::new();
    let outcome = client.stream(&lookup_request(), &mut |event| match event.payload() {
        Ok(EventPayload::ToolExecutionRequested { execution }) => {
            progress.push(client.report_tool_progress(&execution.identity()));
            completion.push(client.complete_tool(&execution.success(json!({"answer": 42}))));
        }
        Ok(EventPayload::RunCompleted { result }) => final_text = result.text.clone(),
        _ => {}
    });
    report.record(
        "stream:application-tool",
        outcome.map_err(text).and_then(|()| want(final_text == r#"[{"answer":42}]"#, || format!("text {final_text:?}"))),
    );
    report.record(
        "report_tool_progress",
        match progress.as_slice() {
            [Ok(receipt)] => want(receipt.status == ToolExecutionStatus::Progress, || format!("{receipt:?}")),
            other => Err(format!("receipts {other:?}")),
        },
    );
    report.record(
        "complete_tool",
        match completion.as_slice() {
            [Ok(receipt)] => want(receipt.status == ToolExecutionStatus::Accepted, || format!("{receipt:?}")),
            other => Err(format!("receipts {other:?}")),
        },
    );

    let mut failure = Vec::new();
    let mut kinds = Vec::new();
    let outcome = client.stream(&lookup_request(), &mut |event| {
        kinds.push(event.kind.clone());
        if let Ok(EventPayload::ToolExecutionRequested { execution }) = event.payload() {
            failure.push(client.complete_tool(&execution.failure()));
        }
    });
    report.record(
        "complete_tool:failure",
        match failure.as_slice() {
            [Ok(receipt)] if receipt.status == ToolExecutionStatus::Accepted => want(
                kinds.last().is_some_and(|k| k.starts_with("run.")) && (outcome.is_ok() || matches!(outcome, Err(Error::Driver(_)))),
                || format!("events {kinds:?}, stream {outcome:?}"),
            ),
            other => Err(format!("receipts {other:?}, stream {outcome:?}")),
        },
    );
}

fn sessions(client: &dyn Client, report: &mut Report) {
    let mut create = SessionCreate::new("mock", "demo", SessionMode::History);
    create.instructions = Some("Answer briefly.".into());
    create.history =
        vec![Message { role: "user".into(), content: "Earlier".into() }, Message { role: "assistant".into(), content: "Noted".into() }];
    let Some(snapshot) = report
        .record("create_session", checked(client.create_session(&create), |s| want(s.session.handle.revision == 0, || format!("{s:?}"))))
    else {
        return;
    };
    let identity = snapshot.session.identity();
    let mut turn = request("Hello session");
    turn.session = Some(snapshot.session.handle.clone());
    report.record(
        "run:session",
        checked(client.run(&turn), |result| {
            want(result.session.as_ref().is_some_and(|s| s.handle.revision == 1) && result.text == "Hello session", || {
                format!("{result:?}")
            })
        }),
    );
    report.record(
        "read_session",
        checked(client.read_session(&identity), |s| {
            want(s.session.handle.revision == 1 && s.history.len() == 4, || {
                format!("revision {}, {} messages", s.session.handle.revision, s.history.len())
            })
        }),
    );
    report.record("delete_session", checked(client.delete_session(&identity), |r| want(r.deleted, || format!("{r:?}"))));
}

/// Reads the job until it is finished (bounded: the mock answers at once).
fn finished_job(client: &dyn Client, identity: &JobIdentity) -> std::result::Result<JobInfo, String> {
    for _ in 0..400 {
        let job = client.read_job(identity).map_err(text)?;
        if job.state.is_terminal() {
            return Ok(job);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    Err("the job did not finish within 10 s".into())
}

/// Every event of a finished job, page by page.
fn all_events(client: &dyn Client, id: &str) -> std::result::Result<Vec<Event>, String> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let page = client.job_events(&JobEventsRequest { id: id.into(), after, limit: Some(2) }).map_err(text)?;
        after = page.next_cursor;
        events.extend(page.events);
        if !page.has_more {
            return Ok(events);
        }
    }
}

fn jobs(client: &dyn Client, report: &mut Report, inputs: &Inputs) {
    let submit = JobSubmit { key: format!("compat-{}-job", inputs.prefix), request: request("Hello job") };
    if let Some(job) =
        report.record("submit_job", checked(client.submit_job(&submit), |job| want(job.provider == "mock", || format!("{job:?}"))))
    {
        let identity = job.identity();
        if let Some(job) = report.record(
            "read_job",
            finished_job(client, &identity).and_then(|job| {
                want(job.state == JobState::Completed, || format!("{job:?}"))?;
                Ok(job)
            }),
        ) {
            report.record(
                "job_events",
                all_events(client, &job.id).and_then(|events| {
                    let text = events.last().and_then(|e| e.result.as_ref()).map(|r| r.text.clone());
                    want(events.len() as u64 == job.cursor && text.as_deref() == Some("Hello job"), || {
                        format!("{} events, final {text:?}", events.len())
                    })
                }),
            );
        }
    }

    let hanging =
        JobSubmit { key: format!("compat-{}-hang", inputs.prefix), request: request(&script(json!([{"actions": [{"hang": true}]}]))) };
    report.record(
        "cancel_job",
        client.submit_job(&hanging).map_err(text).and_then(|job| {
            let cancelled = client.cancel_job(&job.identity()).map_err(text)?;
            want(cancelled.cancel_requested || cancelled.state == JobState::Cancelled, || format!("{cancelled:?}"))?;
            let done = finished_job(client, &job.identity())?;
            want(done.state == JobState::Cancelled, || format!("{done:?}"))?;
            let events = all_events(client, &done.id)?;
            want(events.last().is_some_and(|e| e.kind == "run.cancelled"), || format!("{events:?}"))
        }),
    );
}

fn scope(corpus: &str, query: &str, source: &str) -> RetrievalSearch {
    RetrievalSearch { corpus: corpus.into(), source_ids: vec![source.into()], query: Some(query.into()), ..RetrievalSearch::default() }
}

fn source(id: String, revision: &str) -> ContextSource {
    ContextSource { id, revision: revision.into(), ..ContextSource::default() }
}

fn retrieval(client: &dyn Client, report: &mut Report, inputs: &Inputs) {
    let indexed = format!("compat-{}-indexed", inputs.prefix);
    let index = RetrievalIndexRequest {
        ingestion: None,
        corpus: "default".into(),
        source: source(indexed.clone(), "r1"),
        chunks: vec![
            RetrievalChunk { id: "c1".into(), text: "Tides rise twice a day along the harbour wall.".into(), location: None },
            RetrievalChunk {
                id: "c2".into(),
                text: "The ferry leaves at noon.".into(),
                location: Some(SourceLocation { start_line: Some(3), end_line: Some(3), ..SourceLocation::default() }),
            },
        ],
    };
    report.record(
        "index_context",
        checked(client.index_context(&index), |r| want(r.chunks == 2 && r.status == "indexed", || format!("{r:?}"))),
    );
    report.record(
        "search_context",
        checked(client.search_context(&scope("default", "ferry", &indexed)), |r| {
            want(r.hits.iter().any(|hit| hit.text.contains("ferry")), || format!("{r:?}"))
        }),
    );
    let delete = RetrievalDelete { corpus: "default".into(), source_id: indexed.clone(), revision: "r1".into() };
    report.record("delete_context", checked(client.delete_context(&delete), |r| want(r.deleted, || format!("{r:?}"))));

    let lighthouse = format!("compat-{}-lighthouse", inputs.prefix);
    let markdown = IngestRequest {
        corpus: "default".into(),
        document: IngestionDocument::Text {
            source: source(lighthouse.clone(), "r1"),
            media_type: "text/markdown".into(),
            text: "# Lighthouse keeping\n\nThe lamp is lit at dusk.\n\n## Fog\n\nIn fog the keeper sounds the horn every thirty seconds.\n"
                .into(),
        },
        chunking: None,
        idle_timeout_ms: None,
    };
    report.record(
        "ingest_context:markdown",
        checked(client.ingest_context(&markdown), |r| want(r.ingestion.format == "markdown" && r.chunks >= 1, || format!("{r:?}"))),
    );
    let email = IngestRequest {
        corpus: "default".into(),
        document: IngestionDocument::Email {
            source: source(format!("compat-{}-thread", inputs.prefix), "r1"),
            thread_id: "thread-1".into(),
            messages: vec![
                EmailMessage { id: "m1".into(), text: "Can we move the review to Friday?".into() },
                EmailMessage { id: "m2".into(), text: "Friday works; the room is booked.".into() },
            ],
        },
        chunking: None,
        idle_timeout_ms: None,
    };
    report.record(
        "ingest_context:email",
        checked(client.ingest_context(&email), |r| {
            want(r.ingestion.format == "email" && r.ingestion.messages.is_some(), || format!("{r:?}"))
        }),
    );
    let pdf = IngestRequest {
        corpus: "default".into(),
        document: IngestionDocument::Pdf {
            source: source(format!("compat-{}-pdf", inputs.prefix), "r1"),
            media_type: "application/pdf".into(),
            data: inputs.pdf_base64.clone(),
        },
        chunking: None,
        idle_timeout_ms: None,
    };
    report.record(
        "ingest_context:pdf",
        checked(client.ingest_context(&pdf), |r| want(r.ingestion.format == "pdf" && r.ingestion.pages.is_some(), || format!("{r:?}"))),
    );
    let horn = scope("default", "horn", &lighthouse);
    report.record(
        "search_context:after-ingest",
        checked(client.search_context(&horn), |r| want(r.hits.iter().any(|hit| hit.text.contains("horn")), || format!("{r:?}"))),
    );

    let mut grounded = request("When is the horn sounded?");
    grounded.retrieval = Some(RetrievalRequest { query: None, ..horn.clone() });
    let grounded_ok = |result: &RunResult| {
        let hits = result.retrieval.as_ref().map_or(0, |r| r.hits.len());
        want(hits >= 1 && result.text.contains("[source:"), || format!("{hits} hits, text {:?}", result.text))
    };
    report.record("run:retrieval", checked(client.run(&grounded), grounded_ok));
    let mut completed = None;
    let outcome = client.stream(&grounded, &mut |event| {
        if let Ok(EventPayload::RunCompleted { result }) = event.payload() {
            completed = Some(grounded_ok(result));
        }
    });
    report.record("stream:retrieval", outcome.map_err(text).and_then(|()| completed.unwrap_or_else(|| Err("no run.completed".into()))));

    let job = JobSubmit { key: format!("compat-{}-grounded", inputs.prefix), request: grounded };
    report.record(
        "job_events:retrieval",
        client.submit_job(&job).map_err(text).and_then(|job| {
            let done = finished_job(client, &job.identity())?;
            let events = all_events(client, &done.id)?;
            let hits = events.last().and_then(|e| e.result.as_ref()).and_then(|r| r.retrieval.as_ref()).map_or(0, |r| r.hits.len());
            want(done.state == JobState::Completed && hits >= 1, || format!("{done:?}, {hits} hits"))
        }),
    );
}

fn main() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let url = var("COMPAT_URL");
    let token = var("COMPAT_TOKEN");
    let ca = std::env::var("COMPAT_CA_FILE").ok().map(|path| std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")));
    let pdf_base64 = var("COMPAT_PDF_BASE64");
    let mut failed = 0;

    let mut report = Report { client: "blocking", done: Vec::new(), failed: 0 };
    match AgenticClient::with_ca_pem(&url, &token, ca.as_deref()) {
        Ok(client) => suite(&client, &mut report, &Inputs { pdf_base64: pdf_base64.clone(), prefix: "blocking" }),
        Err(error) => report.line("new", false, &error.to_string()),
    }
    failed += report.failed;

    let mut report = Report { client: "async", done: Vec::new(), failed: 0 };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    match AsyncAgenticClient::with_ca_pem(&url, &token, ca.as_deref()) {
        Ok(client) => suite(&Async { client, runtime }, &mut report, &Inputs { pdf_base64, prefix: "async" }),
        Err(error) => report.line("new", false, &error.to_string()),
    }
    failed += report.failed;
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
