//! The async client against the real host.
use super::*;
use crate::support::live::{live_host, LiveHost, Transport};
use agenticdriver::{codes, ApprovalAction, ApprovalOutcome, AsyncAgenticClient, Error, ReceiptStatus, ToolFunctions};
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
async fn run_with_lookup(host: &LiveHost, action: ApprovalAction, calls: &Arc<AtomicUsize>) -> (Vec<Event>, AsyncAgenticClient) {
    let client = host.async_client();
    let mut stream = client.stream_with_tools(&lookup_request(), lookup(Arc::clone(calls))).await.unwrap();
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        let event = event.unwrap();
        if matches!(event.payload, EventPayload::ApprovalRequested { .. }) {
            let approval = client.approval(&event).unwrap();
            assert_eq!((approval.call().name.as_str(), &approval.call().arguments["query"]), (TOOL, &json!("inbox")));
            assert_eq!(approval.decide(action).await.unwrap().outcome, action.outcome());
        }
        events.push(event);
    }
    (events, client)
}

async fn approved_then_stale(host: &LiveHost) {
    let calls = Arc::new(AtomicUsize::new(0));
    let (events, client) = run_with_lookup(host, ApprovalAction::Approve, &calls).await;
    assert_approved_run(&events);
    assert_eq!(calls.load(SeqCst), 1);
    let stale = client.execution(execution_request(&events)).unwrap();
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
async fn answers_use_their_own_copy_and_a_function_error_is_a_tool_failure() {
    let host = live_host(Transport::Http);
    let client = host.async_client();
    let failing = ToolFunctions::new().register(TOOL, |_, _| async { Err::<Value, _>("the mailbox is offline") });
    let mut stream = client.stream_with_tools(&lookup_request(), failing).await.unwrap();
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        let mut event = event.unwrap();
        if matches!(event.payload, EventPayload::ApprovalRequested { .. }) {
            // The handle keeps the request as delivered; the application's own value may
            // change afterwards, and the host would refuse the changed call.
            let pending = client.approval(&event).unwrap();
            if let EventPayload::ApprovalRequested { approval } = &mut event.payload {
                approval.call.arguments.insert("query".into(), json!("everything"));
                let refused = client.decide_approval(&approval.decision(ApprovalAction::Approve)).await.unwrap_err();
                assert_eq!(refused.code(), Some("APPROVAL_MISMATCH"));
            }
            assert_eq!(pending.approve().await.unwrap().outcome, ApprovalOutcome::Approved);
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
    assert_eq!(client.execution(execution_request(&events)).unwrap().fail().await.unwrap_err().code(), Some(STALE));
}

#[tokio::test]
async fn handles_need_their_event_and_functions_only_declared_tools() {
    let host = live_host(Transport::Http);
    let client = host.async_client();
    let undeclared = ToolFunctions::new().register("send_email", |_, _| async { Ok::<_, Error>(json!({})) });
    let refused = client.stream_with_tools(&lookup_request(), undeclared).await.err().unwrap();
    assert_eq!(refused.code(), Some(codes::INVALID_ARGUMENT));

    let mut stream = client.stream(&lookup_request()).await.unwrap();
    let started = stream.next().await.unwrap().unwrap();
    assert_eq!(client.approval(&started).err().unwrap().code(), Some(codes::INVALID_ARGUMENT));
    assert_eq!(client.execution(&started).err().unwrap().code(), Some(codes::INVALID_ARGUMENT));
}
