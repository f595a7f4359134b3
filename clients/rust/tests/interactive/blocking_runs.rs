//! The blocking client against the real host.
use super::*;
use crate::support::live::{live_host, LiveHost, Transport};
use agenticdriver::blocking::{ToolFunctions, ToolIter};
use agenticdriver::{ApprovalAction, ReceiptStatus};

/// Streams `lookup_request` with the function registered, answering the approval with
/// `action`; also returns how often the function ran.
fn run_with_lookup(host: &LiveHost, action: ApprovalAction) -> (Vec<Event>, ToolIter, usize) {
    let (sender, ran) = std::sync::mpsc::channel();
    let lookup = ToolFunctions::new().register(TOOL, move |arguments, context| {
        sender.send(()).unwrap();
        let receipt = context.progress()?;
        Ok::<_, agenticdriver::Error>(lookup_output(&arguments, receipt.status == ReceiptStatus::Progress))
    });
    let mut stream = host.blocking_client().stream(&lookup_request()).unwrap().with_tools(lookup).unwrap();
    let mut events = Vec::new();
    while let Some(event) = stream.next() {
        let event = event.unwrap();
        if matches!(event.payload, EventPayload::ApprovalRequested { .. }) {
            assert_eq!(stream.approval(&event).unwrap().decide(action).unwrap().outcome, action.outcome());
        }
        events.push(event);
    }
    let calls = ran.try_iter().count();
    (events, stream, calls)
}

fn approved_then_stale(host: &LiveHost) {
    let (events, stream, calls) = run_with_lookup(host, ApprovalAction::Approve);
    assert_approved_run(&events);
    assert_eq!(calls, 1);
    let stale = stream.execution(execution_request(&events)).unwrap();
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
    let mut stream = host.blocking_client().stream(&lookup_request()).unwrap().with_tools(ToolFunctions::new()).unwrap();
    let mut events = Vec::new();
    while let Some(event) = stream.next() {
        let event = event.unwrap();
        match event.payload {
            EventPayload::ApprovalRequested { .. } => drop(stream.approval(&event).unwrap().approve().unwrap()),
            EventPayload::ToolExecutionRequested { .. } => {
                let ticket = stream.execution(&event).unwrap();
                assert_eq!(ticket.progress().unwrap().status, ReceiptStatus::Progress);
                let arguments = ticket.call().arguments.clone();
                assert_eq!(ticket.complete(lookup_output(&arguments, true)).unwrap().status, ReceiptStatus::Accepted);
            }
            _ => {}
        }
        events.push(event);
    }
    assert_approved_run(&events);
}
