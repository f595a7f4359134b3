//! Client-side rules: malformed submissions are refused with the host's own codes before
//! any request, and approval / tool-execution events need a run that opted in.
use crate::support::live::{live_host, Transport};
use crate::support::*;
use agenticdriver::*;
use futures_util::StreamExt;
use serde_json::{json, Value};

fn decision(edit: impl FnOnce(&mut ApprovalDecision)) -> ApprovalDecision {
    let mut decision = ApprovalDecision {
        approval_id: "a1".into(),
        run_id: "r1".into(),
        call: DecidedCall { id: "c1".into(), name: "send_email".into(), arguments: JsonObject::new() },
        decision: ApprovalAction::Approve,
    };
    edit(&mut decision);
    decision
}

fn identity() -> ToolExecutionIdentity {
    ToolExecutionIdentity { execution_id: "e1".into(), run_id: "r1".into(), call_id: "c1".into() }
}

fn proto_object() -> Value {
    serde_json::from_str(r#"{"nested": [{"__proto__": {"admin": true}}]}"#).unwrap()
}

fn bad_decisions() -> Vec<ApprovalDecision> {
    vec![
        decision(|d| d.approval_id.clear()),
        decision(|d| d.run_id = "r".repeat(257)),
        decision(|d| d.call.id.clear()),
        decision(|d| d.call.name = "send-email".into()),
        decision(|d| d.call.arguments = proto_object().as_object().unwrap().clone()),
    ]
}

fn bad_identities() -> Vec<ToolExecutionIdentity> {
    vec![
        ToolExecutionIdentity { execution_id: String::new(), ..identity() },
        ToolExecutionIdentity { call_id: "c".repeat(257), ..identity() },
    ]
}

fn bad_results() -> Vec<ToolExecutionResult> {
    let both =
        ToolExecutionResult { error: Some(ToolFailure::ApplicationToolFailed), ..ToolExecutionResult::success(identity(), json!(1)) };
    let neither = ToolExecutionResult { output: None, error: None, ..both.clone() };
    let empty_run = ToolExecutionResult::failure(ToolExecutionIdentity { run_id: String::new(), ..identity() });
    vec![both, neither, empty_run, ToolExecutionResult::success(identity(), proto_object())]
}

#[tokio::test]
async fn malformed_submissions_are_refused_before_any_request() {
    let mut peer = serve(Reply::Close(json("500 Internal Server Error", &json!({}))), None).await;
    let client = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap();
    for bad in bad_decisions() {
        assert_eq!(client.decide_approval(&bad).await.unwrap_err().code(), Some(codes::INVALID_APPROVAL), "{bad:?}");
    }
    for bad in bad_identities() {
        assert_eq!(client.report_tool_progress(&bad).await.unwrap_err().code(), Some(codes::INVALID_TOOL_EXECUTION), "{bad:?}");
    }
    for bad in bad_results() {
        assert_eq!(client.complete_tool(&bad).await.unwrap_err().code(), Some(codes::INVALID_TOOL_EXECUTION), "{bad:?}");
    }
    assert!(peer.requests.try_recv().is_err(), "a malformed submission reached the peer");
}

/// The real host's code for a body sent as is.
async fn host_code(path: &str, body: &impl serde::Serialize) -> String {
    let host = live_host(Transport::Http);
    let response = reqwest::Client::new()
        .post(format!("{}/{path}", host.url))
        .bearer_auth(&host.token)
        .header("agenticdriver-version", "1.0")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(body).unwrap())
        .send()
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    body["error"]["code"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn the_host_answers_the_same_codes_for_the_same_bodies() {
    for bad in bad_decisions() {
        assert_eq!(host_code("v1/approvals/decisions", &bad).await, codes::INVALID_APPROVAL, "{bad:?}");
    }
    for bad in bad_identities() {
        assert_eq!(host_code("v1/tool-executions/progress", &bad).await, codes::INVALID_TOOL_EXECUTION, "{bad:?}");
    }
    for bad in bad_results() {
        assert_eq!(host_code("v1/tool-executions/results", &bad).await, codes::INVALID_TOOL_EXECUTION, "{bad:?}");
    }
}

#[tokio::test]
async fn approval_and_execution_events_need_a_run_that_opted_in() {
    let at = "2026-09-20T12:00:00.000Z";
    let call = json!({ "id": "c1", "name": super::TOOL, "arguments": {} });
    let unasked = [
        json!({ "type": "approval.requested", "runId": "r1", "sequence": 2, "timestamp": at,
            "approval": { "approvalId": "a1", "runId": "r1", "call": call, "requestedAt": at, "idlePolicy": "pause" } }),
        json!({ "type": "tool.execution.requested", "runId": "r1", "sequence": 2, "timestamp": at,
            "execution": { "executionId": "e1", "runId": "r1", "call": call } }),
    ];
    for event in unasked {
        let peer = serve(Reply::Close(sse(&[base_events()[0].clone(), event])), None).await;
        let request = RunRequest { tools: Some(vec![super::TOOL.into()]), ..RunRequest::new("mock", "demo", "Hello") };
        let mut stream = AsyncAgenticClient::new(&peer.url, TOKEN).unwrap().stream(&request).await.unwrap();
        assert_eq!(stream.next().await.unwrap().unwrap().kind(), "run.started");
        assert_eq!(stream.next().await.unwrap().unwrap_err().code(), Some(codes::UNSUPPORTED_EVENT));
        assert!(stream.next().await.is_none());
    }
}
