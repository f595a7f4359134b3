//! Approval and tool handles on a followed background run: a routed loopback host whose
//! run asks for approval, then (once the decision reached it) dispatches an application
//! tool, then (once the result reached it) completes — with and without `interactive-jobs`;
//! `wait_run`; and the whole round trip on the real host.
use super::tail::{fast, script, stream, Answer};
use super::*;
use crate::support::live::{live_host, Transport};
use futures_util::StreamExt;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

const T0: &str = "2026-09-21T12:00:00.000Z";

/// The host's side: the path and body of each request, and a signal per answer received.
#[derive(Default)]
struct Answers {
    requests: Mutex<Vec<(String, Value)>>,
    decided: Notify,
    completed: Notify,
}

fn call() -> Value {
    json!({"id": "call-1", "name": "lookup", "arguments": {"q": "x"}})
}

fn frame(event: &Value) -> String {
    format!("id: {}\ndata: {event}\n\n", event["sequence"])
}

async fn read_request(tcp: &mut TcpStream) -> (String, Value) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = tcp.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return (String::new(), Value::Null);
        }
        seen.extend_from_slice(&buf[..n]);
        if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&seen[..head_end]).to_string();
    let length: usize =
        head.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap())).unwrap_or(0);
    while seen.len() < head_end + length {
        let n = tcp.read(&mut buf).await.unwrap();
        seen.extend_from_slice(&buf[..n]);
    }
    let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
    (path, serde_json::from_slice(&seen[head_end..]).unwrap_or(Value::Null))
}

async fn answer(mut tcp: TcpStream, answers: Arc<Answers>, features: Value) {
    let (path, body) = read_request(&mut tcp).await;
    answers.requests.lock().unwrap().push((path.clone(), body.clone()));
    let reply = match path.as_str() {
        "/v1/protocol" => {
            json("200 OK", &json!({"protocol": "agenticdriver", "version": "1.0", "supportedVersions": ["1.0"], "features": features}))
        }
        "/v1/runs/read" => json(
            "200 OK",
            &json!({"runId": RUN_ID, "jobId": JOB_ID, "mode": "background", "provider": "mock", "model": "demo", "state": "running",
                    "cursor": 1, "createdAt": T0, "updatedAt": T0}),
        ),
        "/v1/approvals/decisions" => {
            let reply = json(
                "200 OK",
                &json!({"approvalId": body["approvalId"], "runId": body["runId"], "callId": "call-1", "outcome": "approved", "decidedAt": T0}),
            );
            answers.decided.notify_one();
            reply
        }
        "/v1/tool-executions/results" => {
            let reply = json(
                "200 OK",
                &json!({"executionId": body["executionId"], "runId": body["runId"], "callId": body["callId"], "status": "accepted"}),
            );
            answers.completed.notify_one();
            reply
        }
        path if path == format!("/v1/runs/{RUN_ID}/stream") => {
            let approval = json!({"approvalId": "a-1", "runId": RUN_ID, "call": call(), "requestedAt": T0, "idlePolicy": "pause"});
            let head = "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: text/event-stream\r\nagenticdriver-version: 1.0\r\n\r\n";
            let _ =
                tcp.write_all(format!("{head}{}", frame(&event(2, "approval.requested", json!({"approval": approval})))).as_bytes()).await;
            answers.decided.notified().await;
            let resolution = json!({"approvalId": "a-1", "runId": RUN_ID, "callId": "call-1", "outcome": "approved", "decidedAt": T0});
            let ticket =
                json!({"executionId": "e-1", "runId": RUN_ID, "call": {"id": "call-2", "name": "lookup", "arguments": {"q": "x"}}});
            let more = frame(&event(3, "approval.resolved", json!({"resolution": resolution})))
                + &frame(&event(4, "tool.execution.requested", json!({"execution": ticket})));
            let _ = tcp.write_all(more.as_bytes()).await;
            answers.completed.notified().await;
            let delivered = answers.requests.lock().unwrap().last().unwrap().1["output"].to_string();
            let mut completed = result("demo");
            completed["result"]["text"] = json!(delivered);
            let _ = tcp.write_all(frame(&event(5, "run.completed", completed)).as_bytes()).await;
            let _ = tcp.shutdown().await;
            return;
        }
        _ => json("404 Not Found", &json!({"error": {"code": "RUN_NOT_FOUND", "message": "No such run.", "retryable": false}})),
    };
    let _ = tcp.write_all(&reply).await;
    let _ = tcp.shutdown().await;
}

async fn interactive_host(features: Value) -> (String, Arc<Answers>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port());
    let answers = Arc::new(Answers::default());
    let serving = Arc::clone(&answers);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(answer(tcp, Arc::clone(&serving), features.clone()));
        }
    });
    (url, answers)
}

/// Follows the run from `after`, approving each approval and completing each ticket with
/// `{"found": 42}` through the handles made from the followed events.
async fn follow_with_handles(client: &AsyncAgenticClient, run_id: &str, after: u64) -> (Vec<&'static str>, Option<Error>) {
    let mut kinds = Vec::new();
    let mut tail = match client.follow_run(run_id, &TailOptions { after, ..TailOptions::default() }).await {
        Ok(tail) => tail,
        Err(error) => return (kinds, Some(error)),
    };
    while let Some(item) = tail.next().await {
        let event = match item {
            Ok(event) => event,
            Err(error) => return (kinds, Some(error)),
        };
        kinds.push(event.kind());
        match &event.payload {
            EventPayload::ApprovalRequested { .. } => {
                assert_eq!(client.approval(&event).unwrap().approve().await.unwrap().outcome, ApprovalOutcome::Approved);
            }
            EventPayload::ToolExecutionRequested { .. } => {
                assert_eq!(client.execution(&event).unwrap().complete(json!({"found": 42})).await.unwrap().status, ReceiptStatus::Accepted);
            }
            _ => {}
        }
    }
    (kinds, None)
}

#[tokio::test]
async fn with_interactive_jobs_the_approval_and_the_tool_are_answered_through_handles_on_a_followed_background_run() {
    let (url, answers) = interactive_host(json!(["durable-jobs", "run-records", "interactive-jobs"])).await;
    let client = AsyncAgenticClient::new(&url, TOKEN).unwrap();
    let (kinds, error) = follow_with_handles(&client, RUN_ID, 1).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(kinds, ["approval.requested", "approval.resolved", "tool.execution.requested", "run.completed"]);
    let requests = answers.requests.lock().unwrap().clone();
    let decision = requests.iter().find(|(path, _)| path == "/v1/approvals/decisions").unwrap();
    assert_eq!(decision.1, json!({"approvalId": "a-1", "runId": RUN_ID, "call": call(), "decision": "approve"}));
    let delivered = requests.iter().find(|(path, _)| path == "/v1/tool-executions/results").unwrap();
    assert_eq!(delivered.1, json!({"executionId": "e-1", "runId": RUN_ID, "callId": "call-2", "output": {"found": 42}}));
}

#[tokio::test]
async fn without_interactive_jobs_a_followed_background_run_that_asks_for_approval_is_unsupported_and_gets_no_handle() {
    let (url, answers) = interactive_host(json!(["durable-jobs", "run-records"])).await;
    let client = AsyncAgenticClient::new(&url, TOKEN).unwrap();
    let (kinds, error) = follow_with_handles(&client, RUN_ID, 1).await;
    assert_eq!(error.expect("refused").code(), Some(codes::UNSUPPORTED_EVENT));
    assert!(kinds.is_empty(), "{kinds:?}");
    assert!(!answers.requests.lock().unwrap().iter().any(|(path, _)| path.contains("approvals")));
}

fn record(changes: Value) -> Value {
    let mut run = json!({"runId": RUN_ID, "mode": "attached", "provider": "mock", "model": "demo", "state": "completed", "cursor": 4,
        "createdAt": T0, "updatedAt": T0, "expiresAt": "2026-09-22T12:00:00.000Z", "result": result("demo")["result"]});
    for (key, value) in changes.as_object().unwrap() {
        if value.is_null() {
            run.as_object_mut().unwrap().remove(key);
        } else {
            run[key] = value.clone();
        }
    }
    run
}

#[tokio::test]
async fn wait_run_answers_a_finished_run_from_its_record() {
    let s = script(record(json!({})), vec![]).await;
    let client = AsyncAgenticClient::new(&s.url, TOKEN).unwrap();
    assert_eq!(client.wait_run(RUN_ID, &TailOptions::default()).await.unwrap().text, "Hello");
    let failed =
        record(json!({"state": "failed", "result": null, "error": {"code": "APPROVAL_DENIED", "message": "Denied.", "retryable": false}}));
    let s = script(failed, vec![]).await;
    let error = AsyncAgenticClient::new(&s.url, TOKEN).unwrap().wait_run(RUN_ID, &TailOptions::default()).await.unwrap_err();
    assert_eq!((error.code(), error.retryable()), (Some("APPROVAL_DENIED"), false));
    assert!(s.last_event_ids().is_empty());
}

#[tokio::test]
async fn wait_run_follows_a_running_run_from_its_cursor_to_its_terminal_event() {
    let log = completed_log();
    let failed =
        event(4, "run.failed", json!({"error": {"code": "PROVIDER_ERROR", "message": "Gone.", "retryable": true, "outcome": "uncertain"}}));
    let running = record(json!({"state": "running", "cursor": 2, "expiresAt": null, "result": null}));
    // The record is read twice (wait_run, then follow_run), then the stream is opened.
    let s = script(running.clone(), vec![Answer::Whole(json("200 OK", &running)), stream(&[log[2].clone(), failed])]).await;
    let error = AsyncAgenticClient::new(&s.url, TOKEN).unwrap().wait_run(RUN_ID, &fast(0, 3)).await.unwrap_err();
    assert_eq!((error.code(), error.retryable(), error.outcome()), (Some("PROVIDER_ERROR"), true, Some(ErrorOutcome::Uncertain)));
    assert_eq!(s.last_event_ids(), ["2"]);
}

#[test]
fn the_blocking_client_waits_for_a_run_too() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let log = completed_log();
    let running = record(json!({"state": "running", "cursor": 3, "expiresAt": null, "result": null}));
    let s = runtime.block_on(script(running.clone(), vec![Answer::Whole(json("200 OK", &running)), stream(&log[3..])]));
    let client = agenticdriver::blocking::AgenticClient::new(&s.url, TOKEN).unwrap();
    assert_eq!(client.wait_run(RUN_ID, &fast(0, 3)).unwrap().text, "Hello");
    assert_eq!(s.last_event_ids(), ["3"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_run_waiting_for_people_is_answered_through_handles_and_waited_for_on_the_real_host() {
    let host = live_host(Transport::Http);
    let client = host.async_client();
    let script = json!({"mockScript": {"steps": [
        {"actions": [{"toolCall": {"name": "guarded", "arguments": {"n": 1}, "id": "g1"}}]},
        {"actions": [{"toolCall": {"name": "application_lookup", "arguments": {"q": "x"}, "id": "l1"}}]},
        {"actions": [{"echoToolResults": true}]},
    ]}});
    let mut request = RunRequest::new("mock", "demo", script.to_string());
    request.tools = Some(vec!["guarded".into(), "application_lookup".into()]);
    request.application_tools = Some(vec![ApplicationToolDefinition {
        name: "application_lookup".into(),
        description: "Looks something up.".into(),
        input_schema: json!({"type": "object"}).as_object().unwrap().clone(),
        output_schema: None,
        requires_approval: None,
    }]);
    request.approvals = Some(ApprovalOptions { mode: ApprovalMode::Interactive, idle_policy: IdlePolicy::Pause, expires_after_ms: None });
    let key = format!("handles-{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos());
    let job = client.submit_job(&JobSubmit { key, request }).await.unwrap();
    let (kinds, error) = follow_with_handles(&client, &job.run_id, 0).await;
    assert!(error.is_none(), "{error:?}");
    assert!(kinds.windows(2).any(|w| w == ["approval.requested", "approval.resolved"]), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"run.completed"));
    let result = client.wait_run(&job.run_id, &TailOptions::default()).await.unwrap();
    assert_eq!(result.run_id, job.run_id);
    assert_eq!(result.text, r#"[{"found":42}]"#);
}
