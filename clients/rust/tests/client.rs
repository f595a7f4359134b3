//! Both clients against real loopback peers over HTTP and verified HTTPS.
mod interactive;
mod jobs;
mod operator;
mod retrieval;
mod support;

use agenticdriver::blocking::AgenticClient;
use agenticdriver::{codes, AsyncAgenticClient, Error, ErrorOutcome, EventPayload, RunRequest};
use futures_util::StreamExt;
use std::time::Duration;
use support::*;

fn hello() -> RunRequest {
    RunRequest::new("mock", "demo", "Hello")
}

fn protocol_body() -> Vec<u8> {
    json(
        "200 OK",
        &serde_json::json!({"protocol": "agenticdriver", "version": "1.0", "supportedVersions": ["1.0"], "features": ["event-stream"]}),
    )
}

async fn closed_within_5s(peer: &mut Peer) {
    tokio::time::timeout(Duration::from_secs(5), peer.closed.recv()).await.expect("the client closed the connection").unwrap();
}

#[tokio::test]
async fn streams_send_negotiation_headers_and_yield_validated_events() {
    let mut peer = serve(Reply::Close(sse(&base_events())), None).await;
    let client = AsyncAgenticClient::new(&format!("{}prefix", peer.url), TOKEN).unwrap();
    let events: Vec<_> = client.stream(&hello()).await.unwrap().collect().await;
    let kinds: Vec<_> = events.iter().map(|e| e.as_ref().unwrap().kind()).collect();
    assert_eq!(kinds, ["run.started", "text.delta", "run.completed"]);
    let request = peer.requests.recv().await.unwrap().to_ascii_lowercase();
    for line in [
        "post /prefix/v1/runs http/1.1",
        &format!("authorization: bearer {}", TOKEN.to_ascii_lowercase()),
        "agenticdriver-version: 1.0",
        "agenticdriver-accept-optional-events: true",
        "accept: text/event-stream",
        "content-type: application/json",
    ] {
        assert!(request.contains(line), "{line} missing from {request}");
    }
    assert!(request.ends_with(r#"{"provider":"mock","model":"demo","input":"hello"}"#), "{request}");
}

#[tokio::test]
async fn run_returns_the_checked_json_result_and_refuses_stream_only_options_locally() {
    let result = serde_json::json!({"runId": "r1", "provider": "mock", "model": "demo", "text": "Hi", "usage": {"inputTokens": 3.0}, "steps": 1, "finishReason": "stop", "future": 1});
    let mut peer = serve(Reply::Close(json("200 OK", &result)), None).await;
    let client = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap();
    let run = client.run(&hello()).await.unwrap();
    assert_eq!((run.text.as_str(), run.usage.input_tokens), ("Hi", Some(3)));
    assert!(peer.requests.recv().await.unwrap().contains("accept: application/json"));

    let other_model = client.run(&RunRequest::new("mock", "other", "Hello")).await.unwrap_err();
    assert_eq!(other_model.code(), Some(codes::INVALID_RESPONSE));

    let tools: RunRequest =
        serde_json::from_value(serde_json::json!({"provider": "mock", "model": "demo", "input": "x", "tools": ["lookup"],
        "applicationTools": [{"name": "lookup", "description": "d", "inputSchema": {}}]}))
        .unwrap();
    assert_eq!(client.run(&tools).await.unwrap_err().code(), Some(codes::TOOL_STREAM_REQUIRED));
    peer.requests.recv().await.unwrap();
    assert!(peer.requests.try_recv().is_err(), "no request for a locally refused run");
}

#[test]
fn request_types_reject_unknown_and_miscased_fields() {
    let unknown = serde_json::from_value::<RunRequest>(serde_json::json!({"provider": "p", "model": "m", "input": "i", "extra": 1}));
    assert!(unknown.is_err());
    let cased = serde_json::from_value::<RunRequest>(serde_json::json!({"Provider": "p", "model": "m", "input": "i"}));
    assert!(cased.is_err());
}

#[tokio::test]
async fn http_errors_keep_code_message_retryable_outcome_and_status() {
    let envelope = serde_json::json!({"error": {"code": "TOOL_OUTCOME_UNCERTAIN", "message": "check", "retryable": false, "outcome": "uncertain", "x": 1}});
    let peer = serve(Reply::Close(json("409 Conflict", &envelope)), None).await;
    let error = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().run(&hello()).await.unwrap_err();
    let driver = error.as_driver().unwrap();
    assert_eq!(
        (driver.code.as_str(), driver.message.as_str(), driver.retryable, driver.outcome, driver.status),
        ("TOOL_OUTCOME_UNCERTAIN", "check", false, Some(ErrorOutcome::Uncertain), Some(409))
    );

    for (status, retryable) in [("503 Service Unavailable", true), ("429 Too Many Requests", true), ("404 Not Found", false)] {
        let peer = serve(Reply::Close(response(status, &[("content-type", "text/html")], b"<html>oops</html>")), None).await;
        let error = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().protocol().await.unwrap_err();
        let driver = error.as_driver().unwrap();
        assert_eq!((driver.code.as_str(), driver.retryable), (codes::HTTP_ERROR, retryable), "{status}");
        assert_eq!(driver.status, status[..3].parse().ok());
    }
}

#[tokio::test]
async fn redirects_are_never_followed() {
    let mut peer = serve(Reply::Close(response("302 Found", &[("location", "/elsewhere")], b"")), None).await;
    let error = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().stream(&hello()).await.err().unwrap();
    assert_eq!((error.code(), error.as_driver().unwrap().status), (Some(codes::HTTP_ERROR), Some(302)));
    peer.requests.recv().await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(peer.requests.try_recv().is_err(), "the redirect was followed");
}

#[tokio::test]
async fn responses_naming_another_version_or_the_wrong_type_are_refused() {
    let version = response("200 OK", &[("content-type", "application/json"), ("agenticdriver-version", "2.0")], b"{}");
    let peer = serve(Reply::Close(version), None).await;
    let error = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().protocol().await.unwrap_err();
    assert_eq!(error.code(), Some(codes::UNSUPPORTED_PROTOCOL_VERSION));

    let peer = serve(Reply::Close(protocol_body()), None).await;
    let error = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().stream(&hello()).await.err().unwrap();
    assert_eq!(error.code(), Some(codes::INVALID_RESPONSE));
}

#[tokio::test]
async fn failures_end_the_stream_once() {
    let mut events = base_events();
    events[1]["sequence"] = serde_json::json!(3);
    let peer = serve(Reply::Close(sse(&events)), None).await;
    let mut stream = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().stream(&hello()).await.unwrap();
    assert!(stream.next().await.unwrap().is_ok());
    assert_eq!(stream.next().await.unwrap().unwrap_err().code(), Some(codes::INVALID_STREAM));
    assert!(stream.next().await.is_none());

    let failed = serde_json::json!({"type": "run.failed", "runId": "r1", "sequence": 2, "timestamp": "2026-09-20T12:00:00Z",
        "error": {"code": "FUTURE_CODE", "message": "m", "retryable": true}});
    let peer = serve(Reply::Close(sse(&[base_events()[0].clone(), failed])), None).await;
    let events: Vec<_> = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().stream(&hello()).await.unwrap().collect().await;
    match &events[1].as_ref().unwrap().payload {
        EventPayload::RunFailed { error } => assert_eq!((error.code.as_str(), error.retryable), ("FUTURE_CODE", true)),
        other => panic!("{other:?}"),
    }
    assert_eq!(events.len(), 2);
}

fn held_start() -> Reply {
    let head = String::from_utf8(sse(&base_events()[..1])).unwrap();
    Reply::Hold(head.into_bytes())
}

#[tokio::test]
async fn dropping_an_async_stream_closes_the_connection() {
    let mut peer = serve(held_start(), None).await;
    let mut stream = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().stream(&hello()).await.unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap().kind(), "run.started");
    drop(stream);
    closed_within_5s(&mut peer).await;
}

#[tokio::test]
async fn a_dropped_pending_read_closes_the_connection() {
    let mut peer = serve(held_start(), None).await;
    let mut stream = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().stream(&hello()).await.unwrap();
    stream.next().await.unwrap().unwrap();
    assert!(tokio::time::timeout(Duration::from_millis(50), stream.next()).await.is_err(), "the peer sends nothing more");
    drop(stream);
    closed_within_5s(&mut peer).await;
}

#[test]
fn blocking_client_runs_streams_and_closes_on_drop() {
    let server = tokio::runtime::Runtime::new().unwrap();
    let (mut held, complete) =
        server.block_on(async { (serve(held_start(), None).await, serve(Reply::Close(sse(&base_events())), None).await) });

    let client = AgenticClient::new(&complete.url, TOKEN).unwrap();
    let kinds: Vec<_> = client.stream(&hello()).unwrap().map(|e| e.unwrap().kind()).collect();
    assert_eq!(kinds, ["run.started", "text.delta", "run.completed"]);

    let client = AgenticClient::new(&held.url, TOKEN).unwrap();
    let mut events = client.stream(&hello()).unwrap();
    assert_eq!(events.next().unwrap().unwrap().kind(), "run.started");
    drop(events);
    server.block_on(closed_within_5s(&mut held));
}

#[tokio::test]
async fn verified_https_trusts_only_the_given_ca_and_the_certified_name() {
    let pki = Pki::new("client");
    let peer = serve(Reply::Close(protocol_body()), Some(&pki)).await;
    let trusted = AsyncAgenticClient::builder(&peer.url, TOKEN).with_ca_pem(&pki.ca_pem).build().unwrap();
    assert_eq!(trusted.protocol().await.unwrap().version, "1.0");

    let untrusted = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().protocol().await.unwrap_err();
    assert!(matches!(untrusted, Error::Transport(_)), "{untrusted}");

    let by_name = peer.url.replace("127.0.0.1", "localhost");
    let mismatch = AsyncAgenticClient::builder(&by_name, TOKEN).with_ca_pem(&pki.ca_pem).build().unwrap().protocol().await.unwrap_err();
    assert!(matches!(mismatch, Error::Transport(_)), "{mismatch}");
}

#[test]
fn blocking_https_with_private_ca() {
    let pki = Pki::new("blocking");
    let server = tokio::runtime::Runtime::new().unwrap();
    let peer = server.block_on(serve(Reply::Close(sse(&base_events())), Some(&pki)));
    let client = AgenticClient::builder(&peer.url, TOKEN).with_ca_pem(&pki.ca_pem).build().unwrap();
    assert_eq!(client.stream(&hello()).unwrap().count(), 3);
    assert!(matches!(AgenticClient::new(&peer.url, TOKEN).unwrap().protocol(), Err(Error::Transport(_))));
}
