//! Sessions and durable jobs: the receipt, job state and event page rules on scripted
//! peers, and `tail_job` against a loopback server that drops its connections.
mod handles;
mod records;
mod tail;

use crate::support::*;
use agenticdriver::*;
use serde_json::{json, Value};

pub const JOB_ID: &str = "00000000-0000-4000-8000-000000000001";
pub const RUN_ID: &str = "00000000-0000-4000-8000-000000000002";
const SESSION_ID: &str = "12345678-1234-4234-8234-123456789abc";

/// A job's state with fields replaced (`null` removes one).
pub fn job(changes: Value) -> Value {
    let mut job = json!({
        "id": JOB_ID, "runId": RUN_ID, "provider": "mock", "model": "demo", "state": "completed", "cursor": 4,
        "cancelRequested": false, "createdAt": "2026-09-21T12:00:00.000Z", "updatedAt": "2026-09-21T12:00:01.000Z",
        "expiresAt": "2026-09-22T12:00:00.000Z",
    });
    for (key, value) in changes.as_object().unwrap() {
        if value.is_null() {
            job.as_object_mut().unwrap().remove(key);
        } else {
            job[key] = value.clone();
        }
    }
    job
}

pub fn event(sequence: u64, kind: &str, fields: Value) -> Value {
    let mut event = json!({"type": kind, "runId": RUN_ID, "sequence": sequence, "timestamp": "2026-09-21T12:00:00.000Z"});
    for (key, value) in fields.as_object().unwrap() {
        event[key] = value.clone();
    }
    event
}

pub fn result(model: &str) -> Value {
    json!({"result": {"runId": RUN_ID, "provider": "mock", "model": model, "text": "Hello", "usage": {}, "steps": 1, "finishReason": "stop"}})
}

/// The four events of a completed job.
pub fn completed_log() -> Vec<Value> {
    vec![
        event(1, "run.started", json!({"provider": "mock", "model": "demo"})),
        event(2, "step.started", json!({"step": 1})),
        event(3, "text.delta", json!({"text": "Hello"})),
        event(4, "run.completed", result("demo")),
    ]
}

/// A client of a peer answering `body` to every request.
pub async fn answering(body: &Value) -> AsyncAgenticClient {
    let peer = serve(Reply::Close(json("200 OK", body)), None).await;
    AsyncAgenticClient::new(&peer.url, TOKEN).unwrap()
}

fn id() -> JobIdentity {
    JobIdentity { id: JOB_ID.into() }
}

#[tokio::test]
async fn job_states_keep_their_invariants() {
    let cases = [
        ("completed", json!({}), true),
        ("queued", json!({"state": "queued", "cursor": 0, "expiresAt": null}), true),
        ("running", json!({"state": "running", "cursor": 3, "expiresAt": null}), true),
        ("queued with events", json!({"state": "queued", "cursor": 1, "expiresAt": null}), false),
        ("running with expiry", json!({"state": "running", "cursor": 3}), false),
        ("finished without expiry", json!({"expiresAt": null}), false),
        ("finished with one event", json!({"state": "cancelled", "cursor": 1}), false),
        ("expiry not after update", json!({"expiresAt": "2026-09-21T12:00:01.000Z"}), false),
        ("update before creation", json!({"updatedAt": "2026-09-21T11:59:59.999Z"}), false),
        ("another job", json!({"id": "00000000-0000-4000-8000-000000000009"}), false),
        ("cased key is not the id", json!({"id": null, "ID": JOB_ID}), false),
    ];
    for (name, changes, ok) in cases {
        let outcome = answering(&job(changes)).await.read_job(&id().id).await;
        match outcome {
            Ok(info) => assert!(ok && info.id == JOB_ID, "{name}: accepted"),
            Err(error) => assert!(!ok && error.code() == Some(codes::INVALID_RESPONSE), "{name}: {error}"),
        }
    }
}

#[tokio::test]
async fn submissions_are_checked_before_sending_and_answers_after() {
    let submission = JobSubmit { key: "nightly-1".into(), request: RunRequest::new("mock", "demo", "Hello") };
    let queued = answering(&job(json!({"state": "queued", "cursor": 0, "expiresAt": null}))).await.submit_job(&submission).await.unwrap();
    assert_eq!((queued.state, queued.run_id.as_str()), (JobState::Queued, RUN_ID));
    let other = answering(&job(json!({"model": "other"}))).await.submit_job(&submission).await.unwrap_err();
    assert_eq!(other.code(), Some(codes::INVALID_RESPONSE));

    // Refused locally: the URL is a closed port, so reaching it would be a transport error.
    let offline = AsyncAgenticClient::new("http://127.0.0.1:9/", TOKEN).unwrap();
    let bad_key = JobSubmit { key: "bad key".into(), ..submission.clone() };
    assert_eq!(offline.submit_job(&bad_key).await.unwrap_err().code(), Some(codes::INVALID_JOB));
    assert_eq!(offline.read_job("NOT-A-UUID").await.unwrap_err().code(), Some(codes::INVALID_JOB));
    let zero = JobEventsRequest { id: JOB_ID.into(), after: 0, limit: Some(0) };
    assert_eq!(offline.job_events(&zero).await.unwrap_err().code(), Some(codes::INVALID_JOB_CURSOR));
    let bad_session = SessionIdentity { id: "x".into() };
    assert_eq!(offline.delete_session(&bad_session.id).await.unwrap_err().code(), Some(codes::INVALID_SESSION));
}

fn page(job: Value, events: &[Value], next: u64, more: bool) -> Value {
    json!({"job": job, "events": events, "nextCursor": next, "hasMore": more})
}

#[tokio::test]
async fn event_pages_continue_the_run_consistently_with_the_job() {
    let log = completed_log();
    let running = |cursor: u64| job(json!({"state": "running", "cursor": cursor, "expiresAt": null}));
    let failed_with = |outcome: Value| {
        let mut error = json!({"code": "JOB_INTERRUPTED", "message": "m", "retryable": false});
        if !outcome.is_null() {
            error["outcome"] = outcome;
        }
        event(4, "run.failed", json!({ "error": error }))
    };
    let replaced = |index: usize, replacement: Value| {
        let mut events = completed_log();
        events[index] = replacement;
        events
    };
    let with_session = {
        let mut r = result("demo");
        r["result"]["session"] = json!({"id": SESSION_ID, "revision": 1, "provider": "mock", "model": "demo", "mode": "history",
            "state": "ready", "createdAt": "2026-09-21T00:00:00.000Z", "updatedAt": "2026-09-21T00:00:00.000Z",
            "expiresAt": "2026-09-21T01:00:00.000Z"});
        r
    };
    let all = |after: u64, limit: Option<u32>| JobEventsRequest { id: JOB_ID.into(), after, limit };
    let cases: Vec<(&str, JobEventsRequest, Value, bool)> = vec![
        ("whole log", all(0, None), page(job(json!({})), &log, 4, false), true),
        ("middle page", all(1, Some(2)), page(job(json!({})), &log[1..3], 3, true), true),
        ("empty page at the cursor", all(4, None), page(job(json!({})), &[], 4, false), true),
        ("running job so far", all(0, None), page(running(3), &log[..3], 3, false), true),
        (
            "interrupted, outcome uncertain",
            all(0, None),
            page(job(json!({"state": "interrupted"})), &replaced(3, failed_with(json!("uncertain"))), 4, false),
            true,
        ),
        (
            "interrupted, outcome missing",
            all(0, None),
            page(job(json!({"state": "interrupted"})), &replaced(3, failed_with(Value::Null)), 4, false),
            false,
        ),
        (
            "cancelled job ends failed",
            all(0, None),
            page(job(json!({"state": "cancelled"})), &replaced(3, failed_with(Value::Null)), 4, false),
            false,
        ),
        ("failed job ends completed", all(0, None), page(job(json!({"state": "failed"})), &log, 4, false), false),
        ("another job", all(0, None), page(job(json!({"id": "00000000-0000-4000-8000-000000000009"})), &log, 4, false), false),
        ("more than the limit", all(0, Some(3)), page(job(json!({})), &log, 4, false), false),
        (
            "another run",
            all(0, None),
            page(
                job(json!({})),
                &replaced(2, event(3, "text.delta", json!({"text": "x", "runId": "00000000-0000-4000-8000-000000000003"}))),
                4,
                false,
            ),
            false,
        ),
        ("gap", all(0, None), page(job(json!({})), &replaced(2, event(5, "text.delta", json!({"text": "x"}))), 4, false), false),
        ("not from after+1", all(1, None), page(job(json!({})), &log[2..], 4, false), false),
        ("beyond the cursor", all(0, None), page(running(2), &log[..3], 3, false), false),
        (
            "run.started again",
            all(0, None),
            page(job(json!({})), &replaced(1, event(2, "run.started", json!({"provider": "mock", "model": "demo"}))), 4, false),
            false,
        ),
        (
            "first event not run.started",
            all(0, None),
            page(job(json!({})), &replaced(0, event(1, "step.started", json!({"step": 1}))), 4, false),
            false,
        ),
        (
            "run.started for another model",
            all(0, None),
            page(job(json!({})), &replaced(0, event(1, "run.started", json!({"provider": "mock", "model": "x"}))), 4, false),
            false,
        ),
        (
            "approval event",
            all(0, None),
            page(
                job(json!({})),
                &replaced(
                    2,
                    event(
                        3,
                        "approval.resolved",
                        json!({"resolution": {"approvalId": "a", "runId": RUN_ID, "callId": "c", "outcome": "approved", "decidedAt": "2026-09-21T12:00:00.000Z"}}),
                    ),
                ),
                4,
                false,
            ),
            false,
        ),
        (
            "unknown optional event",
            all(0, None),
            page(job(json!({})), &replaced(2, event(3, "future.event", json!({"optional": true}))), 4, false),
            false,
        ),
        (
            "terminal before the cursor",
            all(0, None),
            page(job(json!({})), &replaced(2, event(3, "run.completed", result("demo"))), 4, false),
            false,
        ),
        ("terminal in a running job", all(0, None), page(running(4), &log, 4, false), false),
        (
            "finished job without a terminal event",
            all(0, None),
            page(job(json!({})), &replaced(3, event(4, "text.delta", json!({"text": "x"}))), 4, false),
            false,
        ),
        (
            "result for another model",
            all(0, None),
            page(job(json!({})), &replaced(3, event(4, "run.completed", result("other"))), 4, false),
            false,
        ),
        (
            "result with a session",
            all(0, None),
            page(job(json!({})), &replaced(3, event(4, "run.completed", with_session)), 4, false),
            false,
        ),
        ("nextCursor not the last sequence", all(0, None), page(job(json!({})), &log, 3, false), false),
        ("empty page moves nextCursor", all(0, None), page(job(json!({})), &[], 4, false), false),
        ("hasMore at the cursor", all(0, None), page(job(json!({})), &log, 4, true), false),
        ("no hasMore before the cursor", all(0, Some(2)), page(job(json!({})), &log[..2], 2, false), false),
    ];
    for (name, request, body, ok) in cases {
        match answering(&body).await.job_events(&request).await {
            Ok(page) => assert!(ok && page.job.id == JOB_ID, "{name}: accepted"),
            Err(error) => assert!(!ok && error.code() == Some(codes::INVALID_RESPONSE), "{name}: {error}"),
        }
    }
}

fn snapshot(changes: Value, history: Value, instructions: Option<&str>) -> Value {
    let mut session = json!({"id": SESSION_ID, "revision": 0, "provider": "mock", "model": "demo", "mode": "history", "state": "ready",
        "createdAt": "2026-09-21T00:00:00.000Z", "updatedAt": "2026-09-21T00:00:00.000Z", "expiresAt": "2026-09-21T01:00:00.000Z"});
    for (key, value) in changes.as_object().unwrap() {
        if value.is_null() {
            session.as_object_mut().unwrap().remove(key);
        } else {
            session[key] = value.clone();
        }
    }
    let mut body = json!({"session": session, "history": history});
    if let Some(text) = instructions {
        body["instructions"] = json!(text);
    }
    body
}

#[tokio::test]
async fn session_receipts_echo_what_was_asked() {
    let hello = json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]);
    let create: SessionCreate = serde_json::from_value(json!({
        "provider": "mock", "model": "demo", "mode": "history", "instructions": "be brief", "history": hello,
    }))
    .unwrap();
    let brief = Some("be brief");
    let cases = [
        ("echo", snapshot(json!({}), hello.clone(), brief), true),
        ("other model", snapshot(json!({"model": "other"}), hello.clone(), brief), false),
        ("other mode", snapshot(json!({"mode": "native"}), hello.clone(), brief), false),
        ("revision 1", snapshot(json!({"revision": 1}), hello.clone(), brief), false),
        ("interrupted", snapshot(json!({"state": "interrupted"}), hello.clone(), brief), false),
        ("instructions dropped", snapshot(json!({}), hello.clone(), None), false),
        (
            "history changed",
            snapshot(json!({}), json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "bye"}]), brief),
            false,
        ),
        ("history dropped", snapshot(json!({}), json!([]), brief), false),
    ];
    for (name, body, ok) in cases {
        match answering(&body).await.create_session(&create).await {
            Ok(s) => assert!(ok && s.session.id == SESSION_ID && s.history.len() == 2, "{name}: accepted"),
            Err(error) => assert!(!ok && error.code() == Some(codes::INVALID_RESPONSE), "{name}: {error}"),
        }
    }
    let id = SessionIdentity { id: SESSION_ID.into() };
    let other = snapshot(json!({"id": "12345678-1234-4234-8234-123456789def"}), json!([]), None);
    assert_eq!(answering(&other).await.read_session(&id.id).await.unwrap_err().code(), Some(codes::INVALID_RESPONSE));
    let running = snapshot(json!({"state": "running", "expiresAt": null}), json!([]), None);
    assert_eq!(answering(&running).await.read_session(&id.id).await.unwrap().session.state, SessionState::Running);
    for (body, ok) in [
        (json!({"id": SESSION_ID, "deleted": true}), true),
        (json!({"id": SESSION_ID, "deleted": false}), false),
        (json!({"id": SESSION_ID, "Deleted": true}), false),
        (json!({"id": "12345678-1234-4234-8234-123456789def", "deleted": true}), false),
    ] {
        let outcome = answering(&body).await.delete_session(&id.id).await;
        assert_eq!(outcome.is_ok(), ok, "{body}: {outcome:?}");
        if !ok {
            assert_eq!(outcome.unwrap_err().code(), Some(codes::INVALID_RESPONSE));
        }
    }
    // A schema-valid receipt for another session breaks a rule of protocol/rules.json, which the error names (as in every client).
    let other = json!({"id": "12345678-1234-4234-8234-123456789def", "deleted": true});
    let refused = answering(&other).await.delete_session(&id.id).await.unwrap_err();
    assert!(refused.to_string().contains("[sessionDeleted.id]"), "{refused}");
}

#[tokio::test]
async fn lists_are_checked_and_their_requests_before_sending() {
    let newer = job(json!({"updatedAt": "2026-09-21T12:00:02.000Z"}));
    let older = job(json!({"id": "00000000-0000-4000-8000-000000000005"}));
    let all = JobListRequest::default();
    let cases = [
        ("newest first", json!([newer, older]), all.clone(), true),
        ("oldest first", json!([older, newer]), all.clone(), false),
        ("a job twice", json!([newer, newer]), all.clone(), false),
        ("over the limit", json!([newer, older]), JobListRequest { limit: Some(1), ..all.clone() }, false),
        ("another state", json!([newer]), JobListRequest { state: Some(JobState::Running), ..all.clone() }, false),
        ("a job's own rule", json!([job(json!({"expiresAt": null}))]), all.clone(), false),
    ];
    for (name, jobs, request, ok) in cases {
        match answering(&json!({ "jobs": jobs })).await.list_jobs(&request).await {
            Ok(listed) => assert!(ok && listed.len() == 2 && listed[0].updated_at == "2026-09-21T12:00:02.000Z", "{name}: accepted"),
            Err(error) => assert!(!ok && error.code() == Some(codes::INVALID_RESPONSE), "{name}: {error}"),
        }
    }

    let session = |changes: Value| {
        let mut value = snapshot(changes, json!([]), None)["session"].clone();
        value["revision"] = json!(2);
        value
    };
    let listed =
        answering(&json!({"sessions": [session(json!({}))]})).await.list_sessions(&SessionListRequest { limit: Some(5) }).await.unwrap();
    assert_eq!((listed.len(), listed[0].revision), (1, 2));
    let running = json!({"sessions": [session(json!({"state": "running"}))]});
    assert_eq!(
        answering(&running).await.list_sessions(&SessionListRequest::default()).await.unwrap_err().code(),
        Some(codes::INVALID_RESPONSE)
    );

    // Refused locally: the URL is a closed port, so reaching it would be a transport error.
    let offline = AsyncAgenticClient::new("http://127.0.0.1:9/", TOKEN).unwrap();
    assert_eq!(offline.list_jobs(&JobListRequest { limit: Some(101), state: None }).await.unwrap_err().code(), Some(codes::INVALID_JOB));
    assert_eq!(offline.list_sessions(&SessionListRequest { limit: Some(0) }).await.unwrap_err().code(), Some(codes::INVALID_SESSION));
}
