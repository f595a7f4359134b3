//! Interactive approvals and application tools: one-call answers and the function runner
//! against the real host over HTTP and verified HTTPS (async and blocking), and the
//! client-side rules on a scripted peer.
mod async_runs;
mod blocking_runs;
mod submissions;

use agenticdriver::{Event, EventPayload, RunRequest};
use serde_json::{json, Value};

/// The application tool the live host's main token may run (and approve).
pub const TOOL: &str = "application_lookup";
pub const STALE: &str = "TOOL_EXECUTION_NOT_FOUND";

/// A run whose model calls the application tool once (it needs interactive approval),
/// then answers with the tool's output.
pub fn lookup_request() -> RunRequest {
    let input = json!({ "mockScript": { "steps": [
        { "actions": [{ "toolCall": { "name": TOOL, "arguments": { "query": "inbox" } } }] },
        { "actions": [{ "echoToolResults": true }] },
    ]}});
    serde_json::from_value(json!({
        "provider": "mock", "model": "demo", "input": input.to_string(), "tools": [TOOL],
        "applicationTools": [{
            "name": TOOL, "description": "Looks a query up in the application",
            "inputSchema": { "type": "object", "properties": { "query": { "type": "string" } }, "required": ["query"] },
            "outputSchema": { "type": "object" }, "requiresApproval": true,
        }],
        "approvals": { "mode": "interactive", "idlePolicy": "pause" },
    }))
    .unwrap()
}

/// What the registered function returns for `arguments`, given whether its progress
/// report was acknowledged.
pub fn lookup_output(arguments: &serde_json::Map<String, Value>, progressed: bool) -> Value {
    json!({ "found": arguments["query"], "progressed": progressed })
}

pub fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::kind).collect()
}

fn position(events: &[Event], kind: &str) -> usize {
    events.iter().position(|e| e.kind() == kind).unwrap_or_else(|| panic!("no {kind} in {:?}", kinds(events)))
}

/// Approved, executed once with acknowledged progress, completed with the output.
pub fn assert_approved_run(events: &[Event]) {
    let order = ["tool.called", "approval.requested", "approval.resolved", "tool.execution.requested", "tool.completed", "run.completed"];
    let positions: Vec<usize> = order.iter().map(|kind| position(events, kind)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{:?}", kinds(events));
    assert_eq!(events.iter().filter(|e| e.kind() == "tool.execution.requested").count(), 1);
    match &events.last().unwrap().payload {
        EventPayload::RunCompleted { result } => {
            let text: Value = serde_json::from_str(&result.text).unwrap();
            assert_eq!(text, json!([{ "found": "inbox", "progressed": true }]));
        }
        other => panic!("{other:?}"),
    }
}

/// Denied: the tool was never dispatched and the run failed `APPROVAL_DENIED`.
pub fn assert_denied_run(events: &[Event]) {
    assert!(!events.iter().any(|e| e.kind() == "tool.execution.requested"), "{:?}", kinds(events));
    match &events.last().unwrap().payload {
        EventPayload::RunFailed { error } => assert_eq!(error.code, "APPROVAL_DENIED"),
        other => panic!("{other:?}"),
    }
}

pub fn execution_request(events: &[Event]) -> &Event {
    &events[position(events, "tool.execution.requested")]
}
