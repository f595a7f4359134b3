//! The blocking client against the real host.
use super::*;
use crate::support::live::{live_host, LiveHost, Transport};
use agenticdriver::blocking::{AgenticClient, ToolFunctions};
use agenticdriver::{ApprovalAction, ReceiptStatus};

/// Streams `lookup_request` with the function registered, answering the approval with
/// `action`; also returns how often the function ran.
fn run_with_lookup(host: &LiveHost, action: ApprovalAction) -> (Vec<Event>, AgenticClient, usize) {
    let (sender, ran) = std::sync::mpsc::channel();
    let lookup = ToolFunctions::new().register(TOOL, move |arguments, context| {
        sender.send(()).unwrap();
        let receipt = context.progress()?;
        Ok::<_, agenticdriver::Error>(lookup_output(&arguments, receipt.status == ReceiptStatus::Progress))
    });
    let client = host.blocking_client();
    let mut events = Vec::new();
    for event in client.stream_with_tools(&lookup_request(), lookup).unwrap() {
        let event = event.unwrap();
        if matches!(event.payload, EventPayload::ApprovalRequested { .. }) {
            assert_eq!(client.approval(&event).unwrap().decide(action).unwrap().outcome, action.outcome());
        }
        events.push(event);
    }
    let calls = ran.try_iter().count();
    (events, client, calls)
}

fn approved_then_stale(host: &LiveHost) {
    let (events, client, calls) = run_with_lookup(host, ApprovalAction::Approve);
    assert_approved_run(&events);
    assert_eq!(calls, 1);
    let stale = client.execution(execution_request(&events)).unwrap();
    assert_eq!(stale.progress().unwrap_err().code(), Some(STALE));
    assert_eq!(stale.complete(json!({ "found": "again" })).unwrap_err().code(), Some(STALE));
}

fn denied_never_runs(host: &LiveHost) {
    let (events, _, calls) = run_with_lookup(host, ApprovalAction::Deny);
    assert_denied_run(&events);
    assert_eq!(calls, 0, "a denied call never runs");
}

#[test]
fn blocking_approved_function_over_http() {
    let host = live_host(Transport::Http);
    approved_then_stale(host);
    denied_never_runs(host);
}

#[test]
fn blocking_approved_function_over_verified_https() {
    let host = live_host(Transport::Https);
    approved_then_stale(host);
    denied_never_runs(host);
}

#[test]
fn requests_for_unregistered_tools_are_left_to_the_caller() {
    let host = live_host(Transport::Http);
    let client = host.blocking_client();
    let mut events = Vec::new();
    for event in client.stream_with_tools(&lookup_request(), ToolFunctions::new()).unwrap() {
        let event = event.unwrap();
        match event.payload {
            EventPayload::ApprovalRequested { .. } => drop(client.approval(&event).unwrap().approve().unwrap()),
            EventPayload::ToolExecutionRequested { .. } => {
                let pending = client.execution(&event).unwrap();
                assert_eq!(pending.progress().unwrap().status, ReceiptStatus::Progress);
                let arguments = pending.call().arguments.clone();
                assert_eq!(pending.complete(lookup_output(&arguments, true)).unwrap().status, ReceiptStatus::Accepted);
            }
            _ => {}
        }
        events.push(event);
    }
    assert_approved_run(&events);
}
