"""Decision and tool-execution calls against scripted loopback hosts: the bodies sent, the
receipt checks, and misuse caught before any request."""
from __future__ import annotations

import asyncio
import json
import math
from typing import Any, Callable, Dict, List

import pytest

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError, ToolContext
from hosts import STAMP, TOKEN, ScriptedHost, event, result, sse

CALL = {"id": "call-1", "name": "send_email", "arguments": {"to": ["ana@example.com"], "draft": {"subject": "Hi"}}}
DECISION: Dict[str, Any] = {"approvalId": "approval-1", "runId": "run-1", "call": CALL, "decision": "approve"}
IDENTITY: Dict[str, Any] = {"executionId": "execution-1", "runId": "run-1", "callId": "call-1"}
RESOLUTION = {"approvalId": "approval-1", "runId": "run-1", "callId": "call-1", "outcome": "approved", "decidedAt": STAMP}


def sync_call(url: str, method: str, argument: Any) -> Any:
    return getattr(AgenticClient(url, TOKEN), method)(argument)


def async_call(url: str, method: str, argument: Any) -> Any:
    async def main() -> Any:
        async with AsyncAgenticClient(url, TOKEN) as client:
            return await getattr(client, method)(argument)

    return asyncio.run(main())


CALLS = pytest.mark.parametrize("call", [sync_call, async_call], ids=["sync", "async"])


def code_of(call: Callable[[], Any]) -> str:
    with pytest.raises(DriverError) as raised:
        call()
    return raised.value.code


@CALLS
def test_a_decision_is_posted_as_sent_and_its_receipt_returned(host: ScriptedHost, call: Any) -> None:
    host.routes["approvals/decisions"] = lambda x: x.reply(200, {**RESOLUTION, "extra": True})
    receipt = call(host.url, "decide_approval", DECISION)
    assert receipt["outcome"] == "approved"
    sent = host.requests[-1]
    assert (sent["method"], sent["path"]) == ("POST", "/v1/approvals/decisions")
    assert sent["headers"]["Content-Type"] == "application/json"
    assert json.loads(sent["body"]) == DECISION


@CALLS
@pytest.mark.parametrize("decision, outcome", [("deny", "approved"), ("cancel", "denied"), ("approve", "expired")])
def test_a_receipt_with_another_outcome_than_the_decision_is_invalid(host: ScriptedHost, call: Any, decision: str, outcome: str) -> None:
    host.routes["approvals/decisions"] = lambda x: x.reply(200, {**RESOLUTION, "outcome": outcome})
    assert code_of(lambda: call(host.url, "decide_approval", {**DECISION, "decision": decision})) == "INVALID_RESPONSE"


@CALLS
@pytest.mark.parametrize(
    "method, endpoint, body, status",
    [
        ("report_tool_progress", "tool-executions/progress", IDENTITY, "progress"),
        ("complete_tool", "tool-executions/results", {**IDENTITY, "output": {"sent": True}}, "accepted"),
        ("complete_tool", "tool-executions/results", {**IDENTITY, "error": "APPLICATION_TOOL_FAILED"}, "accepted"),
    ],
)
def test_tool_execution_reports_check_the_receipt_status(host: ScriptedHost, call: Any, method: str, endpoint: str, body: Dict[str, Any], status: str) -> None:
    host.routes[endpoint] = lambda x: x.reply(200, {**IDENTITY, "status": status})
    assert call(host.url, method, body)["status"] == status
    assert json.loads(host.requests[-1]["body"]) == body
    wrong = "accepted" if status == "progress" else "progress"
    host.routes[endpoint] = lambda x: x.reply(200, {**IDENTITY, "status": wrong})
    assert code_of(lambda: call(host.url, method, body)) == "INVALID_RESPONSE"


@CALLS
def test_host_errors_keep_their_code(host: ScriptedHost, call: Any) -> None:
    host.routes["tool-executions/results"] = lambda x: x.reply(
        404, {"error": {"code": "TOOL_EXECUTION_NOT_FOUND", "message": "No such pending tool execution.", "retryable": False}})
    assert code_of(lambda: call(host.url, "complete_tool", {**IDENTITY, "output": 1})) == "TOOL_EXECUTION_NOT_FOUND"


@CALLS
@pytest.mark.parametrize(
    "method, body, code",
    [
        ("decide_approval", {**DECISION, "decision": "maybe"}, "INVALID_APPROVAL"),
        ("decide_approval", {**DECISION, "subject": "someone-else"}, "INVALID_APPROVAL"),
        ("decide_approval", {**DECISION, "call": {**CALL, "name": "not a name"}}, "INVALID_APPROVAL"),
        ("decide_approval", {**DECISION, "approvalId": ""}, "INVALID_APPROVAL"),
        ("report_tool_progress", {**IDENTITY, "output": 1}, "INVALID_TOOL_EXECUTION"),
        ("report_tool_progress", {**IDENTITY, "callId": "x" * 257}, "INVALID_TOOL_EXECUTION"),
        ("complete_tool", dict(IDENTITY), "INVALID_TOOL_EXECUTION"),
        ("complete_tool", {**IDENTITY, "output": 1, "error": "APPLICATION_TOOL_FAILED"}, "INVALID_TOOL_EXECUTION"),
        ("complete_tool", {**IDENTITY, "error": "it broke"}, "INVALID_TOOL_EXECUTION"),
        ("complete_tool", {**IDENTITY, "output": {"value": math.nan}}, "INVALID_TOOL_EXECUTION"),
        ("complete_tool", {**IDENTITY, "output": {"when": object()}}, "INVALID_TOOL_EXECUTION"),
    ],
)
def test_malformed_submissions_fail_before_any_request(host: ScriptedHost, call: Any, method: str, body: Dict[str, Any], code: str) -> None:
    assert code_of(lambda: call(host.url, method, body)) == code
    assert host.requests == []


# --- The stream's one-call answers ---------------------------------------------------

APPROVAL = {"approvalId": "approval-1", "runId": "run-1", "call": CALL, "requestedAt": STAMP, "idlePolicy": "pause"}
EXECUTION = {"executionId": "execution-1", "runId": "run-1", "call": CALL}
TOOL = {"name": "send_email", "description": "Send an email", "inputSchema": {"type": "object"}}
REQUEST: Dict[str, Any] = {"provider": "mock", "model": "demo", "input": "Hi", "tools": ["send_email"],
                           "applicationTools": [TOOL], "approvals": {"mode": "interactive", "idlePolicy": "pause"}}


def interactive_events() -> List[Dict[str, Any]]:
    return [
        event("run.started", 1, provider="mock", model="demo"),
        event("approval.requested", 2, approval=APPROVAL),
        event("tool.execution.requested", 3, execution=EXECUTION),
        event("run.completed", 4, result=result()),
    ]


def test_answers_use_the_request_as_delivered_not_the_event_mutated_later(host: ScriptedHost) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(interactive_events()))
    host.routes["approvals/decisions"] = lambda x: x.reply(200, {**RESOLUTION, "outcome": "cancelled"})
    host.routes["tool-executions/results"] = lambda x: x.reply(200, {**IDENTITY, "status": "accepted"})
    client = AgenticClient(host.url, TOKEN)
    with client.stream(REQUEST) as stream:  # type: ignore[arg-type]
        for item in stream:
            if item["type"] == "approval.requested":
                pending = client.approval(item)
                item["approval"]["call"]["arguments"]["to"] = ["mallory@example.com"]
                assert pending.cancel()["outcome"] == "cancelled"
            elif item["type"] == "tool.execution.requested":
                execution = client.execution(item)
                item["execution"]["executionId"] = "forged"
                execution.fail()
    bodies = [json.loads(request["body"]) for request in host.requests[1:]]
    assert bodies == [{**DECISION, "decision": "cancel"}, {**IDENTITY, "error": "APPLICATION_TOOL_FAILED"}]


def test_stream_with_tools_copies_the_execution_before_the_caller_sees_it(host: ScriptedHost) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(interactive_events()))
    host.routes["approvals/decisions"] = lambda x: x.reply(200, {**RESOLUTION, "outcome": "cancelled"})
    host.routes["tool-executions/results"] = lambda x: x.reply(200, {**IDENTITY, "status": "accepted"})
    seen: List[Any] = []

    def send_email(arguments: Dict[str, Any], context: ToolContext) -> Any:
        seen.append((arguments, context.execution["executionId"]))
        return {"messageId": "m-1"}

    client = AgenticClient(host.url, TOKEN)
    with client.stream_with_tools(REQUEST, {"send_email": send_email}) as stream:  # type: ignore[arg-type]
        for item in stream:
            if item["type"] == "tool.execution.requested":
                item["execution"]["executionId"] = "forged"
                item["execution"]["call"]["arguments"]["to"] = ["mallory@example.com"]
            elif item["type"] == "approval.requested":
                client.approval(item).cancel()
    assert seen == [(CALL["arguments"], "execution-1")]
    assert json.loads(host.requests[-1]["body"]) == {**IDENTITY, "output": {"messageId": "m-1"}}


def test_handles_refuse_events_that_are_not_their_requests(host: ScriptedHost) -> None:
    client = AgenticClient(host.url, TOKEN)
    for bad in ({"type": "text.delta"}, {"type": "approval.requested"}, "approval-1", None):
        with pytest.raises(DriverError) as raised:
            client.approval(bad)  # type: ignore[arg-type]
        assert raised.value.code == "INVALID_ARGUMENT"
        with pytest.raises(DriverError) as raised:
            client.execution(bad)  # type: ignore[arg-type]
        assert raised.value.code == "INVALID_ARGUMENT"
    assert host.requests == []


def test_async_stream_runs_registered_async_functions_and_reports_raised_failures(host: ScriptedHost) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(interactive_events()))
    host.routes["tool-executions/results"] = lambda x: x.reply(200, {**IDENTITY, "status": "accepted"})

    async def send_email(arguments: Dict[str, Any], context: Any) -> Any:
        raise ConnectionError("mail server down")

    async def main() -> List[str]:
        async with AsyncAgenticClient(host.url, TOKEN) as client:
            async with client.stream_with_tools(REQUEST, {"send_email": send_email}) as stream:  # type: ignore[arg-type]
                return [item["type"] async for item in stream]

    assert asyncio.run(main())[-1] == "run.completed"
    assert json.loads(host.requests[-1]["body"]) == {**IDENTITY, "error": "APPLICATION_TOOL_FAILED"}


@pytest.mark.parametrize("functions", [{"other_tool": lambda a, t: None}, {"send_email": "not callable"}])
def test_functions_must_be_callables_for_declared_tools(host: ScriptedHost, functions: Dict[str, Any]) -> None:
    with pytest.raises(DriverError) as raised:
        AgenticClient(host.url, TOKEN).stream_with_tools(REQUEST, functions)  # type: ignore[arg-type]
    assert raised.value.code == "INVALID_ARGUMENT"
    assert host.requests == []
