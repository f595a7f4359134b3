//! The operator client against loopback peers: the bearer and body sent to each
//! `/v1/operator/...` endpoint, malformed requests refused before sending, answers validated,
//! one run's page, and the live update feed (validated update by update, closed when dropped).
use crate::support::*;
use agenticdriver::*;
use serde_json::{json, Value};

const RUN_ID: &str = "00000000-0000-4000-8000-000000000002";
const T0: &str = "2026-09-21T12:00:00.000Z";

async fn operator(status: &str, body: &Value) -> (AsyncOperatorClient, Peer) {
    let peer = serve(Reply::Close(json(status, body)), None).await;
    (AsyncOperatorClient::new(&peer.url, TOKEN).unwrap(), peer)
}

/// The request line, whether the bearer was sent, and the JSON body.
async fn received(peer: &mut Peer) -> (String, bool, Value) {
    let raw = peer.requests.recv().await.unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let bearer = head.to_ascii_lowercase().contains(&format!("authorization: bearer {}", TOKEN.to_ascii_lowercase()));
    (head.lines().next().unwrap().to_string(), bearer, serde_json::from_str(body).unwrap())
}

fn code<T: std::fmt::Debug>(outcome: Result<T, Error>) -> String {
    outcome.expect_err("the call succeeded").code().unwrap_or("no code").to_string()
}

fn totals() -> Value {
    json!({"runs": 1, "completed": 1, "failed": 0, "cancelled": 0, "interrupted": 0, "incompleteRuns": 0, "inputTokens": 3, "outputTokens": 2,
           "cachedInputTokens": 0, "reasoningTokens": 0, "durationMs": 12, "costUsd": 0, "apiEquivalentCostUsd": 0})
}

/// One call of each list endpoint: (name, path, body sent, good answer, bad answer).
async fn call(client: &AsyncOperatorClient, name: &str) -> Result<(), Error> {
    match name {
        "runs" => client
            .runs(&OperatorRunsRequest {
                finished: Some(5),
                before: Some("opaque-cursor".into()),
                state: Some("failed".into()),
                subject: Some("alice".into()),
                provider: Some("mock".into()),
                search: Some("quota".into()),
            })
            .await
            .map(|list| assert_eq!(list.next_before.as_deref(), Some("next-cursor"))),
        "approvals" => client.approvals(&OperatorListRequest { limit: Some(10) }).await.map(drop),
        "jobs" => client.jobs(&OperatorJobsRequest { state: Some("running".into()), ..Default::default() }).await.map(drop),
        "usage" => client.usage(&OperatorUsageRequest { by: Some("subject".into()), ..Default::default() }).await.map(drop),
        "limits" => client.limits(&OperatorLimitsRequest { subject: Some("alice".into()) }).await.map(|answer| {
            assert_eq!(answer.limits[0].requests_per_minute, Some(60));
            assert_eq!(answer.limits[0].budgets[0].remaining, 3.25);
        }),
        _ => client.audit(&OperatorAuditRequest { limit: Some(2), ..Default::default() }).await.map(drop),
    }
}

#[tokio::test]
async fn operator_lists_send_the_bearer_and_validate_the_answer() {
    let run = json!({"runId": RUN_ID, "subject": "alice", "provider": "mock", "model": "demo", "state": "running", "startedAt": T0, "steps": 1, "usage": {}});
    let cases = [
        (
            "runs",
            json!({"finished": 5, "before": "opaque-cursor", "state": "failed", "subject": "alice", "provider": "mock", "search": "quota"}),
            json!({"active": [run], "finished": [], "nextBefore": "next-cursor"}),
            json!({"active": [{"runId": "x"}], "finished": []}),
        ),
        ("approvals", json!({"limit": 10}), json!({"approvals": []}), json!({"approvals": [{"subject": "alice"}]})),
        ("jobs", json!({"state": "running"}), json!({"jobs": []}), json!({"jobs": {}})),
        ("usage", json!({"by": "subject"}), json!({"totals": [totals()]}), json!({"totals": [{"runs": -1}]})),
        (
            "limits",
            json!({"subject": "alice"}),
            json!({"limits": [{"scope": "subject", "name": "alice", "requestsPerMinute": 60,
                   "budgets": [{"unit": "usd", "period": "day", "limit": 5, "used": 1.25, "reserved": 0.5, "remaining": 3.25, "resetsAt": T0}]}]}),
            json!({"limits": [{"scope": "subject", "budgets": [{"unit": "usd", "period": "day", "limit": 5, "used": -1, "reserved": 0, "remaining": 5, "resetsAt": T0}]}]}),
        ),
        (
            "audit",
            json!({"limit": 2}),
            json!({"records": [{"id": 7, "kind": "approval.resolved", "at": T0, "subject": "alice", "operator": "ops"}], "nextBefore": 7}),
            json!({"records": [{"id": 0, "kind": "approval.resolved", "at": T0, "subject": "alice"}]}),
        ),
    ];
    for (name, sent, good, bad) in cases {
        let (client, mut peer) = operator("200 OK", &good).await;
        call(&client, name).await.unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(received(&mut peer).await, (format!("POST /v1/operator/{name} HTTP/1.1"), true, sent), "{name}");
        assert_eq!(code(call(&operator("200 OK", &bad).await.0, name).await), codes::INVALID_RESPONSE, "{name}");
        let forbidden = json!({"error": {"code": "FORBIDDEN", "message": "no operator grant", "retryable": false}});
        assert_eq!(code(call(&operator("403 Forbidden", &forbidden).await.0, name).await), "FORBIDDEN", "{name}");
    }
}

#[tokio::test]
async fn malformed_operator_requests_are_refused_before_sending() {
    let (client, mut peer) = operator("200 OK", &json!({})).await;
    assert_eq!(
        code(client.runs(&OperatorRunsRequest { finished: Some(101), ..Default::default() }).await),
        codes::INVALID_OPERATOR_REQUEST
    );
    assert_eq!(
        code(client.runs(&OperatorRunsRequest { search: Some(String::new()), ..Default::default() }).await),
        codes::INVALID_OPERATOR_REQUEST
    );
    assert_eq!(code(client.run("../runs").await), codes::INVALID_OPERATOR_REQUEST);
    assert_eq!(code(client.approvals(&OperatorListRequest { limit: Some(0) }).await), codes::INVALID_OPERATOR_REQUEST);
    assert_eq!(
        code(client.jobs(&OperatorJobsRequest { state: Some("asleep".into()), ..Default::default() }).await),
        codes::INVALID_OPERATOR_REQUEST
    );
    assert_eq!(
        code(client.usage(&OperatorUsageRequest { by: Some("week".into()), ..Default::default() }).await),
        codes::INVALID_OPERATOR_REQUEST
    );
    assert_eq!(code(client.limits(&OperatorLimitsRequest { subject: Some(String::new()) }).await), codes::INVALID_OPERATOR_REQUEST);
    assert_eq!(code(client.audit(&OperatorAuditRequest { before: Some(0), ..Default::default() }).await), codes::INVALID_OPERATOR_REQUEST);
    assert!(peer.requests.try_recv().is_err());
}

#[test]
fn operator_decisions_check_the_receipt_blocking_too() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let decision: ApprovalDecision = serde_json::from_value(
        json!({"approvalId": "appr-1", "runId": RUN_ID, "call": {"id": "call-1", "name": "guarded", "arguments": {"text": "hi"}}, "decision": "deny"}),
    )
    .unwrap();
    let receipt = |outcome: &str| json!({"approvalId": "appr-1", "runId": RUN_ID, "callId": "call-1", "outcome": outcome, "decidedAt": T0});
    let mut peer = runtime.block_on(serve(Reply::Close(json("200 OK", &receipt("denied"))), None));
    let client = blocking::OperatorClient::new(&peer.url, TOKEN).unwrap();
    assert_eq!(client.decide_approval(&decision).unwrap().outcome, ApprovalOutcome::Denied);
    let (line, bearer, _) = runtime.block_on(received(&mut peer));
    assert_eq!((line.as_str(), bearer), ("POST /v1/operator/approvals/decisions HTTP/1.1", true));
    let other = runtime.block_on(serve(Reply::Close(json("200 OK", &receipt("approved"))), None));
    assert_eq!(code(blocking::OperatorClient::new(&other.url, TOKEN).unwrap().decide_approval(&decision)), codes::INVALID_RESPONSE);
}

fn run_record() -> Value {
    json!({"runId": RUN_ID, "subject": "alice", "provider": "mock", "model": "demo", "state": "completed", "startedAt": T0, "steps": 1, "usage": {}})
}

#[tokio::test]
async fn a_runs_page_is_read_by_id_and_must_be_that_run() {
    let step = json!({"step": 1, "startedAt": T0, "durationMs": 40, "usage": {"inputTokens": 3},
                      "tools": [{"callId": "call-1", "name": "guarded", "calledAt": T0, "approval": {"requestedAt": T0, "outcome": "approved"}}]});
    let (client, mut peer) = operator("200 OK", &json!({"run": run_record(), "steps": [step]})).await;
    let detail = client.run(RUN_ID).await.unwrap();
    assert_eq!(detail.run.run_id, RUN_ID);
    let steps = detail.steps.unwrap();
    assert_eq!(steps[0].tools[0].approval.as_ref().and_then(|a| a.outcome.as_deref()), Some("approved"));
    let raw = peer.requests.recv().await.unwrap();
    assert!(raw.starts_with(&format!("GET /v1/operator/runs/{RUN_ID} HTTP/1.1")), "{raw}");
    let mut other = run_record();
    other["runId"] = json!("00000000-0000-4000-8000-000000000009");
    assert_eq!(code(operator("200 OK", &json!({"run": other})).await.0.run(RUN_ID).await), codes::INVALID_RESPONSE);
    assert_eq!(
        code(operator("200 OK", &json!({"run": run_record(), "steps": [{"step": 0}]})).await.0.run(RUN_ID).await),
        codes::INVALID_RESPONSE
    );
    let missing = json!({"error": {"code": "RUN_NOT_FOUND", "message": "no such run", "retryable": false}});
    assert_eq!(code(operator("404 Not Found", &missing).await.0.run(RUN_ID).await), "RUN_NOT_FOUND");
}

fn updates() -> Vec<Value> {
    let mut waiting = run_record();
    waiting["state"] = json!("running");
    waiting["waiting"] = json!({"kind": "approval", "since": T0, "tool": "guarded"});
    vec![
        json!({"type": "snapshot", "at": T0, "active": [waiting.clone()], "pendingApprovals": 0}),
        json!({"type": "run", "at": T0, "run": waiting}),
        json!({"type": "a-kind-added-later", "at": T0}),
    ]
}

async fn collect(url: &str) -> Result<Vec<OperatorUpdate>, Error> {
    use futures_util::StreamExt;
    let client = AsyncOperatorClient::new(url, TOKEN).unwrap();
    let mut feed = client.updates().await?;
    let mut seen = Vec::new();
    while let Some(update) = feed.next().await {
        seen.push(update?);
    }
    Ok(seen)
}

#[tokio::test]
async fn the_update_feed_is_validated_update_by_update() {
    let mut peer = serve(Reply::Close(sse(&updates())), None).await;
    let seen = collect(&peer.url).await.unwrap();
    assert_eq!(seen.iter().map(|u| u.r#type.as_str()).collect::<Vec<_>>(), ["snapshot", "run", "a-kind-added-later"]);
    assert_eq!(seen[0].pending_approvals, Some(0));
    assert_eq!(seen[1].run.as_ref().and_then(|r| r.waiting.as_ref()).map(|w| w.kind.as_str()), Some("approval"));
    let raw = peer.requests.recv().await.unwrap();
    assert!(raw.starts_with("GET /v1/operator/updates HTTP/1.1"), "{raw}");
    assert!(raw.to_ascii_lowercase().contains("accept: text/event-stream"));
    assert!(!raw.to_ascii_lowercase().contains("last-event-id"));

    let malformed = serve(Reply::Close(sse(&[updates()[0].clone(), json!({"type": "run", "at": "yesterday"})])), None).await;
    assert_eq!(code(collect(&malformed.url).await), codes::INVALID_RESPONSE);
    let not_json = serve(Reply::Close(response("200 OK", &[("content-type", "text/event-stream")], b"data: {not json\n\n")), None).await;
    assert_eq!(code(collect(&not_json.url).await), codes::INVALID_RESPONSE);
    let not_a_stream = serve(Reply::Close(json("200 OK", &updates()[0])), None).await;
    assert_eq!(code(collect(&not_a_stream.url).await), codes::INVALID_RESPONSE);
}

#[test]
fn dropping_the_update_feed_closes_the_connection_blocking_too() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut peer = runtime.block_on(serve(Reply::Hold(sse(&updates()[..1])), None));
    let client = blocking::OperatorClient::new(&peer.url, TOKEN).unwrap();
    let mut feed = client.updates().unwrap();
    assert_eq!(feed.next().unwrap().unwrap().r#type, "snapshot");
    drop(feed);
    runtime
        .block_on(async { tokio::time::timeout(std::time::Duration::from_secs(10), peer.closed.recv()).await })
        .expect("the connection was closed")
        .unwrap();
}

fn tap_event(kind: &str, sequence: u64, payload: Value) -> Value {
    let mut event = json!({"type": kind, "runId": RUN_ID, "sequence": sequence, "timestamp": T0});
    event.as_object_mut().unwrap().extend(payload.as_object().unwrap().clone());
    event
}

fn completed(sequence: u64) -> Value {
    let result =
        json!({"runId": RUN_ID, "provider": "mock", "model": "demo", "text": "hi", "usage": {}, "steps": 1, "finishReason": "stop"});
    tap_event("run.completed", sequence, json!({ "result": result }))
}

/// The sequences a tap yielded, or its error's code.
async fn sequences(tap: Result<OperatorTap, Error>) -> Result<Vec<u64>, String> {
    use futures_util::StreamExt;
    let mut tap = tap.map_err(|e| e.code().unwrap_or("no code").to_string())?;
    let mut seen = Vec::new();
    while let Some(event) = tap.next().await {
        seen.push(event.map_err(|e| e.code().unwrap_or("no code").to_string())?.sequence);
    }
    Ok(seen)
}

#[tokio::test]
async fn watch_run_follows_one_run_to_its_terminal_event() {
    let (delta5, delta6) = (tap_event("text.delta", 5, json!({"text": "h"})), tap_event("text.delta", 6, json!({"text": "i"})));
    let late = tap_event("text.delta", 8, json!({"text": "late"}));
    let mut peer = serve(Reply::Close(sse(&[delta5.clone(), delta6.clone(), completed(7), late])), None).await;
    let client = AsyncOperatorClient::new(&peer.url, TOKEN).unwrap();
    assert_eq!(sequences(client.watch_run(RUN_ID).await).await, Ok(vec![5, 6, 7]));
    let head = peer.requests.recv().await.unwrap();
    assert!(head.starts_with(&format!("GET /v1/operator/runs/{RUN_ID}/events ")), "{head}");
    // Dropped for falling behind: the watch ends without a terminal event and without an error.
    let peer = serve(Reply::Close(sse(&[delta5.clone(), delta6.clone()])), None).await;
    assert_eq!(sequences(AsyncOperatorClient::new(&peer.url, TOKEN).unwrap().watch_run(RUN_ID).await).await, Ok(vec![5, 6]));
    let mut other = delta5.clone();
    other["runId"] = json!("another-run");
    for bad in [vec![delta6.clone(), delta5.clone()], vec![other], vec![json!({"type": "text.delta"})]] {
        let peer = serve(Reply::Close(sse(&bad)), None).await;
        let client = AsyncOperatorClient::new(&peer.url, TOKEN).unwrap();
        assert_eq!(sequences(client.watch_run(RUN_ID).await).await, Err(codes::INVALID_RESPONSE.to_string()), "{bad:?}");
    }
    assert_eq!(sequences(client.watch_run("RUN-1").await).await, Err(codes::INVALID_OPERATOR_REQUEST.to_string()));
}

#[test]
fn tail_job_resumes_after_a_sequence_blocking_too() {
    const JOB: &str = "00000000-0000-4000-8000-000000000009";
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut peer = runtime.block_on(serve(Reply::Close(sse(&[tap_event("text.delta", 6, json!({"text": "i"})), completed(7)])), None));
    let client = blocking::OperatorClient::new(&peer.url, TOKEN).unwrap();
    let events: Vec<u64> = client.tail_job(JOB, 5).unwrap().map(|event| event.unwrap().sequence).collect();
    assert_eq!(events, vec![6, 7]);
    let head = runtime.block_on(peer.requests.recv()).unwrap().to_ascii_lowercase();
    assert!(head.starts_with(&format!("get /v1/operator/jobs/{JOB}/stream ")) && head.contains("last-event-id: 5"), "{head}");
    let out_of_order = client.tail_job(JOB, 7).unwrap().next().unwrap();
    assert_eq!(out_of_order.unwrap_err().code(), Some(codes::INVALID_RESPONSE));
    assert_eq!(client.tail_job("not-a-job", 0).err().unwrap().code(), Some(codes::INVALID_JOB));
}
