"""The operator clients (sync and async) over real loopback HTTP: the bearer and the body
sent to each ``/v1/operator/...`` endpoint, requests refused before sending, answers
validated (a malformed one is ``INVALID_RESPONSE``), one run's page, and the live update
feed (validated update by update, closed when the caller stops reading)."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, List

import pytest

from agenticdriver import AsyncOperatorClient, DriverError, OperatorClient
from hosts import TOKEN, Exchange, ScriptedHost, sse

RUN = "00000000-0000-4000-8000-000000000002"
T0 = "2026-09-21T12:00:00.000Z"
Json = Dict[str, Any]


def sync_call(url: str, method: str, *args: Any) -> Any:
    with OperatorClient(url, TOKEN) as client:
        return getattr(client, method)(*args)


def async_call(url: str, method: str, *args: Any) -> Any:
    async def main() -> Any:
        async with AsyncOperatorClient(url, TOKEN) as client:
            return await getattr(client, method)(*args)

    return asyncio.run(main())


CALLS = pytest.mark.parametrize("call", [sync_call, async_call], ids=["sync", "async"])


def answer(value: Any) -> Callable[[Exchange], None]:
    return lambda exchange: exchange.reply(200, value)


def code_of(call: Callable[[], Any]) -> str:
    with pytest.raises(DriverError) as raised:
        call()
    return raised.value.code


RUN_RECORD: Json = {"runId": RUN, "subject": "alice", "provider": "mock", "model": "demo", "state": "running", "startedAt": T0, "steps": 1, "usage": {}}
TOTALS: Json = {"runs": 1, "completed": 1, "failed": 0, "cancelled": 0, "interrupted": 0, "incompleteRuns": 0, "inputTokens": 3, "outputTokens": 2,
                "cachedInputTokens": 0, "reasoningTokens": 0, "durationMs": 12, "costUsd": 0, "apiEquivalentCostUsd": 0}

# method, endpoint, request, a valid answer, an invalid answer
LISTS = [
    ("runs", "operator/runs", {"finished": 5, "before": "opaque-cursor", "state": "failed", "subject": "alice", "provider": "mock", "search": "quota"},
     {"active": [{**RUN_RECORD, "waiting": {"kind": "approval", "since": T0, "tool": "guarded", "id": "appr-1"}}], "finished": [], "nextBefore": "next-cursor"},
     {"active": [{**RUN_RECORD, "state": "sleeping"}], "finished": []}),
    ("approvals", "operator/approvals", {"limit": 10}, {"approvals": []}, {"approvals": [{"subject": "alice"}]}),
    ("jobs", "operator/jobs", {"limit": 10, "state": "running"}, {"jobs": []}, {"jobs": {}}),
    ("usage", "operator/usage", {"by": "subject"}, {"totals": [{**TOTALS, "key": "alice"}]}, {"totals": [{**TOTALS, "runs": -1}]}),
    ("limits", "operator/limits", {"subject": "alice"},
     {"limits": [{"scope": "subject", "name": "alice", "requestsPerMinute": 60,
                  "budgets": [{"unit": "usd", "period": "day", "limit": 5, "used": 1.25, "reserved": 0.5, "remaining": 3.25, "resetsAt": T0}]}]},
     {"limits": [{"scope": "subject", "budgets": [{"unit": "usd", "period": "day", "limit": 5, "used": -1, "reserved": 0, "remaining": 5, "resetsAt": T0}]}]}),
    ("audit", "operator/audit", {"limit": 2}, {"records": [{"id": 7, "kind": "approval.resolved", "at": T0, "subject": "alice", "operator": "ops"}], "nextBefore": 7},
     {"records": [{"id": 0, "kind": "approval.resolved", "at": T0, "subject": "alice"}]}),
]


@CALLS
@pytest.mark.parametrize("method, endpoint, request_, good, bad", LISTS, ids=[row[0] for row in LISTS])
def test_operator_lists_send_the_bearer_and_validate_the_answer(host: ScriptedHost, call: Any, method: str, endpoint: str, request_: Json, good: Json, bad: Json) -> None:
    host.routes[endpoint] = answer(good)
    assert call(host.url, method, request_) == good
    sent = host.requests[-1]
    assert (sent["path"], sent["headers"]["Authorization"], json.loads(sent["body"])) == (f"/v1/{endpoint}", f"Bearer {TOKEN}", request_)
    assert call(host.url, method) == good
    assert json.loads(host.requests[-1]["body"]) == {}
    host.routes[endpoint] = answer(bad)
    assert code_of(lambda: call(host.url, method, request_)) == "INVALID_RESPONSE"


@CALLS
def test_malformed_operator_requests_are_refused_before_sending(host: ScriptedHost, call: Any) -> None:
    for method, request_ in (("runs", {"finished": 101}), ("runs", {"search": ""}), ("approvals", {"limit": 0}), ("jobs", {"state": "asleep"}), ("usage", {"by": "week"}), ("limits", {"subject": ""}), ("audit", {"before": 0})):
        assert code_of(lambda: call(host.url, method, request_)) == "INVALID_OPERATOR_REQUEST", method
    assert host.requests == []


DECISION: Json = {"approvalId": "appr-1", "runId": RUN, "call": {"id": "call-1", "name": "guarded", "arguments": {"text": "hi"}}, "decision": "deny"}


@CALLS
def test_operator_decisions_check_the_receipt(host: ScriptedHost, call: Any) -> None:
    receipt = {"approvalId": "appr-1", "runId": RUN, "callId": "call-1", "outcome": "denied", "decidedAt": T0}
    host.routes["operator/approvals/decisions"] = answer(receipt)
    assert call(host.url, "decide_approval", DECISION)["outcome"] == "denied"
    assert json.loads(host.requests[-1]["body"]) == DECISION
    host.routes["operator/approvals/decisions"] = answer({**receipt, "outcome": "approved"})
    assert code_of(lambda: call(host.url, "decide_approval", DECISION)) == "INVALID_RESPONSE"
    assert code_of(lambda: call(host.url, "decide_approval", {**DECISION, "decision": "maybe"})) == "INVALID_APPROVAL"


@CALLS
def test_a_forbidden_token_gets_the_hosts_code(host: ScriptedHost, call: Any) -> None:
    host.routes["operator/runs"] = lambda exchange: exchange.reply(403, {"error": {"code": "FORBIDDEN", "message": "no operator grant", "retryable": False}})
    assert code_of(lambda: call(host.url, "runs")) == "FORBIDDEN"


STEP: Json = {"step": 1, "startedAt": T0, "durationMs": 40, "usage": {"inputTokens": 3},
              "tools": [{"callId": "call-1", "name": "guarded", "calledAt": T0, "approval": {"requestedAt": T0, "resolvedAt": T0, "outcome": "approved"}}]}


@CALLS
def test_a_runs_page_is_read_by_id_and_must_be_that_run(host: ScriptedHost, call: Any) -> None:
    detail = {"run": {**RUN_RECORD, "state": "completed", "durationMs": 40, "reason": "n/a"}, "steps": [STEP]}
    host.routes[f"operator/runs/{RUN}"] = answer(detail)
    assert call(host.url, "run", RUN) == detail
    sent = host.requests[-1]
    assert (sent["method"], sent["path"], sent["headers"]["Authorization"], sent["body"]) == ("GET", f"/v1/operator/runs/{RUN}", f"Bearer {TOKEN}", b"")
    host.routes[f"operator/runs/{RUN}"] = answer({**detail, "run": {**detail["run"], "runId": "00000000-0000-4000-8000-000000000009"}})
    assert code_of(lambda: call(host.url, "run", RUN)) == "INVALID_RESPONSE"
    host.routes[f"operator/runs/{RUN}"] = answer({**detail, "steps": [{**STEP, "step": 0}]})
    assert code_of(lambda: call(host.url, "run", RUN)) == "INVALID_RESPONSE"
    host.routes[f"operator/runs/{RUN}"] = lambda exchange: exchange.reply(404, {"error": {"code": "RUN_NOT_FOUND", "message": "no such run", "retryable": False}})
    assert code_of(lambda: call(host.url, "run", RUN)) == "RUN_NOT_FOUND"
    sent_before = len(host.requests)
    assert code_of(lambda: call(host.url, "run", "../runs")) == "INVALID_OPERATOR_REQUEST"
    assert len(host.requests) == sent_before


UPDATES: list = [
    {"type": "snapshot", "at": T0, "active": [RUN_RECORD], "pendingApprovals": 1},
    {"type": "run", "at": T0, "run": {**RUN_RECORD, "waiting": {"kind": "approval", "since": T0, "tool": "guarded"}}},
    {"type": "finished", "at": T0},
    {"type": "a-kind-added-later", "at": T0, "extra": True},
]


def sync_updates(url: str, limit: int = 100) -> list:
    with OperatorClient(url, TOKEN) as client:
        updates = client.updates()
        taken = []
        for update in updates:
            taken.append(update)
            if len(taken) == limit:
                updates.close()
                break
        return taken


def async_updates(url: str, limit: int = 100) -> list:
    async def main() -> list:
        async with AsyncOperatorClient(url, TOKEN) as client:
            updates = client.updates()
            taken = []
            try:
                async for update in updates:
                    taken.append(update)
                    if len(taken) == limit:
                        break
            finally:
                await updates.aclose()
            return taken

    return asyncio.run(main())


FEEDS = pytest.mark.parametrize("read", [sync_updates, async_updates], ids=["sync", "async"])


@FEEDS
def test_the_update_feed_is_validated_update_by_update(host: ScriptedHost, read: Any) -> None:
    host.routes["operator/updates"] = lambda exchange: exchange.stream(sse(UPDATES))
    assert read(host.url) == UPDATES
    sent = host.requests[-1]
    assert (sent["method"], sent["headers"]["Accept"], sent["headers"]["Authorization"]) == ("GET", "text/event-stream", f"Bearer {TOKEN}")
    host.routes["operator/updates"] = lambda exchange: exchange.stream(sse([UPDATES[0], {"type": "run", "at": "yesterday"}]))
    assert code_of(lambda: read(host.url)) == "INVALID_RESPONSE"
    host.routes["operator/updates"] = lambda exchange: exchange.stream(b"data: {not json\n\n")
    assert code_of(lambda: read(host.url)) == "INVALID_RESPONSE"
    host.routes["operator/updates"] = lambda exchange: exchange.stream(sse(UPDATES), content_type="application/json")
    assert code_of(lambda: read(host.url)) == "INVALID_RESPONSE"


@FEEDS
def test_leaving_the_update_feed_closes_the_connection(host: ScriptedHost, read: Any) -> None:
    host.routes["operator/updates"] = lambda exchange: exchange.stream(sse(UPDATES[:1]), hold_open=True)
    assert read(host.url, limit=1) == UPDATES[:1]
    assert host.disconnected.wait(5)


def sync_tap(url: str, method: str, *args: Any, **options: Any) -> List[Json]:
    with OperatorClient(url, TOKEN) as client:
        return list(getattr(client, method)(*args, **options))


def async_tap(url: str, method: str, *args: Any, **options: Any) -> List[Json]:
    async def main() -> List[Json]:
        async with AsyncOperatorClient(url, TOKEN) as client:
            return [event async for event in getattr(client, method)(*args, **options)]

    return asyncio.run(main())


def answer_stream(events: List[Json]) -> Callable[[Exchange], None]:
    return lambda exchange: exchange.stream(sse(events))


TAPS = pytest.mark.parametrize("tap", [sync_tap, async_tap], ids=["sync", "async"])
JOB = "00000000-0000-4000-8000-000000000009"


def run_event(kind: str, sequence: int, **payload: Any) -> Json:
    return {"type": kind, "runId": RUN, "sequence": sequence, "timestamp": T0, **payload}


COMPLETED = run_event("run.completed", 7, result={"runId": RUN, "provider": "mock", "model": "demo", "text": "hi", "usage": {}, "steps": 1, "finishReason": "stop"})


@TAPS
def test_watch_run_follows_one_run_to_its_terminal_event(host: ScriptedHost, tap: Any) -> None:
    events = [run_event("text.delta", 5, text="h"), run_event("text.delta", 6, text="i"), COMPLETED, run_event("text.delta", 8, text="late")]
    host.routes[f"operator/runs/{RUN}/events"] = lambda exchange: exchange.stream(sse(events))
    assert [event["sequence"] for event in tap(host.url, "watch_run", RUN)] == [5, 6, 7]
    assert host.requests[-1]["method"] == "GET" and host.requests[-1]["headers"]["Accept"] == "text/event-stream"
    # Dropped by the host for falling behind: the watch ends without a terminal event, no error.
    host.routes[f"operator/runs/{RUN}/events"] = lambda exchange: exchange.stream(sse(events[:2]))
    assert len(tap(host.url, "watch_run", RUN)) == 2
    for bad in ([events[1], events[0]], [{**events[0], "runId": "another-run"}], [{**events[0], "sequence": 0}]):
        host.routes[f"operator/runs/{RUN}/events"] = answer_stream(bad)
        assert code_of(lambda: tap(host.url, "watch_run", RUN)) == "INVALID_RESPONSE"
    sent = len(host.requests)
    assert code_of(lambda: tap(host.url, "watch_run", "RUN-1")) == "INVALID_OPERATOR_REQUEST"
    assert len(host.requests) == sent


@TAPS
def test_tail_job_resumes_after_a_sequence(host: ScriptedHost, tap: Any) -> None:
    host.routes[f"operator/jobs/{JOB}/stream"] = lambda exchange: exchange.stream(sse([run_event("text.delta", 6, text="i"), COMPLETED]))
    assert [event["type"] for event in tap(host.url, "tail_job", JOB, after=5)] == ["text.delta", "run.completed"]
    assert host.requests[-1]["headers"]["Last-Event-ID"] == "5"
    assert code_of(lambda: tap(host.url, "tail_job", JOB, after=7)) == "INVALID_RESPONSE"  # 6 does not follow 7
    assert code_of(lambda: tap(host.url, "tail_job", "not-a-job")) == "INVALID_JOB"
    assert code_of(lambda: tap(host.url, "tail_job", JOB, after=-1)) == "INVALID_JOB_CURSOR"
