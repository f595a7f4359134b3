"""Run records in both clients: ``read_run``, ``run_events`` and ``follow_run`` over real loopback
HTTP — the record and page rules every client shares, ``follow_run`` resuming with
``Last-Event-ID`` against a loopback SSE server that drops its connections, and the real host."""
from __future__ import annotations

import asyncio
import secrets
import threading
import json
from typing import Any, Callable, Dict, List, Optional

import pytest

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError
from hosts import TOKEN, Exchange, ScriptedHost
from live import LiveHost

RUN = "00000000-0000-4000-8000-000000000002"
OTHER = "00000000-0000-4000-8000-000000000009"
T0 = "2026-09-21T12:00:00.000Z"
T1 = "2026-09-22T12:00:00.000Z"
STREAM = f"runs/{RUN}/stream"
Json = Dict[str, Any]


def sync_call(url: str, method: str, *args: Any, **kwargs: Any) -> Any:
    value = getattr(AgenticClient(url, TOKEN), method)(*args, **kwargs)
    return [event["sequence"] for event in value] if method == "follow_run" else value


def async_call(url: str, method: str, *args: Any, **kwargs: Any) -> Any:
    async def main() -> Any:
        async with AsyncAgenticClient(url, TOKEN) as client:
            value = getattr(client, method)(*args, **kwargs)
            if method == "follow_run":
                return [event["sequence"] async for event in value]
            return await value

    return asyncio.run(main())


CALLS = pytest.mark.parametrize("call", [sync_call, async_call], ids=["sync", "async"])


def failure(call: Callable[[], Any]) -> DriverError:
    with pytest.raises(DriverError) as raised:
        call()
    return raised.value


def answer(value: Any, status: int = 200) -> Callable[[Exchange], None]:
    return lambda exchange: exchange.reply(status, value)


def result(**overrides: Any) -> Json:
    return {"runId": RUN, "provider": "mock", "model": "demo", "text": "Hello", "usage": {}, "steps": 1, "finishReason": "stop", **overrides}


def run(**overrides: Any) -> Json:
    value: Json = {"runId": RUN, "mode": "attached", "provider": "mock", "model": "demo", "state": "completed", "cursor": 4,
                   "createdAt": T0, "updatedAt": T0, "expiresAt": T1, "result": result()}
    value.update(overrides)
    return {key: item for key, item in value.items() if item is not None}


def running(**overrides: Any) -> Json:
    return run(**{"state": "running", "cursor": 2, "expiresAt": None, "result": None, **overrides})


def ev(kind: str, sequence: int, **payload: Any) -> Json:
    return {"type": kind, "runId": RUN, "sequence": sequence, "timestamp": T0, **payload}


def log() -> List[Json]:
    return [ev("run.started", 1, provider="mock", model="demo"), ev("step.started", 2, step=1), ev("text.delta", 3, text="Hello"),
            ev("run.completed", 4, result=result())]


def page(**overrides: Any) -> Json:
    return {"run": run(), "events": log(), "nextCursor": 4, "hasMore": False, **overrides}


@CALLS
def test_read_run_sends_the_id_and_checks_the_record(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/read"] = answer(run())
    assert call(host.url, "read_run", RUN)["state"] == "completed"
    assert json.loads(host.requests[0]["body"]) == {"runId": RUN}


@CALLS
@pytest.mark.parametrize("record", [
    run(runId=OTHER, result=result(runId=OTHER)),
    running(expiresAt=T1),
    run(state="failed"),
    run(error={"code": "X", "message": "x", "retryable": False}),
    run(jobId="00000000-0000-4000-8000-000000000001"),
    run(mode="background"),
    run(result=result(model="other")),
    run(state="paused"),
], ids=["another-run", "live-expiry", "result-when-failed", "error-when-completed", "job-id-attached", "no-job-id-background", "result-model", "state"])
def test_run_info_invariants(host: ScriptedHost, call: Any, record: Json) -> None:
    host.routes["runs/read"] = answer(record)
    assert failure(lambda: call(host.url, "read_run", RUN)).code == "INVALID_RESPONSE"


@CALLS
def test_run_calls_are_checked_before_sending_and_host_errors_pass_through(host: ScriptedHost, call: Any) -> None:
    assert failure(lambda: call(host.url, "read_run", "not-a-uuid")).code == "INVALID_RUN_READ"
    assert failure(lambda: call(host.url, "run_events", {"runId": RUN, "after": -1})).code == "INVALID_RUN_CURSOR"
    assert failure(lambda: call(host.url, "follow_run", RUN, after=-1)).code == "INVALID_RUN_CURSOR"
    assert host.requests == []
    host.routes["runs/read"] = answer({"error": {"code": "RUN_NOT_FOUND", "message": "No such run.", "retryable": False}}, 404)
    assert failure(lambda: call(host.url, "read_run", RUN)).code == "RUN_NOT_FOUND"


@CALLS
def test_a_whole_page_is_valid(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/events"] = answer(page())
    assert len(call(host.url, "run_events", {"runId": RUN, "after": 0})["events"]) == 4


BROKEN_PAGES = {
    "another-run": page(run=run(runId=OTHER, result=result(runId=OTHER))),
    "event-of-another-run": page(events=[log()[0], {**log()[1], "runId": OTHER}, *log()[2:]]),
    "gap": page(events=[log()[0], {**log()[1], "sequence": 3}, *log()[2:]]),
    "started-not-first": page(events=[{**e, "sequence": i + 1} for i, e in enumerate([log()[1], log()[0], *log()[2:]])]),
    "beyond-cursor": page(run=running(cursor=3)),
    "terminal-while-running": page(run=running(cursor=4)),
    "next-cursor": page(nextCursor=3),
    "has-more-at-end": page(hasMore=True),
}


@CALLS
@pytest.mark.parametrize("name", sorted(BROKEN_PAGES))
def test_broken_run_pages_are_invalid(host: ScriptedHost, call: Any, name: str) -> None:
    host.routes["runs/events"] = answer(BROKEN_PAGES[name])
    assert failure(lambda: call(host.url, "run_events", {"runId": RUN, "after": 0})).code == "INVALID_RESPONSE"


def frame(event: Json) -> bytes:
    return f"id: {event['sequence']}\nevent: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def last_event_ids(host: ScriptedHost) -> List[Optional[str]]:
    return [next((value for name, value in request["headers"].items() if name.lower() == "last-event-id"), None)
            for request in host.requests if request["path"].endswith("/stream")]


def run_stream(host: ScriptedHost, *connections: Callable[[Exchange, int], None]) -> None:
    count = [0]

    def route(exchange: Exchange) -> None:
        handle = connections[min(count[0], len(connections) - 1)]
        count[0] += 1
        handle(exchange, int(exchange.headers.get("Last-Event-ID") or 0))

    host.routes[STREAM] = route


def send_and_drop(to: int) -> Callable[[Exchange, int], None]:
    return lambda exchange, after: exchange.stream(b"".join(frame(event) for event in log()[after:to]))


def send_to_end(exchange: Exchange, after: int) -> None:
    exchange.stream(b"".join(frame(event) for event in log()[after:]))


@CALLS
def test_follow_resumes_with_last_event_id(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/read"] = answer(running(cursor=1))
    run_stream(host, send_and_drop(2), send_to_end)
    assert call(host.url, "follow_run", RUN, initial_delay=0.005) == [1, 2, 3, 4]
    assert last_event_ids(host) == ["0", "2"]


@CALLS
def test_follow_starts_after_and_refuses_after_beyond_the_cursor(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/read"] = answer(running(cursor=2))
    run_stream(host, send_to_end)
    assert call(host.url, "follow_run", RUN, after=2) == [3, 4]
    host.requests.clear()
    assert failure(lambda: call(host.url, "follow_run", RUN, after=3)).code == "INVALID_RUN_CURSOR"
    assert last_event_ids(host) == []


@CALLS
def test_follow_gives_up_with_run_stream_lost(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/read"] = answer(running())
    run_stream(host, send_and_drop(0))
    error = failure(lambda: call(host.url, "follow_run", RUN, max_attempts=3, initial_delay=0.005))
    assert error.code == "RUN_STREAM_LOST"
    assert error.retryable is True
    assert len(last_event_ids(host)) == 3


@CALLS
def test_follow_refuses_a_repeated_event_and_opens_no_stream_for_a_finished_run_read_to_its_end(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/read"] = answer(running())
    run_stream(host, lambda exchange, _after: exchange.stream(frame(log()[0]) + frame(log()[0])))
    assert failure(lambda: call(host.url, "follow_run", RUN)).code == "INVALID_STREAM"
    host.requests.clear()
    host.routes["runs/read"] = answer(run())
    assert call(host.url, "follow_run", RUN, after=4) == []
    assert last_event_ids(host) == []


def test_an_attached_run_is_read_back_paged_and_followed_on_the_real_host(live_host: LiveHost) -> None:
    client = AgenticClient(live_host.url, live_host.token, ca_file=live_host.ca_file)
    answered = client.run({"provider": "mock", "model": "demo", "input": "read me back"})
    record = client.read_run(answered["runId"])
    assert record["mode"] == "attached"
    assert record["state"] == "completed"
    assert record.get("result") == answered
    followed = list(client.follow_run(answered["runId"]))
    assert followed[-1]["type"] == "run.completed"
    assert client.run_events({"runId": answered["runId"], "after": 0})["events"] == followed
    assert [event["sequence"] for event in client.follow_run(answered["runId"], after=2)] == [event["sequence"] for event in followed[2:]]


JOB = "00000000-0000-4000-8000-000000000001"
CALL = {"id": "call-1", "name": "lookup", "arguments": {"q": "x"}}
TICKET = {"executionId": "e-1", "runId": RUN, "call": {**CALL, "id": "call-2"}}


def background(**overrides: Any) -> Json:
    return running(mode="background", jobId=JOB, cursor=1, **overrides)


def protocol(*features: str) -> Callable[[Exchange], None]:
    return answer({"protocol": "agenticdriver", "version": "1.0", "supportedVersions": ["1.0"], "features": list(features)})


def interactive_run(host: ScriptedHost) -> Dict[str, Any]:
    """A background run that asks for approval, then (once decided) dispatches an application tool,
    then (once completed) ends: each part is written only after the client's answer reached the host."""
    answered: Dict[str, Any] = {"decided": threading.Event(), "completed": threading.Event()}

    def stream(exchange: Exchange) -> None:
        exchange.send_response(200)
        for name, value in {"AgenticDriver-Version": "1.0", "Content-Type": "text/event-stream", "Connection": "close"}.items():
            exchange.send_header(name, value)
        exchange.end_headers()
        exchange.wfile.write(frame(ev("approval.requested", 2, approval={"approvalId": "a-1", "runId": RUN, "call": CALL, "requestedAt": T0, "idlePolicy": "pause"})))
        exchange.wfile.flush()
        if not answered["decided"].wait(10):
            return
        resolution = {"approvalId": "a-1", "runId": RUN, "callId": "call-1", "outcome": "approved", "decidedAt": T0}
        exchange.wfile.write(frame(ev("approval.resolved", 3, resolution=resolution)) + frame(ev("tool.execution.requested", 4, execution=TICKET)))
        exchange.wfile.flush()
        if not answered["completed"].wait(10):
            return
        exchange.wfile.write(frame(ev("run.completed", 5, result=result(text=json.dumps(answered["result"]["output"])))))
        exchange.close_connection = True

    def decide(exchange: Exchange) -> None:
        decision = json.loads(host.requests[-1]["body"])
        answered["decision"] = decision
        exchange.reply(200, {"approvalId": decision["approvalId"], "runId": decision["runId"], "callId": decision["call"]["id"], "outcome": "approved", "decidedAt": T0})
        answered["decided"].set()

    def complete(exchange: Exchange) -> None:
        delivered = json.loads(host.requests[-1]["body"])
        answered["result"] = delivered
        exchange.reply(200, {"executionId": delivered["executionId"], "runId": delivered["runId"], "callId": delivered["callId"], "status": "accepted"})
        answered["completed"].set()

    host.routes[STREAM] = stream
    host.routes["approvals/decisions"] = decide
    host.routes["tool-executions/results"] = complete
    return answered


def follow_with_handles(url: str, asynchronous: bool) -> List[str]:
    """Follows RUN from 1, approving each approval and completing each ticket with {"found": 42} through the handles."""
    types: List[str] = []
    if not asynchronous:
        client = AgenticClient(url, TOKEN)
        for event in client.follow_run(RUN, after=1):
            types.append(event["type"])
            if event["type"] == "approval.requested":
                assert client.approval(event).approve()["outcome"] == "approved"
            if event["type"] == "tool.execution.requested":
                assert client.execution(event).complete({"found": 42})["status"] == "accepted"
        return types

    async def main() -> None:
        async with AsyncAgenticClient(url, TOKEN) as client:
            async for event in client.follow_run(RUN, after=1):
                types.append(event["type"])
                if event["type"] == "approval.requested":
                    assert (await client.approval(event).approve())["outcome"] == "approved"
                if event["type"] == "tool.execution.requested":
                    assert (await client.execution(event).complete({"found": 42}))["status"] == "accepted"

    asyncio.run(main())
    return types


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_handles_on_a_followed_background_run_with_interactive_jobs(host: ScriptedHost, asynchronous: bool) -> None:
    host.routes["protocol"] = protocol("durable-jobs", "run-records", "interactive-jobs")
    host.routes["runs/read"] = answer(background())
    answered = interactive_run(host)
    assert follow_with_handles(host.url, asynchronous) == ["approval.requested", "approval.resolved", "tool.execution.requested", "run.completed"]
    assert answered["decision"] == {"approvalId": "a-1", "runId": RUN, "call": CALL, "decision": "approve"}
    assert answered["result"] == {"executionId": "e-1", "runId": RUN, "callId": "call-2", "output": {"found": 42}}


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_no_handle_on_a_followed_background_run_without_interactive_jobs(host: ScriptedHost, asynchronous: bool) -> None:
    host.routes["protocol"] = protocol("durable-jobs", "run-records")
    host.routes["runs/read"] = answer(background())
    interactive_run(host)
    assert failure(lambda: follow_with_handles(host.url, asynchronous)).code == "UNSUPPORTED_EVENT"
    assert not [request for request in host.requests if "approvals" in request["path"]]


@CALLS
def test_an_attached_run_followed_does_not_read_the_features(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/read"] = answer(running(cursor=1))
    run_stream(host, send_to_end)
    assert call(host.url, "follow_run", RUN, after=1) == [2, 3, 4]
    assert not [request for request in host.requests if request["path"].endswith("/protocol")]


@CALLS
def test_wait_run_answers_a_finished_run_from_its_record(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/read"] = answer(run())
    assert call(host.url, "wait_run", RUN)["text"] == "Hello"
    host.routes["runs/read"] = answer(run(state="failed", result=None, error={"code": "APPROVAL_DENIED", "message": "Denied.", "retryable": False}))
    error = failure(lambda: call(host.url, "wait_run", RUN))
    assert (error.code, error.retryable) == ("APPROVAL_DENIED", False)
    assert last_event_ids(host) == []


@CALLS
def test_wait_run_follows_a_running_run_from_its_cursor_to_its_end(host: ScriptedHost, call: Any) -> None:
    host.routes["runs/read"] = answer(running(cursor=2))
    failed = ev("run.failed", 4, error={"code": "PROVIDER_ERROR", "message": "Gone.", "retryable": True, "outcome": "uncertain"})
    run_stream(host, lambda exchange, _after: exchange.stream(frame(log()[2]) + frame(failed)))
    error = failure(lambda: call(host.url, "wait_run", RUN))
    assert (error.code, error.retryable, error.outcome) == ("PROVIDER_ERROR", True, "uncertain")
    assert last_event_ids(host) == ["2"]


def test_a_background_run_waiting_for_people_is_answered_through_handles_on_the_real_host(live_host: LiveHost) -> None:
    client = AgenticClient(live_host.url, live_host.token, ca_file=live_host.ca_file)
    script = {"mockScript": {"steps": [
        {"actions": [{"toolCall": {"name": "guarded", "arguments": {"n": 1}, "id": "g1"}}]},
        {"actions": [{"toolCall": {"name": "application_lookup", "arguments": {"q": "x"}, "id": "l1"}}]},
        {"actions": [{"echoToolResults": True}]},
    ]}}
    job = client.submit_job({"key": f"handles-{secrets.token_hex(8)}", "request": {
        "provider": "mock", "model": "demo", "input": json.dumps(script), "tools": ["guarded", "application_lookup"],
        "applicationTools": [{"name": "application_lookup", "description": "Looks something up.", "inputSchema": {"type": "object"}}],
        "approvals": {"mode": "interactive", "idlePolicy": "pause"},
    }})
    types = []
    for event in client.follow_run(job["runId"]):
        types.append(event["type"])
        if event["type"] == "approval.requested":
            assert client.approval(event).approve()["outcome"] == "approved"
        if event["type"] == "tool.execution.requested":
            assert client.execution(event).complete({"found": 42})["status"] == "accepted"
    assert {"approval.requested", "approval.resolved", "tool.execution.requested", "run.completed"} <= set(types)
    result = client.wait_run(job["runId"])
    assert result["runId"] == job["runId"]
    assert result["text"] == '[{"found":42}]'
