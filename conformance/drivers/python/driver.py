"""Conformance driver for the Python client (see conformance/CONTRACT.md).

Runs every shared vector, the versioning cases and the live-host scenarios once with
``AgenticClient`` (mode ``sync``) and once with ``AsyncAgenticClient`` (mode ``async``),
and prints one JSON summary line per mode.
"""
from __future__ import annotations

import asyncio
import http.client
import inspect
import json
import os
import ssl
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Optional
from urllib.parse import urlsplit

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError, check_citations

# A generous bound so that a misbehaving case fails instead of hanging the harness.
CASE_IO_TIMEOUT = 20.0
STREAM_FIELDS = ("approvals", "session", "applicationTools", "tools", "retrieval")
HELLO = {"provider": "mock", "model": "demo", "input": "Hello"}
EXPECTED_TEXT = "Hello \U0001f30d"
# Vector operations that call one client method with one field of the case (or, when a
# key is named, with that key of the field: the id of an identity).
CALLS = {
    "approval": ("decide_approval", "decision", None),
    "tool-result": ("complete_tool", "toolResult", None),
    "tool-progress": ("report_tool_progress", "toolIdentity", None),
    "session-create": ("create_session", "sessionCreate", None),
    "session-read": ("read_session", "sessionIdentity", "id"),
    "session-delete": ("delete_session", "sessionIdentity", "id"),
    "job-submit": ("submit_job", "jobSubmit", None),
    "job-read": ("read_job", "jobIdentity", "id"),
    "job-cancel": ("cancel_job", "jobIdentity", "id"),
    "job-events": ("job_events", "jobEvents", None),
    "run-read": ("read_run", "runIdentity", "runId"),
    "run-events": ("run_events", "runEvents", None),
}
# The document every `ingest` case sends (CONTRACT.md); the peer answers the case's receipt.
INGEST_REQUEST = {"corpus": "library", "document": {"type": "text", "source": {"id": "paper", "revision": "r1"},
                                                    "mediaType": "text/markdown", "text": "# Paper\n\nA short paper.\n"}}
Handler = Callable[[Any, Dict[str, Any]], Awaitable[None]]


@dataclass
class Env:
    transport: str
    reference: str
    url: str
    token: str
    restricted_token: str
    ca_file: Optional[str]
    untrusted_url: Optional[str]
    mismatch_url: Optional[str]
    fixtures: Dict[str, Any]
    versioning: Dict[str, Any]
    skip: Dict[str, Any]
    base_urls: Dict[str, Any]

    @classmethod
    def load(cls) -> "Env":
        def read(name: str) -> Any:
            with open(os.environ[name], encoding="utf-8") as handle:
                return json.load(handle)

        return cls(
            transport=os.environ["AGENTICDRIVER_TEST_TRANSPORT"],
            reference=os.environ["AGENTICDRIVER_TEST_REFERENCE_URL"],
            url=os.environ["AGENTICDRIVER_TEST_URL"],
            token=os.environ["AGENTICDRIVER_TEST_TOKEN"],
            restricted_token=os.environ["AGENTICDRIVER_TEST_RESTRICTED_TOKEN"],
            ca_file=os.environ.get("AGENTICDRIVER_TEST_CA_FILE") or None,
            untrusted_url=os.environ.get("AGENTICDRIVER_TEST_UNTRUSTED_URL") or None,
            mismatch_url=os.environ.get("AGENTICDRIVER_TEST_MISMATCH_URL") or None,
            fixtures=read("AGENTICDRIVER_TEST_FIXTURES"),
            versioning=read("AGENTICDRIVER_TEST_VERSIONING"),
            skip=read("AGENTICDRIVER_TEST_SKIP"),
            base_urls=read("AGENTICDRIVER_TEST_BASE_URLS"),
        )


@dataclass
class Tally:
    mode: str
    passed: int = 0
    skipped: int = 0
    failures: List[Dict[str, str]] = field(default_factory=list)

    def record(self, case_id: str, problem: Optional[str]) -> None:
        if problem is None:
            self.passed += 1
        else:
            self.failures.append({"id": case_id, "detail": problem})


class Outcome(Exception):
    """A scenario's own assertion failed."""


def expect(condition: bool, detail: str) -> None:
    if not condition:
        raise Outcome(detail)


class SyncMode:
    """Client operations in the shape every scenario uses: ``await mode.call(...)``."""

    name = "sync"

    def __init__(self, env: Env) -> None:
        self.env = env

    def client(self, url: str, token: str) -> AgenticClient:
        return AgenticClient(url, token, ca_file=self.env.ca_file, io_timeout=CASE_IO_TIMEOUT)

    async def make(self, url: str, token: str) -> None:
        """Makes a client and sends nothing: the base-URL rules."""
        self.client(url, token).close()

    async def protocol(self, url: str, token: str) -> Any:
        return self.client(url, token).protocol()

    async def providers(self, url: str, token: str) -> Any:
        return self.client(url, token).providers()

    async def run(self, url: str, token: str, request: Dict[str, Any]) -> Any:
        return self.client(url, token).run(request)  # type: ignore[arg-type]

    async def stream(self, url: str, token: str, request: Dict[str, Any], stop: Callable[[Dict[str, Any]], bool]) -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        with self.client(url, token).stream(request) as stream:  # type: ignore[arg-type]
            for event in stream:
                events.append(dict(event))
                if stop(events[-1]):
                    break
        return events

    async def call(self, url: str, token: str, method: str, argument: Any) -> Any:
        return getattr(self.client(url, token), method)(argument)

    async def interactive(self, request: Dict[str, Any], handle: Handler, functions: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
        """Stream on the live host, awaiting ``handle(client, event)`` for each event."""
        events: List[Dict[str, Any]] = []
        client = self.client(self.env.url, self.env.token)
        opened = client.stream_with_tools(request, functions) if functions else client.stream(request)  # type: ignore[arg-type]
        with opened as stream:
            for event in stream:
                events.append(dict(event))
                await handle(client, events[-1])
        return events

    async def follow(self, run_id: str, handle: Handler) -> List[Dict[str, Any]]:
        """Follow a run on the live host to its end, awaiting ``handle(client, event)`` for each event."""
        events: List[Dict[str, Any]] = []
        client = self.client(self.env.url, self.env.token)
        for event in client.follow_run(run_id):
            events.append(dict(event))
            await handle(client, events[-1])
        return events

    async def tail(self, url: str, token: str, job_id: str, after: int, limit: Optional[int], method: str = "tail_job") -> List[Dict[str, Any]]:
        """Tail a job (or, with ``follow_run``, follow a run) from ``after``; stopping after ``limit`` events closes the connection."""
        events: List[Dict[str, Any]] = []
        tail = getattr(self.client(url, token), method)(job_id, after=after)
        try:
            for event in tail:
                events.append(dict(event))
                if limit is not None and len(events) >= limit:
                    break
        finally:
            tail.close()
        return events

    def background(self, call: Awaitable[Any]) -> "asyncio.Future[Any]":
        """Runs a client call while the scenario goes on: a blocking call, in a thread of its own."""
        async def settled() -> Any:
            return await call

        return asyncio.ensure_future(asyncio.to_thread(asyncio.run, settled()))

    def lookup(self, receipts: List[Any]) -> Callable[..., Any]:
        """The application function of the application-tool scenarios: progress, then answer."""
        def lookup(arguments: Dict[str, Any], context: Any) -> Any:
            receipts.append(context.progress())
            return ANSWER

        return lookup


class AsyncMode(SyncMode):
    name = "async"

    def aclient(self, url: str, token: str) -> AsyncAgenticClient:
        return AsyncAgenticClient(url, token, ca_file=self.env.ca_file, io_timeout=CASE_IO_TIMEOUT)

    async def make(self, url: str, token: str) -> None:
        async with self.aclient(url, token):
            pass

    async def protocol(self, url: str, token: str) -> Any:
        async with self.aclient(url, token) as client:
            return await client.protocol()

    async def providers(self, url: str, token: str) -> Any:
        async with self.aclient(url, token) as client:
            return await client.providers()

    async def run(self, url: str, token: str, request: Dict[str, Any]) -> Any:
        async with self.aclient(url, token) as client:
            return await client.run(request)  # type: ignore[arg-type]

    async def stream(self, url: str, token: str, request: Dict[str, Any], stop: Callable[[Dict[str, Any]], bool]) -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        async with self.aclient(url, token) as client:
            async with client.stream(request) as stream:  # type: ignore[arg-type]
                async for event in stream:
                    events.append(dict(event))
                    if stop(events[-1]):
                        break
        return events

    async def call(self, url: str, token: str, method: str, argument: Any) -> Any:
        async with self.aclient(url, token) as client:
            return await getattr(client, method)(argument)

    async def interactive(self, request: Dict[str, Any], handle: Handler, functions: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        async with self.aclient(self.env.url, self.env.token) as client:
            opened = client.stream_with_tools(request, functions) if functions else client.stream(request)  # type: ignore[arg-type]
            async with opened as stream:
                async for event in stream:
                    events.append(dict(event))
                    await handle(client, events[-1])
        return events

    async def follow(self, run_id: str, handle: Handler) -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        async with self.aclient(self.env.url, self.env.token) as client:
            async for event in client.follow_run(run_id):
                events.append(dict(event))
                await handle(client, events[-1])
        return events

    async def tail(self, url: str, token: str, job_id: str, after: int, limit: Optional[int], method: str = "tail_job") -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        async with self.aclient(url, token) as client:
            tail = getattr(client, method)(job_id, after=after)
            try:
                async for event in tail:
                    events.append(dict(event))
                    if limit is not None and len(events) >= limit:
                        break
            finally:
                await tail.aclose()
        return events

    def background(self, call: Awaitable[Any]) -> "asyncio.Future[Any]":
        return asyncio.ensure_future(call)

    def lookup(self, receipts: List[Any]) -> Callable[..., Any]:
        async def lookup(arguments: Dict[str, Any], context: Any) -> Any:
            receipts.append(await context.progress())
            return ANSWER

        return lookup


def never(_: Dict[str, Any]) -> bool:
    return False


def raise_terminal_failure(events: List[Dict[str, Any]]) -> None:
    """A stream's failure or cancellation terminal, as the error the case compares."""
    if events and events[-1]["type"] in ("run.failed", "run.cancelled"):
        error = events[-1]["error"]
        raise DriverError(error["code"], error["message"], error["retryable"], error.get("outcome"))


def judge(case: Dict[str, Any], error: Optional[BaseException]) -> Optional[str]:
    """None when the outcome is what the case expects, else why not."""
    expected = case.get("expectedError")
    if case.get("expectTransportError"):
        return None if error is not None else "expected a transport failure, the call succeeded"
    if expected is not None:
        if not isinstance(error, DriverError):
            return f"expected {expected}, got {error!r}" if error else f"expected {expected}, the call succeeded"
        if error.code != expected:
            return f"expected {expected}, got {error.code}: {error.message}"
        if "retryable" in case and error.retryable != case["retryable"]:
            return f"expected retryable={case['retryable']}, got {error.retryable}"
        return None
    return None if error is None else f"unexpected failure {error!r}"


async def run_vector(mode: SyncMode, case: Dict[str, Any]) -> Optional[str]:
    base = f"{mode.env.reference}/fixtures/{case['id']}/"
    operation = case.get("operation")
    try:
        if operation == "providers":
            await mode.providers(base, mode.env.token)
        elif operation == "protocol":
            await mode.protocol(base, mode.env.token)
        elif operation in CALLS:
            method, field_name, key = CALLS[operation]
            argument = case[field_name] if key is None else case[field_name][key]
            await mode.call(base, mode.env.token, method, argument)
        elif operation == "ingest":
            await mode.call(base, mode.env.token, "ingest_document", INGEST_REQUEST)
        else:
            request = dict(HELLO, **{key: case[key] for key in STREAM_FIELDS if key in case})
            cancel = bool(case.get("cancel"))
            events = await mode.stream(base, mode.env.token, request, lambda e: cancel and e["type"] == "text.delta")
            if cancel:
                expect(events[-1:] and events[-1]["type"] == "text.delta", "the cancel case delivered no text.delta")
            else:
                raise_terminal_failure(events)
                expect(events[-1]["type"] == "run.completed", "the stream ended without run.completed")
                expect(events[-1]["result"]["text"] == EXPECTED_TEXT, "result.text differs")
    except Outcome as problem:
        return str(problem)
    except Exception as error:  # judged below: any failure may be the expected one
        return judge(case, error)
    return judge(case, None)


async def run_versioning(mode: SyncMode, case: Dict[str, Any]) -> Optional[str]:
    base = f"{mode.env.reference}/versioning/{case['id']}/"
    try:
        events = await mode.stream(base, mode.env.token, dict(HELLO), never)
        raise_terminal_failure(events)
        types = [event["type"] for event in events]
        expect(types == case.get("expectedTypes", types), f"delivered {types}")
    except Outcome as problem:
        return str(problem)
    except Exception as error:
        return judge(case, error)
    return judge(case, None)


def skip_reason(env: Env, case: Dict[str, Any]) -> Optional[str]:
    operations = env.skip.get("operations", {})
    cases = env.skip.get("cases", {})
    reason: Optional[str] = cases.get(case["id"]) or operations.get(case.get("operation", ""))
    return reason


# ---------------------------------------------------------------------------
# Live host


def metrics(env: Env, path: str) -> Dict[str, int]:
    parts = urlsplit(f"{env.reference}{path}")
    assert parts.hostname is not None
    if parts.scheme == "https":
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=10, context=ssl.create_default_context(cafile=env.ca_file)
        )
    else:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", parts.path, headers={"Authorization": f"Bearer {env.token}"})
        response = connection.getresponse()
        value: Dict[str, int] = json.loads(response.read())
        return value
    finally:
        connection.close()


async def expect_error(call: Awaitable[Any], code: str) -> None:
    try:
        await call
    except DriverError as error:
        expect(error.code == code, f"expected {code}, got {error.code}: {error.message}")
        return
    raise Outcome(f"expected {code}, the call succeeded")


async def driver_error(call: Awaitable[Any]) -> Optional[DriverError]:
    """The typed error a call raised, or None when it succeeded."""
    try:
        await call
    except DriverError as error:
        return error
    return None


def describe_error(error: Optional[DriverError]) -> str:
    return f"{error.code} (retryable {error.retryable}): {error.message}" if error else "success"


async def expect_failure(call: Awaitable[Any]) -> None:
    try:
        await call
    except Exception:
        return
    raise Outcome("expected a failure, the call succeeded")


def script(*actions: Dict[str, Any]) -> str:
    return json.dumps({"mockScript": {"steps": [{"actions": list(actions)}]}})


async def live_protocol(mode: SyncMode) -> None:
    info = await mode.protocol(mode.env.url, mode.env.token)
    expect(info["version"] == "1.0" and "1.0" in info["supportedVersions"], f"protocol {info}")
    expect({"json-results", "event-stream"} <= set(info["features"]), f"features {info['features']}")


async def live_providers(mode: SyncMode) -> None:
    providers = await mode.providers(mode.env.url, mode.env.token)
    mock = [p for p in providers if p["id"] == "mock"]
    expect(len(mock) == 1 and mock[0]["capabilities"]["tools"] is True, f"providers {providers}")
    restricted = await mode.providers(mode.env.url, mode.env.restricted_token)
    expect(restricted == [], f"restricted token sees {restricted}")


async def live_run(mode: SyncMode) -> None:
    result = await mode.run(mode.env.url, mode.env.token, dict(HELLO))
    expect(result["text"] == "Hello", f"text {result['text']!r}")


async def live_stream(mode: SyncMode) -> None:
    events = await mode.stream(mode.env.url, mode.env.token, dict(HELLO), never)
    expect(events[0]["type"] == "run.started" and events[-1]["type"] == "run.completed", "first/last event")
    expect([e["sequence"] for e in events] == list(range(1, len(events) + 1)), "sequence")


async def live_unauthorized(mode: SyncMode) -> None:
    await expect_error(mode.run(mode.env.url, "wrong-token-" + "x" * 32, dict(HELLO)), "UNAUTHORIZED")


async def live_forbidden(mode: SyncMode) -> None:
    await expect_error(mode.run(mode.env.url, mode.env.restricted_token, dict(HELLO)), "FORBIDDEN")
    await expect_error(mode.run(mode.env.url, mode.env.token, dict(HELLO, tools=["nope"])), "FORBIDDEN")


async def live_quiet(mode: SyncMode) -> None:
    result = await mode.run(mode.env.url, mode.env.token, dict(HELLO, input=script({"stallMs": 80}, {"text": "quiet"})))
    expect(result["text"] == "quiet", f"text {result['text']!r}")


async def live_idle_timeout(mode: SyncMode) -> None:
    request = dict(HELLO, input=script({"hang": True}), idleTimeoutMs=30)
    await expect_error(mode.run(mode.env.url, mode.env.token, request), "IDLE_TIMEOUT")


async def live_progress(mode: SyncMode) -> None:
    request = dict(HELLO, input=script({"progress": 16, "everyMs": 20}, {"text": "done"}), idleTimeoutMs=150)
    result = await mode.run(mode.env.url, mode.env.token, request)
    expect(result["text"] == "done", f"text {result['text']!r}")


async def live_cancel(mode: SyncMode) -> None:
    before = metrics(mode.env, "/live-metrics")["cancelled"]
    request = dict(HELLO, input=script({"hang": True}))
    await mode.stream(mode.env.url, mode.env.token, request, lambda e: e["type"] == "run.started")
    deadline = time.monotonic() + 5
    while metrics(mode.env, "/live-metrics")["cancelled"] <= before:
        expect(time.monotonic() < deadline, "the host did not see the run cancelled within 5 s")
        await asyncio.sleep(0.05)


def fresh_key() -> str:
    """A key no earlier mode, transport or harness run used, so each run of the scenario starts fresh."""
    return f"conformance-{uuid.uuid4()}"


async def live_idempotency(mode: SyncMode) -> None:
    url, token = mode.env.url, mode.env.token
    request = dict(HELLO, idempotencyKey=fresh_key())
    first = await mode.run(url, token, request)
    again = await mode.run(url, token, request)
    expect(first["text"] == "Hello" and again["text"] == "Hello", f"texts {first['text']!r}, {again['text']!r}")
    expect(again["runId"] == first["runId"], f"the repeat has runId {again['runId']}, the first {first['runId']}")
    events = await mode.stream(url, token, request, never)
    expect(events[0]["type"] == "run.started", f"streamed replay starts with {events[0]['type']}")
    expect_terminal(events, "run.completed", text="Hello")
    expect([e["runId"] for e in events] == [first["runId"]] * len(events), "streamed replay: runId differs")
    expect([e["sequence"] for e in events] == list(range(1, len(events) + 1)), "streamed replay: sequence")
    conflict = await driver_error(mode.run(url, token, dict(request, input="Other")))
    expect(conflict is not None and conflict.code == "IDEMPOTENCY_CONFLICT" and conflict.retryable is False,
           f"a different request under the key: {describe_error(conflict)}")
    slow = dict(HELLO, input=script({"stallMs": 400}, {"text": "late"}), idempotencyKey=fresh_key())
    running = mode.background(mode.run(url, token, slow))
    await asyncio.sleep(0.1)
    busy = await driver_error(mode.run(url, token, slow))
    late = await running
    expect(busy is not None and busy.code == "OPERATION_IN_PROGRESS" and busy.retryable is True,
           f"a duplicate while running: {describe_error(busy)}")
    expect(late["text"] == "late", f"the first run's text {late['text']!r}")
    retried = await mode.run(url, token, slow)
    expect(retried["runId"] == late["runId"] and retried["text"] == "late", f"the retry got {retried['runId']} {retried['text']!r}")


JOB_INPUT = script({"text": "one "}, {"stallMs": 150}, {"text": "two "}, {"stallMs": 150}, {"text": "three"})


async def live_job_tail(mode: SyncMode) -> None:
    url, token = mode.env.url, mode.env.token
    submission = {"key": fresh_key(), "request": dict(HELLO, input=JOB_INPUT)}
    job = await mode.call(url, token, "submit_job", submission)
    first = await mode.tail(url, token, job["id"], 0, 3)
    expect(len(first) == 3, f"the first tail delivered {len(first)} events")
    rest = await mode.tail(url, token, job["id"], first[-1]["sequence"], None)
    events = first + rest
    sequences = [e["sequence"] for e in events]
    expect(sequences == list(range(1, len(events) + 1)), f"sequences {sequences}")
    expect_terminal(events, "run.completed", text="one two three")
    read = await mode.call(url, token, "read_job", job["id"])
    expect(read["state"] == "completed" and read["cursor"] == len(events),
           f"read_job: {read['state']} at cursor {read['cursor']}, {len(events)} events tailed")
    again = await mode.call(url, token, "submit_job", submission)
    expect(again["id"] == job["id"], f"the same key and request again got job {again['id']}, the first {job['id']}")


async def live_run_read_back(mode: SyncMode) -> None:
    url, token = mode.env.url, mode.env.token
    result = await mode.run(url, token, HELLO)
    read = await mode.call(url, token, "read_run", result["runId"])
    expect(read["mode"] == "attached" and read["state"] == "completed", f"read_run: {read['mode']} {read['state']}")
    expect(read.get("result", {}).get("text") == "Hello" and read["result"]["runId"] == result["runId"], f"read_run result {read.get('result')}")
    page = await mode.call(url, token, "run_events", {"runId": result["runId"], "after": 0})
    sequences = [e["sequence"] for e in page["events"]]
    expect(sequences == list(range(1, read["cursor"] + 1)), f"run_events: sequences {sequences}, cursor {read['cursor']}")
    expect_terminal(page["events"], "run.completed", text="Hello")
    expect(page["hasMore"] is False, "run_events: hasMore at the end")
    other = await driver_error(mode.call(url, mode.env.restricted_token, "read_run", result["runId"]))
    expect(other is not None and other.code == "RUN_NOT_FOUND", f"another subject: {describe_error(other)}")


async def live_run_follow(mode: SyncMode) -> None:
    url, token = mode.env.url, mode.env.token
    job = await mode.call(url, token, "submit_job", {"key": fresh_key(), "request": dict(HELLO, input=JOB_INPUT)})
    first = await mode.tail(url, token, job["runId"], 0, 3, "follow_run")
    expect(len(first) == 3, f"the first follow delivered {len(first)} events")
    events = first + await mode.tail(url, token, job["runId"], first[-1]["sequence"], None, "follow_run")
    sequences = [e["sequence"] for e in events]
    expect(sequences == list(range(1, len(events) + 1)), f"sequences {sequences}")
    expect_terminal(events, "run.completed", text="one two three")
    read = await mode.call(url, token, "read_run", job["runId"])
    expect(read["mode"] == "background" and read.get("jobId") == job["id"], f"read_run: {read['mode']}, job {read.get('jobId')}")
    expect(read["state"] == "completed" and read["cursor"] == len(events),
           f"read_run: {read['state']} at cursor {read['cursor']}, {len(events)} events followed")


async def live_session(mode: SyncMode) -> None:
    url, token = mode.env.url, mode.env.token
    created = await mode.call(url, token, "create_session", {"provider": "mock", "model": "demo", "mode": "history"})
    session_id = created["session"]["id"]
    expect(created["session"]["revision"] == 0, f"created at revision {created['session']['revision']}")
    binding = {"id": session_id, "revision": 0}
    result = await mode.run(url, token, dict(HELLO, session=binding))
    expect(result["text"] == "Hello" and result.get("session", {}).get("revision") == 1,
           f"the run: text {result['text']!r}, session {result.get('session')}")
    stale = await driver_error(mode.run(url, token, dict(HELLO, session=binding)))
    expect(stale is not None and stale.code == "SESSION_REVISION_CONFLICT", f"revision 0 again: {describe_error(stale)}")
    read = await mode.call(url, token, "read_session", session_id)
    expect(read["session"]["revision"] == 1 and len(read["history"]) == 2,
           f"read_session: revision {read['session']['revision']}, {len(read['history'])} messages")
    deleted = await mode.call(url, token, "delete_session", session_id)
    expect(deleted["deleted"] is True and deleted["id"] == session_id, f"delete_session {deleted}")
    gone = await driver_error(mode.call(url, token, "read_session", session_id))
    expect(gone is not None and gone.code == "SESSION_NOT_FOUND", f"reading the deleted session: {describe_error(gone)}")


# The retrieval scenario's Markdown document: the same in every driver, mode and transport
# (a repeated ingest is `unchanged`).
RETRIEVAL_DOCUMENT = {"corpus": "default", "document": {
    "type": "text", "source": {"id": "conformance-lighthouse", "revision": "r1"}, "mediaType": "text/markdown",
    "text": "# Lighthouse keeping\n\nThe lamp is lit at dusk and trimmed every four hours.\n\n## Fog\n\nIn fog the keeper sounds the horn every thirty seconds.\n"}}
RETRIEVAL_SCOPE = {"corpus": "default", "query": "horn", "sourceIds": ["conformance-lighthouse"]}


async def live_retrieval(mode: SyncMode) -> None:
    url, token = mode.env.url, mode.env.token
    receipt = await mode.call(url, token, "ingest_document", RETRIEVAL_DOCUMENT)
    expect(receipt["ingestion"]["format"] == "markdown" and receipt["chunks"] >= 1, f"ingest receipt {receipt}")
    found = await mode.call(url, token, "search_retrieval", RETRIEVAL_SCOPE)
    expect(any("horn" in hit["text"] for hit in found["hits"]), f"search found {[hit['text'] for hit in found['hits']]}")
    # A vector index as 1.0 defines it (what installed clients require), ranked as the additive field says.
    index = found["index"]
    expect(index["metric"] == "cosine" and index["providerId"] == "builtin" and index.get("ranking") == "bm25", f"search index {index}")
    result = await mode.run(url, token, dict(HELLO, input="When is the horn sounded?", retrieval=RETRIEVAL_SCOPE))
    hits = [hit["chunkId"] for hit in result.get("retrieval", {}).get("hits", [])]
    expect(len(hits) >= 1, "the run retrieved nothing")
    cited = [source["id"] for source in check_citations(result)]
    expect(cited == hits, f"the answer cites {cited}, the hits are {hits}")


ANSWER = {"answer": 42}
INTERACTIVE = {"mode": "interactive", "idlePolicy": "pause"}
LOOKUP_TOOL = {
    "name": "application_lookup",
    "description": "Look something up",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "outputSchema": {"type": "object"},
}


def tool_script(name: str, arguments: Dict[str, Any]) -> str:
    """One step calling ``name``, then one step answering with the tool results."""
    steps = [{"actions": [{"toolCall": {"name": name, "arguments": arguments}}]}, {"actions": [{"echoToolResults": True}]}]
    return json.dumps({"mockScript": {"steps": steps}})


async def settle(value: Any) -> Any:
    """A client call's result in either mode (the async client returns coroutines)."""
    return await value if inspect.isawaitable(value) else value


async def expect_code(call: Callable[[], Any], code: str) -> None:
    """``expect_error`` for a client call of either mode (a sync call raises at once)."""
    async def attempt() -> Any:
        return await settle(call())

    await expect_error(attempt(), code)


def only(events: List[Dict[str, Any]], kind: str) -> List[Dict[str, Any]]:
    return [event for event in events if event["type"] == kind]


def expect_terminal(events: List[Dict[str, Any]], kind: str, code: Optional[str] = None, text: Optional[str] = None) -> None:
    last = events[-1]
    expect(last["type"] == kind, f"ended with {last['type']} {last.get('error', '')}, expected {kind}")
    if code is not None:
        expect(last["error"]["code"] == code, f"{kind} code {last['error']['code']}, expected {code}")
    if text is not None:
        expect(last["result"]["text"] == text, f"result text {last['result']['text']!r}, expected {text!r}")


def expect_resolved(events: List[Dict[str, Any]], outcome: str) -> None:
    outcomes = [event["resolution"]["outcome"] for event in only(events, "approval.resolved")]
    expect(outcomes == [outcome], f"approval.resolved outcomes {outcomes}, expected [{outcome!r}]")


async def approval_run(mode: SyncMode, decision: Optional[str], **approvals: Any) -> List[Dict[str, Any]]:
    """The guarded-tool run, answering its approval with ``decision`` (None: never)."""
    async def handle(client: Any, event: Dict[str, Any]) -> None:
        if event["type"] != "approval.requested" or decision is None:
            return
        pending = client.approval(event)
        receipt = await settle(pending.decide(decision))
        expected = {"approve": "approved", "deny": "denied", "cancel": "cancelled"}[decision]
        expect(receipt["outcome"] == expected and receipt["callId"] == event["approval"]["call"]["id"], f"receipt {receipt}")
        if decision == "approve":
            await expect_code(pending.approve, "APPROVAL_NOT_FOUND")

    request = dict(HELLO, input=tool_script("guarded", {"text": "hi"}), tools=["guarded"], approvals=dict(INTERACTIVE, **approvals))
    events = await mode.interactive(request, handle)
    expect(len(only(events, "approval.requested")) == 1, "expected one approval.requested")
    return events


async def live_approval_approve(mode: SyncMode) -> None:
    events = await approval_run(mode, "approve")
    expect_resolved(events, "approved")
    expect(len(only(events, "tool.completed")) == 1, "expected one tool.completed")
    expect_terminal(events, "run.completed", text='[{"approved":true,"arguments":{"text":"hi"}}]')


async def live_background_approval(mode: SyncMode) -> None:
    """A job that waits for approval, followed, approved through the handle made from the followed event, then waited for."""
    url, token = mode.env.url, mode.env.token
    request = dict(HELLO, input=tool_script("guarded", {"text": "hi"}), tools=["guarded"], approvals=INTERACTIVE)
    job = await mode.call(url, token, "submit_job", {"key": fresh_key(), "request": request})
    receipts: List[Any] = []

    async def handle(client: Any, event: Dict[str, Any]) -> None:
        if event["type"] == "approval.requested":
            receipts.append(await settle(client.approval(event).approve()))

    events = await mode.follow(job["runId"], handle)
    expect([receipt["outcome"] for receipt in receipts] == ["approved"], f"receipts {receipts}")
    expect([e["sequence"] for e in events] == list(range(1, len(events) + 1)), f"sequences {[e['sequence'] for e in events]}")
    expect_resolved(events, "approved")
    expect(len(only(events, "tool.completed")) == 1, "expected one tool.completed")
    text = '[{"approved":true,"arguments":{"text":"hi"}}]'
    expect_terminal(events, "run.completed", text=text)
    result = await mode.call(url, token, "wait_run", job["runId"])
    expect(result["runId"] == job["runId"] and result["text"] == text, f"wait_run {result}")
    read = await mode.call(url, token, "read_run", job["runId"])
    expect(read["mode"] == "background" and read["state"] == "completed" and read["cursor"] == len(events),
           f"read_run: {read['mode']} {read['state']} at cursor {read['cursor']}")


async def live_approval_deny(mode: SyncMode) -> None:
    events = await approval_run(mode, "deny")
    expect_resolved(events, "denied")
    expect(not only(events, "tool.completed"), "a denied tool completed")
    expect_terminal(events, "run.failed", code="APPROVAL_DENIED")


async def live_approval_cancel(mode: SyncMode) -> None:
    events = await approval_run(mode, "cancel")
    expect_resolved(events, "cancelled")
    expect_terminal(events, "run.cancelled", code="CANCELLED")


async def live_approval_expire(mode: SyncMode) -> None:
    events = await approval_run(mode, None, expiresAfterMs=20)
    expect_resolved(events, "expired")
    expect_terminal(events, "run.failed", code="APPROVAL_EXPIRED")


def lookup_request(**extra: Any) -> Dict[str, Any]:
    return dict(HELLO, input=tool_script("application_lookup", {"query": "x"}), tools=["application_lookup"], **extra)


def expect_lookup_completed(events: List[Dict[str, Any]], receipts: List[Any], statuses: List[str]) -> None:
    expect([receipt["status"] for receipt in receipts] == statuses, f"receipts {receipts}")
    expect(len(only(events, "tool.execution.requested")) == 1, "expected one tool.execution.requested")
    outputs = [event["output"] for event in only(events, "tool.completed")]
    expect(outputs == [ANSWER], f"tool.completed outputs {outputs}")
    expect_terminal(events, "run.completed", text='[{"answer":42}]')


async def live_application_tool(mode: SyncMode) -> None:
    """Answered by hand through client.execution(event)."""
    receipts: List[Any] = []

    async def handle(client: Any, event: Dict[str, Any]) -> None:
        if event["type"] == "tool.execution.requested":
            pending = client.execution(event)
            receipts.append(await settle(pending.progress()))
            receipts.append(await settle(pending.complete(ANSWER)))
            await expect_code(lambda: pending.complete(ANSWER), "TOOL_EXECUTION_NOT_FOUND")

    events = await mode.interactive(lookup_request(applicationTools=[LOOKUP_TOOL]), handle)
    expect_lookup_completed(events, receipts, ["progress", "accepted"])


async def live_application_tool_approved(mode: SyncMode) -> None:
    """Approved by hand, executed by the stream's function-map runner."""
    receipts: List[Any] = []
    resolutions: List[Any] = []
    requested: List[Dict[str, Any]] = []

    async def handle(client: Any, event: Dict[str, Any]) -> None:
        if event["type"] == "approval.requested":
            resolutions.append(await settle(client.approval(event).approve()))
        elif event["type"] == "tool.execution.requested":
            requested.append(event)
        elif event["type"] == "tool.completed":
            await expect_code(lambda: client.execution(requested[0]).complete(ANSWER), "TOOL_EXECUTION_NOT_FOUND")

    request = lookup_request(applicationTools=[dict(LOOKUP_TOOL, requiresApproval=True)], approvals=INTERACTIVE)
    events = await mode.interactive(request, handle, {"application_lookup": mode.lookup(receipts)})
    expect([resolution["outcome"] for resolution in resolutions] == ["approved"], f"resolutions {resolutions}")
    # The runner checked the result's "accepted" receipt itself (a mismatch would have raised).
    expect_lookup_completed(events, receipts, ["progress"])


async def live_tls_untrusted(mode: SyncMode) -> None:
    assert mode.env.untrusted_url is not None
    await expect_failure(mode.protocol(mode.env.untrusted_url, mode.env.token))


async def live_tls_mismatch(mode: SyncMode) -> None:
    assert mode.env.mismatch_url is not None
    await expect_failure(mode.protocol(mode.env.mismatch_url, mode.env.token))


LIVE: Dict[str, Callable[[SyncMode], Awaitable[None]]] = {
    "protocol": live_protocol,
    "providers": live_providers,
    "run": live_run,
    "stream": live_stream,
    "unauthorized": live_unauthorized,
    "forbidden": live_forbidden,
    "quiet": live_quiet,
    "idle-timeout": live_idle_timeout,
    "progress": live_progress,
    "cancel": live_cancel,
    "approval-approve": live_approval_approve,
    "background-approval": live_background_approval,
    "approval-deny": live_approval_deny,
    "approval-cancel": live_approval_cancel,
    "approval-expire": live_approval_expire,
    "application-tool": live_application_tool,
    "application-tool-approved": live_application_tool_approved,
    "idempotency": live_idempotency,
    "job-tail": live_job_tail,
    "run-read-back": live_run_read_back,
    "run-follow": live_run_follow,
    "session": live_session,
    "retrieval": live_retrieval,
}
HTTPS_LIVE = {"tls-untrusted": live_tls_untrusted, "tls-mismatch": live_tls_mismatch}


async def run_base_url(mode: SyncMode, case: Dict[str, Any]) -> Optional[str]:
    """protocol/fixtures/base-url.json: the client is refused with the case's code, or made."""
    try:
        await mode.make(case["url"], mode.env.base_urls["token"])
        code = None
    except DriverError as error:
        code = error.code
    expected = case.get("expectedError")
    return None if code == expected else f"{case['url']}: expected {expected}, got {code}"


async def run_mode(mode: SyncMode) -> Tally:
    env = mode.env
    tally = Tally(mode.name)
    for case in env.fixtures["cases"]:
        if skip_reason(env, case) is not None:
            tally.skipped += 1
            continue
        tally.record(case["id"], await run_vector(mode, case))
    for case in env.versioning["cases"]:
        tally.record(f"versioning:{case['id']}", await run_versioning(mode, case))
    for case in env.base_urls["cases"]:
        tally.record(f"base-url:{case['id']}", await run_base_url(mode, case))
    scenarios = dict(LIVE, **(HTTPS_LIVE if env.transport == "https" else {}))
    for name, scenario in scenarios.items():
        try:
            await scenario(mode)
            problem = None
        except Outcome as failure:
            problem = str(failure)
        except Exception as error:
            problem = f"unexpected failure {error!r}"
        tally.record(f"live:{name}", problem)
    return tally


def main() -> int:
    env = Env.load()
    tallies = [asyncio.run(run_mode(SyncMode(env))), asyncio.run(run_mode(AsyncMode(env)))]
    for tally in tallies:
        summary = {
            "language": "python",
            "mode": tally.mode,
            "transport": env.transport,
            "passed": tally.passed,
            "failed": len(tally.failures),
            "skipped": tally.skipped,
            "failures": tally.failures,
        }
        print(json.dumps({"conformance": summary}), flush=True)
    return 1 if any(tally.failures for tally in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
