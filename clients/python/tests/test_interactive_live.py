"""Approvals and application-owned tools against the real host, both clients, HTTP and HTTPS.

Scenario code is written once as coroutines: ``settle`` awaits what the async client
returns and passes the sync client's plain values through.
"""
from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Awaitable, Callable, Dict, List, Optional

import pytest

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError
from live import LiveHost

Event = Dict[str, Any]
Handler = Callable[[Any, Event], Awaitable[None]]
LOOKUP = {
    "name": "application_lookup",
    "description": "Look up the forecast for a place",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "outputSchema": {"type": "object", "properties": {"forecast": {"type": "string"}}, "required": ["forecast"]},
}
PAUSE = {"mode": "interactive", "idlePolicy": "pause"}


def tool_script(name: str, arguments: Dict[str, Any]) -> str:
    steps = [{"actions": [{"toolCall": {"name": name, "arguments": arguments}}]}, {"actions": [{"echoToolResults": True}]}]
    return json.dumps({"mockScript": {"steps": steps}})


def lookup_request(**extra: Any) -> Dict[str, Any]:
    return {"provider": "mock", "model": "demo", "input": tool_script("application_lookup", {"query": "Lisbon"}),
            "tools": ["application_lookup"], "applicationTools": [LOOKUP], **extra}


async def settle(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def error_of(call: Callable[[], Any]) -> DriverError:
    try:
        await settle(call())
    except DriverError as error:
        return error
    raise AssertionError("the call succeeded")


def then(value: Any, use: Callable[[Any], Any]) -> Any:
    """``use(value)``, deferred into a coroutine when ``value`` is awaitable (async client)."""
    if not inspect.isawaitable(value):
        return use(value)

    async def later() -> Any:
        return use(await value)

    return later()


async def stream_sync(live: LiveHost, request: Dict[str, Any], handle: Handler, functions: Optional[Dict[str, Any]]) -> List[Event]:
    events: List[Event] = []
    with AgenticClient(live.url, live.token, ca_file=live.ca_file, io_timeout=20) as client:
        opened = client.stream(request) if functions is None else client.stream_with_tools(request, functions)  # type: ignore[arg-type]
        with opened as stream:
            for event in stream:
                events.append(dict(event))
                await handle(client, events[-1])
    return events


async def stream_async(live: LiveHost, request: Dict[str, Any], handle: Handler, functions: Optional[Dict[str, Any]]) -> List[Event]:
    events: List[Event] = []
    async with AsyncAgenticClient(live.url, live.token, ca_file=live.ca_file, io_timeout=20) as client:
        opened = client.stream(request) if functions is None else client.stream_with_tools(request, functions)  # type: ignore[arg-type]
        async with opened as stream:
            async for event in stream:
                events.append(dict(event))
                await handle(client, events[-1])
    return events


Streamer = Callable[[LiveHost, Dict[str, Any], Handler, Optional[Dict[str, Any]]], Awaitable[List[Event]]]
MODES = pytest.mark.parametrize("streamer", [stream_sync, stream_async], ids=["sync", "async"])


def play(streamer: Streamer, live: LiveHost, request: Dict[str, Any], handle: Handler, functions: Optional[Dict[str, Any]] = None) -> List[Event]:
    return asyncio.run(streamer(live, request, handle, functions))


def types(events: List[Event]) -> List[str]:
    return [event["type"] for event in events if event["type"] not in ("run.progress", "usage.reported", "step.started")]


@MODES
def test_application_function_reports_progress_is_approved_completes_and_rejects_a_stale_result(live_host: LiveHost, streamer: Streamer) -> None:
    calls: List[Dict[str, Any]] = []
    receipts: List[Any] = []
    resolutions: List[Any] = []
    stale: List[DriverError] = []
    requested: List[Event] = []

    def forecast(arguments: Dict[str, Any], context: Any) -> Any:
        calls.append(arguments)
        return then(context.progress(), lambda receipt: (receipts.append(receipt), {"forecast": f"sunny in {arguments['query']}"})[1])

    async def handle(client: Any, event: Event) -> None:
        if event["type"] == "approval.requested":
            pending = client.approval(event)
            event["approval"]["call"]["arguments"]["query"] = "elsewhere"  # the decision still echoes the proposal
            resolutions.append(await settle(pending.approve()))
            stale.append(await error_of(pending.approve))
        elif event["type"] == "tool.execution.requested":
            requested.append(event)
        elif event["type"] == "tool.completed":
            pending = client.execution(requested[0])
            stale.append(await error_of(lambda: pending.complete({"forecast": "again"})))
            stale.append(await error_of(pending.progress))

    request = lookup_request(applicationTools=[dict(LOOKUP, requiresApproval=True)], approvals=PAUSE)
    events = play(streamer, live_host, request, handle, {"application_lookup": forecast})

    assert types(events) == ["run.started", "tool.called", "approval.requested", "approval.resolved",
                             "tool.execution.requested", "tool.completed", "text.delta", "run.completed"]
    assert calls == [{"query": "Lisbon"}]
    assert [r["outcome"] for r in resolutions] == ["approved"]
    assert [r["status"] for r in receipts] == ["progress"]
    assert receipts[0]["executionId"] == requested[0]["execution"]["executionId"]
    assert [e.code for e in stale] == ["APPROVAL_NOT_FOUND", "TOOL_EXECUTION_NOT_FOUND", "TOOL_EXECUTION_NOT_FOUND"]
    assert events[-1]["result"]["text"] == '[{"forecast":"sunny in Lisbon"}]'


@MODES
def test_an_execution_answered_by_hand_and_an_unregistered_tool_is_never_run(live_host: LiveHost, streamer: Streamer) -> None:
    receipts: List[Any] = []

    async def handle(client: Any, event: Event) -> None:
        if event["type"] == "tool.execution.requested":
            pending = client.execution(event)
            receipts.append(await settle(pending.progress()))
            receipts.append(await settle(pending.complete({"forecast": "by hand"})))

    # An empty function map: the runner passes the request on and executes nothing.
    events = play(streamer, live_host, lookup_request(), handle, {})
    assert [r["status"] for r in receipts] == ["progress", "accepted"]
    assert [e["output"] for e in events if e["type"] == "tool.completed"] == [{"forecast": "by hand"}]
    assert events[-1]["type"] == "run.completed"


@MODES
def test_a_raising_function_is_reported_as_a_failure_with_an_uncertain_outcome(live_host: LiveHost, streamer: Streamer) -> None:
    def broken(arguments: Dict[str, Any], context: Any) -> Any:
        raise RuntimeError("the forecast service is down")

    async def ignore(client: Any, event: Event) -> None:
        return None

    events = play(streamer, live_host, lookup_request(), ignore, {"application_lookup": broken})
    assert "tool.completed" not in types(events)
    assert events[-1]["type"] == "run.failed"
    assert events[-1]["error"]["code"] == "APPLICATION_TOOL_FAILED"
    assert events[-1]["error"].get("outcome") == "uncertain"


@MODES
def test_a_denied_approval_never_runs_the_function(live_host: LiveHost, streamer: Streamer) -> None:
    calls: List[Any] = []
    resolutions: List[Any] = []

    async def handle(client: Any, event: Event) -> None:
        if event["type"] == "approval.requested":
            resolutions.append(await settle(client.approval(event).deny()))

    request = lookup_request(applicationTools=[dict(LOOKUP, requiresApproval=True)], approvals=PAUSE)
    events = play(streamer, live_host, request, handle, {"application_lookup": lambda arguments, context: calls.append(arguments)})
    assert calls == []
    assert [r["outcome"] for r in resolutions] == ["denied"]
    assert "tool.execution.requested" not in types(events)
    assert events[-1]["type"] == "run.failed" and events[-1]["error"]["code"] == "APPROVAL_DENIED"
