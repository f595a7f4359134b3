//! The async client against the real host.
use super::*;
use crate::support::live::{live_host, LiveHost, Transport};
use agenticdriver::{codes, ApprovalAction, ApprovalOutcome, Error, ReceiptStatus, ToolFunctions};
use futures_util::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

/// The application function: reports progress after its (pretend) work, then answers.
fn lookup(calls: Arc<AtomicUsize>) -> ToolFunctions {
    ToolFunctions::new().register(TOOL, move |arguments, context| {
        calls.fetch_add(1, SeqCst);
        async move {
            let receipt = context.progress().await?;
            Ok::<_, Error>(lookup_output(&arguments, receipt.status == ReceiptStatus::Progress))
        }
    })
}

/// Streams `lookup_request` with the function registered, answering the approval with `action`.
async fn run_with_lookup(host: &LiveHost, action: ApprovalAction, calls: &Arc<AtomicUsize>) -> (Vec<Event>, agenticdriver::ToolStream) {
    let client = host.async_client();
    let mut stream = client.stream(&lookup_request()).await.unwrap().with_tools(lookup(Arc::clone(calls))).unwrap();
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        let event = event.unwrap();
        if matches!(event.payload, EventPayload::ApprovalRequested { .. }) {
            let approval = stream.approval(&event).unwrap();
            assert_eq!((approval.call().name.as_str(), &approval.call().arguments["query"]), (TOOL, &json!("inbox")));
            assert_eq!(approval.decide(action).await.unwrap().outcome, action.outcome());
        }
        events.push(event);
    }
    (events, stream)
}

async fn approved_then_stale(host: &LiveHost) {
    let calls = Arc::new(AtomicUsize::new(0));
    let (events, stream) = run_with_lookup(host, ApprovalAction::Approve, &calls).await;
    assert_approved_run(&events);
    assert_eq!(calls.load(SeqCst), 1);
    let stale = stream.execution(execution_request(&events)).unwrap();
    assert_eq!(stale.progress().await.unwrap_err().code(), Some(STALE));
    let second = stale.complete(json!({ "found": "again" })).await.unwrap_err();
    assert_eq!((second.code(), second.as_driver().unwrap().status), (Some(STALE), Some(404)));
}

async fn denied_never_runs(host: &LiveHost) {
    let calls = Arc::new(AtomicUsize::new(0));
    let (events, _) = run_with_lookup(host, ApprovalAction::Deny, &calls).await;
    assert_denied_run(&events);
    assert_eq!(calls.load(SeqCst), 0, "a denied call never runs");
}

#[tokio::test]
async fn approved_function_over_http() {
    let host = live_host(Transport::Http);
    approved_then_stale(host).await;
    denied_never_runs(host).await;
}

#[tokio::test]
async fn approved_function_over_verified_https() {
    let host = live_host(Transport::Https);
    approved_then_stale(host).await;
    denied_never_runs(host).await;
}

#[tokio::test]
async fn answers_use_the_streams_copy_and_a_function_error_is_a_tool_failure() {
    let host = live_host(Transport::Http);
    let client = host.async_client();
    let failing = ToolFunctions::new().register(TOOL, |_, _| async { Err::<Value, _>("the mailbox is offline") });
    let mut stream = client.stream(&lookup_request()).await.unwrap().with_tools(failing).unwrap();
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        let event = event.unwrap();
        if let EventPayload::ApprovalRequested { approval } = &event.payload {
            // The application's own value may change; the host would refuse the changed call.
            let mut altered = event.clone();
            let mut changed = approval.clone();
            changed.call.arguments.insert("query".into(), json!("everything"));
            altered.payload = EventPayload::ApprovalRequested { approval: changed.clone() };
            let refused = client.decide_approval(&changed.decision(ApprovalAction::Approve)).await.unwrap_err();
            assert_eq!(refused.code(), Some("APPROVAL_MISMATCH"));
            assert_eq!(stream.approval(&altered).unwrap().approve().await.unwrap().outcome, ApprovalOutcome::Approved);
        }
        events.push(event);
    }
    assert!(events.iter().any(|e| e.kind() == "tool.execution.requested"));
    assert!(!events.iter().any(|e| e.kind() == "tool.completed"));
    match &events.last().unwrap().payload {
        EventPayload::RunFailed { error } => {
            assert_eq!((error.code.as_str(), error.outcome), ("APPLICATION_TOOL_FAILED", Some(agenticdriver::ErrorOutcome::Uncertain)))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(stream.execution(execution_request(&events)).unwrap().fail().await.unwrap_err().code(), Some(STALE));
}

#[tokio::test]
async fn handles_come_only_from_the_stream_and_functions_only_for_declared_tools() {
    let host = live_host(Transport::Http);
    let client = host.async_client();
    let undeclared = ToolFunctions::new().register("send_email", |_, _| async { Ok::<_, Error>(json!({})) });
    let refused = client.stream(&lookup_request()).await.unwrap().with_tools(undeclared).err().unwrap();
    assert_eq!(refused.code(), Some(codes::INVALID_ARGUMENT));

    let mut stream = client.stream(&lookup_request()).await.unwrap();
    let started = stream.next().await.unwrap().unwrap();
    assert_eq!(stream.approval(&started).err().unwrap().code(), Some(codes::INVALID_ARGUMENT));
    let forged: Event = serde_json::from_value(json!({
        "type": "tool.execution.requested", "runId": started.run_id, "sequence": 5, "timestamp": started.timestamp,
        "execution": { "executionId": "not-from-this-stream", "runId": started.run_id, "call": { "id": "c1", "name": TOOL, "arguments": {} } },
    }))
    .unwrap();
    assert_eq!(stream.execution(&forged).err().unwrap().code(), Some(codes::INVALID_ARGUMENT));
}
