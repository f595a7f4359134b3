"""Sessions and durable jobs in both clients over real loopback HTTP: request checks before
sending, receipt and record invariants, the job event page rules every client shares, and
``tail_job`` resuming against a loopback SSE server that drops its connections."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, List, Optional

import pytest

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError
from hosts import TOKEN, Exchange, ScriptedHost

JOB = "00000000-0000-4000-8000-000000000001"
RUN = "00000000-0000-4000-8000-000000000002"
OTHER = "00000000-0000-4000-8000-000000000009"
SESSION = "12345678-1234-4234-8234-123456789abc"
T0 = "2026-09-21T12:00:00.000Z"
T1 = "2026-09-22T12:00:00.000Z"
STREAM = f"jobs/{JOB}/stream"
Json = Dict[str, Any]


def sync_call(url: str, method: str, *args: Any, **kwargs: Any) -> Any:
    value = getattr(AgenticClient(url, TOKEN), method)(*args, **kwargs)
    return [event["sequence"] for event in value] if method == "tail_job" else value


def async_call(url: str, method: str, *args: Any, **kwargs: Any) -> Any:
    async def main() -> Any:
        async with AsyncAgenticClient(url, TOKEN) as client:
            value = getattr(client, method)(*args, **kwargs)
            if method == "tail_job":
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


def job(**overrides: Any) -> Json:
    value: Json = {"id": JOB, "runId": RUN, "provider": "mock", "model": "demo", "state": "completed", "cursor": 4,
                   "cancelRequested": False, "createdAt": T0, "updatedAt": T0, "expiresAt": T1}
    value.update(overrides)
    return {key: item for key, item in value.items() if item is not None}


def running_job(**overrides: Any) -> Json:
    value = job(state="running", cursor=0)
    del value["expiresAt"]
    value.update(overrides)
    return value


def ev(kind: str, sequence: int, **payload: Any) -> Json:
    return {"type": kind, "runId": RUN, "sequence": sequence, "timestamp": T0, **payload}


def result(**overrides: Any) -> Json:
    return {"runId": RUN, "provider": "mock", "model": "demo", "text": "Hello", "usage": {}, "steps": 1, "finishReason": "stop", **overrides}


def log() -> List[Json]:
    return [ev("run.started", 1, provider="mock", model="demo"), ev("step.started", 2, step=1), ev("text.delta", 3, text="Hello"),
            ev("run.completed", 4, result=result())]


def page(**overrides: Any) -> Json:
    return {"job": job(), "events": log(), "nextCursor": 4, "hasMore": False, **overrides}


def session(**overrides: Any) -> Json:
    value: Json = {"id": SESSION, "revision": 0, "provider": "mock", "model": "demo", "mode": "history", "state": "ready",
                   "createdAt": T0, "updatedAt": T0, "expiresAt": T1}
    value.update(overrides)
    return {key: item for key, item in value.items() if item is not None}


def bodies(host: ScriptedHost) -> List[Any]:
    return [(request["path"].rsplit("/v1/", 1)[-1], json.loads(request["body"] or b"null")) for request in host.requests]


# ---------------------------------------------------------------------------
# Sessions

CREATE: Json = {"provider": "mock", "model": "demo", "mode": "history", "history": [{"role": "user", "content": "hi"}], "instructions": "Be brief."}


def snapshot(**overrides: Any) -> Json:
    value: Json = {"session": session(), "history": [{"role": "user", "content": "hi"}], "instructions": "Be brief."}
    value.update(overrides)
    return {key: item for key, item in value.items() if item is not None}


@CALLS
def test_create_session_returns_a_receipt_that_echoes_the_request(host: ScriptedHost, call: Any) -> None:
    host.routes["sessions/create"] = answer(snapshot())
    assert call(host.url, "create_session", CREATE)["session"]["id"] == SESSION
    assert bodies(host) == [("sessions/create", CREATE)]


@CALLS
@pytest.mark.parametrize("receipt", [
    snapshot(session=session(provider="other")),
    snapshot(session=session(mode="native")),
    snapshot(session=session(revision=1)),
    snapshot(session=session(state="interrupted")),
    snapshot(history=[]),
    snapshot(history=[{"role": "assistant", "content": "hi"}]),
    snapshot(instructions=None),
    snapshot(session=session(expiresAt=T0)),
], ids=["provider", "mode", "revision", "state", "history-missing", "history-role", "instructions", "expiry"])
def test_create_receipts_that_do_not_echo_the_request_are_invalid(host: ScriptedHost, call: Any, receipt: Json) -> None:
    host.routes["sessions/create"] = answer(receipt)
    assert failure(lambda: call(host.url, "create_session", CREATE)).code == "INVALID_RESPONSE"


@CALLS
def test_session_requests_and_ids_are_checked_before_sending(host: ScriptedHost, call: Any) -> None:
    assert failure(lambda: call(host.url, "create_session", {**CREATE, "mode": "memory"})).code == "INVALID_SESSION"
    assert failure(lambda: call(host.url, "create_session", {**CREATE, "subject": "x"})).code == "INVALID_SESSION"
    assert failure(lambda: call(host.url, "read_session", "not-a-uuid")).code == "INVALID_SESSION"
    assert failure(lambda: call(host.url, "delete_session", "")).code == "INVALID_SESSION"
    assert host.requests == []


@CALLS
def test_read_session_checks_the_id_and_running_expiry(host: ScriptedHost, call: Any) -> None:
    host.routes["sessions/read"] = answer(snapshot())
    assert call(host.url, "read_session", SESSION)["session"]["revision"] == 0
    assert bodies(host) == [("sessions/read", {"id": SESSION})]
    host.routes["sessions/read"] = answer(snapshot(session=session(id="12345678-1234-4234-8234-123456789def")))
    assert failure(lambda: call(host.url, "read_session", SESSION)).code == "INVALID_RESPONSE"
    host.routes["sessions/read"] = answer(snapshot(session=session(state="running")))
    assert failure(lambda: call(host.url, "read_session", SESSION)).code == "INVALID_RESPONSE"
    host.routes["sessions/read"] = answer({"error": {"code": "SESSION_NOT_FOUND", "message": "gone", "retryable": False}}, 404)
    assert failure(lambda: call(host.url, "read_session", SESSION)).code == "SESSION_NOT_FOUND"


@CALLS
def test_delete_session_needs_a_receipt_saying_deleted(host: ScriptedHost, call: Any) -> None:
    host.routes["sessions/delete"] = answer({"id": SESSION, "deleted": True})
    assert call(host.url, "delete_session", SESSION) == {"id": SESSION, "deleted": True}
    for receipt in ({"id": SESSION, "deleted": False}, {"id": SESSION}, {"id": SESSION, "deleted": "true"},
                    {"id": "12345678-1234-4234-8234-123456789def", "deleted": True}):
        host.routes["sessions/delete"] = answer(receipt)
        assert failure(lambda: call(host.url, "delete_session", SESSION)).code == "INVALID_RESPONSE", receipt
    # A schema-valid receipt for another session breaks a rule of protocol/rules.json, which the error names (as in every client).
    assert "[sessionDeleted.id]" in str(failure(lambda: call(host.url, "delete_session", SESSION)))


# ---------------------------------------------------------------------------
# Job records

SUBMISSION: Json = {"key": "nightly-1", "request": {"provider": "mock", "model": "demo", "input": "Hello"}}


@CALLS
def test_submit_read_and_cancel_check_the_job_against_the_call(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/submit"] = answer(running_job())
    host.routes["jobs/read"] = answer(job())
    host.routes["jobs/cancel"] = answer(job(state="cancelled", cancelRequested=True))
    assert call(host.url, "submit_job", SUBMISSION)["state"] == "running"
    assert call(host.url, "read_job", JOB)["cursor"] == 4
    assert call(host.url, "cancel_job", JOB)["state"] == "cancelled"
    assert bodies(host) == [("jobs/submit", SUBMISSION), ("jobs/read", {"id": JOB}), ("jobs/cancel", {"id": JOB})]
    host.routes["jobs/submit"] = answer(running_job(model="other"))
    assert failure(lambda: call(host.url, "submit_job", SUBMISSION)).code == "INVALID_RESPONSE"
    host.routes["jobs/read"] = answer(job(id="00000000-0000-4000-8000-000000000003"))
    assert failure(lambda: call(host.url, "read_job", JOB)).code == "INVALID_RESPONSE"


@CALLS
@pytest.mark.parametrize("record", [
    job(expiresAt=None),
    running_job(expiresAt=T1),
    job(expiresAt=T0),
    job(updatedAt="2026-09-21T11:59:59.999Z"),
    running_job(state="queued", cursor=1),
    job(cursor=1),
    job(cancelRequested="false"),
    job(createdAt="2026-09-21T12:00:00Z"),
], ids=["finished-no-expiry", "live-expiry", "expiry-not-later", "updated-before-created", "queued-cursor", "finished-cursor", "flag-type", "precision"])
def test_job_info_invariants(host: ScriptedHost, call: Any, record: Json) -> None:
    host.routes["jobs/read"] = answer(record)
    assert failure(lambda: call(host.url, "read_job", JOB)).code == "INVALID_RESPONSE"


@CALLS
def test_a_queued_job_is_valid(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/read"] = answer(running_job(state="queued"))
    assert call(host.url, "read_job", JOB)["state"] == "queued"


@CALLS
def test_job_calls_are_checked_before_sending(host: ScriptedHost, call: Any) -> None:
    assert failure(lambda: call(host.url, "submit_job", {**SUBMISSION, "key": ""})).code == "INVALID_JOB"
    assert failure(lambda: call(host.url, "submit_job", {**SUBMISSION, "extra": 1})).code == "INVALID_JOB"
    assert failure(lambda: call(host.url, "read_job", "00000000-0000-4000-8000-00000000000A")).code == "INVALID_JOB"
    assert failure(lambda: call(host.url, "job_events", {"id": JOB, "after": -1})).code == "INVALID_JOB_CURSOR"
    assert failure(lambda: call(host.url, "job_events", {"id": JOB, "after": 0, "limit": 101})).code == "INVALID_JOB_CURSOR"
    assert failure(lambda: call(host.url, "tail_job", JOB, after=-1)).code == "INVALID_JOB_CURSOR"
    assert host.requests == []


# ---------------------------------------------------------------------------
# Job event pages

INTERRUPTED = [*log()[:3], ev("run.failed", 4, error={"code": "JOB_INTERRUPTED", "message": "i", "retryable": False, "outcome": "uncertain"})]
VALID_PAGES = {
    "whole": (page(), {"after": 0}),
    "middle": (page(events=log()[1:3], nextCursor=3, hasMore=True), {"after": 1, "limit": 2}),
    "empty-at-cursor": (page(events=[], nextCursor=4), {"after": 4}),
    "interrupted": (page(job=job(state="interrupted"), events=INTERRUPTED), {"after": 0}),
    "running": (page(job=running_job(cursor=3), events=log()[:3], nextCursor=3), {"after": 0}),
}


def _events(*replace: Any) -> List[Json]:
    events = log()
    for index, value in replace:
        events[index] = value
    return events


BROKEN_PAGES = {
    "another-job": (page(job=job(id="00000000-0000-4000-8000-000000000003")), {"after": 0}),
    "over-limit": (page(), {"after": 0, "limit": 3}),
    "unknown-optional": (page(events=_events((2, ev("future.event", 3, optional=True)))), {"after": 0}),
    "another-run": (page(events=_events((2, {**log()[2], "runId": OTHER}))), {"after": 0}),
    "gap": (page(events=_events((2, ev("text.delta", 9, text="x")))), {"after": 0}),
    "not-after": (page(events=log()[1:]), {"after": 0}),
    "beyond-cursor": (page(job=running_job(cursor=2), events=log()[:3], nextCursor=3), {"after": 0}),
    "started-twice": (page(events=_events((1, ev("run.started", 2, provider="mock", model="demo")))), {"after": 0}),
    "started-model": (page(events=_events((0, ev("run.started", 1, provider="mock", model="other")))), {"after": 0}),
    "approval": (page(events=_events((2, ev("approval.resolved", 3, resolution={"approvalId": "a", "runId": RUN, "callId": "c", "outcome": "approved", "decidedAt": T0})))), {"after": 0}),
    "early-terminal": (page(job=job(cursor=5), events=[*log(), ev("text.delta", 5, text="!")], nextCursor=5), {"after": 0}),
    "terminal-while-running": (page(job=running_job(cursor=4)), {"after": 0}),
    "missing-terminal": (page(events=_events((3, ev("text.delta", 4, text="!")))), {"after": 0}),
    "wrong-terminal": (page(job=job(state="failed")), {"after": 0}),
    "cancelled-for-completed": (page(events=_events((3, ev("run.cancelled", 4, error={"code": "CANCELLED", "message": "c", "retryable": False})))), {"after": 0}),
    "uncertain-missing": (page(job=job(state="interrupted"), events=_events((3, ev("run.failed", 4, error={"code": "JOB_INTERRUPTED", "message": "i", "retryable": False})))), {"after": 0}),
    "result-model": (page(events=_events((3, ev("run.completed", 4, result=result(model="other"))))), {"after": 0}),
    "result-session": (page(events=_events((3, ev("run.completed", 4, result=result(session=session(revision=1)))))), {"after": 0}),
    "next-cursor": (page(nextCursor=3), {"after": 0}),
    "has-more-at-end": (page(hasMore=True), {"after": 0}),
    "no-has-more": (page(events=log()[:2], nextCursor=2), {"after": 0}),
    "empty-has-more": (page(events=[], nextCursor=0, hasMore=True), {"after": 0}),
    "after-beyond-cursor": (page(events=[], nextCursor=5), {"after": 5}),
}


@CALLS
@pytest.mark.parametrize("name", sorted(VALID_PAGES))
def test_valid_job_pages(host: ScriptedHost, call: Any, name: str) -> None:
    value, request = VALID_PAGES[name]
    host.routes["jobs/events"] = answer(value)
    assert call(host.url, "job_events", {"id": JOB, **request})["nextCursor"] == value["nextCursor"]


@CALLS
@pytest.mark.parametrize("name", sorted(BROKEN_PAGES))
def test_broken_job_pages_are_invalid(host: ScriptedHost, call: Any, name: str) -> None:
    value, request = BROKEN_PAGES[name]
    host.routes["jobs/events"] = answer(value)
    assert failure(lambda: call(host.url, "job_events", {"id": JOB, **request})).code == "INVALID_RESPONSE"


# ---------------------------------------------------------------------------
# tail_job against a loopback SSE server that drops connections


def frame(event: Json) -> bytes:
    return f"id: {event['sequence']}\nevent: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def last_event_id(request: Dict[str, Any]) -> Optional[str]:
    return next((value for name, value in request["headers"].items() if name.lower() == "last-event-id"), None)


def stream_requests(host: ScriptedHost) -> List[Dict[str, Any]]:
    return [request for request in host.requests if request["path"].endswith("/stream")]


def job_stream(host: ScriptedHost, *connections: Callable[[Exchange, int], None]) -> None:
    """The n-th connection (from 0; the last one repeats) is handled by ``connections[n]``."""
    count = [0]

    def route(exchange: Exchange) -> None:
        handle = connections[min(count[0], len(connections) - 1)]
        count[0] += 1
        handle(exchange, int(exchange.headers.get("Last-Event-ID") or 0))

    host.routes[STREAM] = route


def send_and_drop(to: Optional[int] = None, partial: bool = False, step: int = 0) -> Callable[[Exchange, int], None]:
    """Sends the log's events after the client's cursor up to ``to`` (or ``step`` of them),
    then ends the connection (inside a frame when ``partial``)."""
    def handle(exchange: Exchange, after: int) -> None:
        end = after + step if step else to
        body = b"".join(frame(event) for event in log()[after:end]) + (b'data: {"type":"text.del' if partial else b"")
        exchange.stream(body)

    return handle


def send_to_end(exchange: Exchange, after: int) -> None:
    exchange.stream(b": heartbeat\n\n" + b"".join(frame(event) for event in log()[after:]))


@CALLS
def test_tail_resumes_from_the_last_delivered_sequence(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/read"] = answer(running_job(cursor=1))
    job_stream(host, send_and_drop(2, partial=True), send_to_end)
    assert call(host.url, "tail_job", JOB, initial_delay=0.005) == [1, 2, 3, 4]
    assert [last_event_id(request) for request in stream_requests(host)] == ["0", "2"]


@CALLS
def test_tail_starts_after_and_keeps_going_while_connections_make_progress(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/read"] = answer(running_job(cursor=2))
    job_stream(host, send_and_drop(step=1))  # one event per connection: never two failures in a row
    assert call(host.url, "tail_job", JOB, after=1, max_attempts=2, initial_delay=0.005) == [2, 3, 4]
    assert [last_event_id(request) for request in stream_requests(host)] == ["1", "2", "3"]


@CALLS
def test_tail_gives_up_after_max_attempts_failures_in_a_row(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/read"] = answer(running_job())
    job_stream(host, send_and_drop(0))
    error = failure(lambda: call(host.url, "tail_job", JOB, max_attempts=3, initial_delay=0.005))
    assert error.code == "JOB_STREAM_LOST"
    assert error.retryable is True
    assert isinstance(error.__cause__, DriverError) and error.__cause__.code == "INCOMPLETE_STREAM"
    assert len(stream_requests(host)) == 3


@CALLS
def test_tail_retries_retryable_host_errors_only(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/read"] = answer(running_job())
    busy = {"error": {"code": "HOST_SHUTTING_DOWN", "message": "later", "retryable": True}}
    job_stream(host, lambda exchange, _after: exchange.reply(503, busy), send_to_end)
    assert call(host.url, "tail_job", JOB, initial_delay=0.005) == [1, 2, 3, 4]
    host.requests.clear()
    gone = {"error": {"code": "JOB_NOT_FOUND", "message": "gone", "retryable": False}}
    job_stream(host, lambda exchange, _after: exchange.reply(404, gone))
    assert failure(lambda: call(host.url, "tail_job", JOB, initial_delay=0.005)).code == "JOB_NOT_FOUND"
    assert len(stream_requests(host)) == 1


@CALLS
def test_tail_refuses_a_resumed_stream_that_repeats_an_event(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/read"] = answer(running_job())
    job_stream(host, send_and_drop(2), lambda exchange, _after: send_to_end(exchange, 1))  # ignores Last-Event-ID
    assert failure(lambda: call(host.url, "tail_job", JOB, initial_delay=0.005)).code == "INVALID_STREAM"


@CALLS
def test_tail_refuses_events_a_job_stream_never_carries(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/read"] = answer(running_job())
    started = log()[0]
    job_stream(host, lambda exchange, _after: exchange.stream(frame(started) + frame(ev("future.event", 2, optional=True))))
    assert failure(lambda: call(host.url, "tail_job", JOB)).code == "UNSUPPORTED_EVENT"
    job_stream(host, lambda exchange, _after: exchange.stream(frame({**started, "runId": OTHER})))
    assert failure(lambda: call(host.url, "tail_job", JOB)).code == "INVALID_STREAM"


@CALLS
def test_tail_of_a_finished_job_read_to_the_end_opens_no_stream(host: ScriptedHost, call: Any) -> None:
    host.routes["jobs/read"] = answer(job())
    assert call(host.url, "tail_job", JOB, after=4) == []
    assert failure(lambda: call(host.url, "tail_job", JOB, after=5)).code == "INVALID_JOB_CURSOR"
    assert stream_requests(host) == []


def test_leaving_a_sync_tail_early_closes_the_connection(host: ScriptedHost) -> None:
    host.routes["jobs/read"] = answer(running_job())
    job_stream(host, lambda exchange, _after: exchange.stream(frame(log()[0]), hold_open=True))
    events = AgenticClient(host.url, TOKEN).tail_job(JOB)
    for event in events:
        assert event["type"] == "run.started"
        break
    events.close()
    assert host.disconnected.wait(5)


def test_leaving_an_async_tail_early_closes_the_connection(host: ScriptedHost) -> None:
    host.routes["jobs/read"] = answer(running_job())
    job_stream(host, lambda exchange, _after: exchange.stream(frame(log()[0]), hold_open=True))

    async def main() -> None:
        async with AsyncAgenticClient(host.url, TOKEN) as client:
            events = client.tail_job(JOB)
            async for event in events:
                assert event["type"] == "run.started"
                break
            await events.aclose()

    asyncio.run(main())
    assert host.disconnected.wait(5)


# ---------------------------------------------------------------------------
# Lists

OLDER = "00000000-0000-4000-8000-000000000005"


@CALLS
def test_list_jobs_sends_the_request_and_checks_the_list(host: ScriptedHost, call: Any) -> None:
    newer = job(updatedAt="2026-09-21T12:00:01.000Z")
    older = job(id=OLDER)
    host.routes["jobs/list"] = answer({"jobs": [newer, older]})
    assert [item["id"] for item in call(host.url, "list_jobs")] == [JOB, OLDER]
    assert call(host.url, "list_jobs", {"state": "completed", "limit": 2})[0]["id"] == JOB
    assert bodies(host) == [("jobs/list", {}), ("jobs/list", {"state": "completed", "limit": 2})]
    for bad, request in (
        ({"jobs": [older, newer]}, {}),  # oldest first
        ({"jobs": [newer, newer]}, {}),  # one job twice
        ({"jobs": [newer, older]}, {"limit": 1}),  # over the limit
        ({"jobs": [newer]}, {"state": "running"}),  # another state
        ({"jobs": [job(expiresAt=None)]}, {}),  # a job's own rule
    ):
        host.routes["jobs/list"] = answer(bad)
        assert failure(lambda: call(host.url, "list_jobs", request)).code == "INVALID_RESPONSE", (bad, request)


@CALLS
def test_list_sessions_sends_the_request_and_checks_the_list(host: ScriptedHost, call: Any) -> None:
    other = "12345678-1234-4234-8234-123456789def"
    host.routes["sessions/list"] = answer({"sessions": [session(revision=3, updatedAt="2026-09-21T12:00:01.000Z"), session(id=other)]})
    assert [(item["id"], item["revision"]) for item in call(host.url, "list_sessions", {"limit": 5})] == [(SESSION, 3), (other, 0)]
    assert bodies(host) == [("sessions/list", {"limit": 5})]
    host.routes["sessions/list"] = answer({"sessions": [session(id=other), session(updatedAt="2026-09-21T12:00:01.000Z")]})
    assert failure(lambda: call(host.url, "list_sessions")).code == "INVALID_RESPONSE"
    host.routes["sessions/list"] = answer({"sessions": [session(state="running")]})
    assert failure(lambda: call(host.url, "list_sessions")).code == "INVALID_RESPONSE"


@CALLS
def test_list_requests_are_checked_before_sending(host: ScriptedHost, call: Any) -> None:
    assert failure(lambda: call(host.url, "list_jobs", {"limit": 0})).code == "INVALID_JOB"
    assert failure(lambda: call(host.url, "list_jobs", {"state": "sleeping"})).code == "INVALID_JOB"
    assert failure(lambda: call(host.url, "list_sessions", {"limit": 101})).code == "INVALID_SESSION"
    assert failure(lambda: call(host.url, "list_sessions", {"subject": "other"})).code == "INVALID_SESSION"
    assert host.requests == []
