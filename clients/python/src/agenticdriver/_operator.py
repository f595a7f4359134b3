"""Operator clients: the ``/v1/operator/...`` endpoints, for a token with the ``operator``
grant (every subject's runs, one run with its steps, the live update feed, pending approvals,
jobs, usage totals, limits and the approval audit log). Requests are checked before sending
(``INVALID_OPERATOR_REQUEST``, ``INVALID_APPROVAL``); answers are validated like every other
answer (``INVALID_RESPONSE``).
"""
from __future__ import annotations

import re
from types import TracebackType
from typing import Any, AsyncGenerator, Dict, Generator, List, Mapping, Optional, Type, cast

from ._async import AsyncAgenticClient
from ._json import parse_json_body, parse_json_text
from ._schema import Invalid
from ._sse import SseDecoder
from ._responses import Json, decode_answer, require_event_stream
from ._submissions import decision_body, path_of, request_body
from ._sync import AgenticClient, _close_connection, _read_some
from .errors import DriverError
from .generated import operations as ops
from .generated.checks import run_event
from .generated.operations import Operation
from .types import (
    ApprovalDecision,
    ApprovalResolution,
    OperatorApprovalList,
    OperatorAuditPage,
    OperatorAuditRequest,
    OperatorJobList,
    OperatorJobsRequest,
    OperatorLimits,
    OperatorLimitsRequest,
    OperatorListRequest,
    OperatorRunDetail,
    OperatorRunList,
    OperatorRunsRequest,
    OperatorUpdate,
    OperatorUsage,
    OperatorUsageRequest,
    RunEvent,
)

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TERMINAL = ("run.completed", "run.failed", "run.cancelled")


def _request(request: Optional[Mapping[str, Any]]) -> Mapping[str, Any]:
    return {} if request is None else request


def _run_endpoint(run_id: object) -> str:
    if not isinstance(run_id, str) or _UUID.fullmatch(run_id) is None:
        raise DriverError("INVALID_OPERATOR_REQUEST", "The run id must be a lowercase UUID.")
    return path_of(ops.OPERATOR_READ_RUN, run_id)


def _run_detail(body: bytes, run_id: str) -> OperatorRunDetail:
    detail = decode_answer(body, ops.OPERATOR_READ_RUN, {"id": run_id})
    if detail["run"]["runId"] != run_id:
        raise DriverError("INVALID_RESPONSE", f"The host answered with run {detail['run']['runId']} for run {run_id}.")
    return cast(OperatorRunDetail, detail)


class _UpdateParser:
    """Bytes of the update feed in, validated updates out."""

    def __init__(self) -> None:
        self._decoder = SseDecoder()

    def feed(self, chunk: bytes) -> List[OperatorUpdate]:
        updates: List[OperatorUpdate] = []
        for data in self._decoder.feed(chunk):
            value = parse_json_body(data.encode("utf-8"))
            try:
                ops.OPERATOR_UPDATES.response(value, "update")
            except Invalid as problem:
                raise DriverError("INVALID_RESPONSE", f"Invalid update: {problem}.") from None
            updates.append(cast(OperatorUpdate, value))
        return updates


class _Tap:
    """The events of an operator tap (a run watch or a job stream): each a valid event of one
    run, in rising sequence, the last one terminal (a watch the host dropped ends without one)."""

    def __init__(self, run_id: Optional[str], after: int) -> None:
        self.run_id = run_id
        self.last = after
        self.finished = False
        self.decoder = SseDecoder()

    def accept(self, data: str) -> RunEvent:
        try:
            event = parse_json_text(data)
            run_event(event, "event")
        except (ValueError, RecursionError):
            raise DriverError("INVALID_RESPONSE", "An event is not JSON.") from None
        except Invalid as problem:
            raise DriverError("INVALID_RESPONSE", f"An event is invalid: {problem}.") from None
        value = cast(Dict[str, Any], event)
        if self.run_id is None:
            self.run_id = value["runId"]
        if value["runId"] != self.run_id:
            raise DriverError("INVALID_RESPONSE", f"An event of run {value['runId']} arrived on the stream of run {self.run_id}.")
        if value["sequence"] <= self.last:
            raise DriverError("INVALID_RESPONSE", f"Event sequence {value['sequence']} does not follow {self.last}.")
        self.last = value["sequence"]
        self.finished = value["type"] in _TERMINAL
        return cast(RunEvent, value)


def _watch(run_id: str) -> "tuple[str, _Tap]":
    if not isinstance(run_id, str) or not _UUID.fullmatch(run_id):
        raise DriverError("INVALID_OPERATOR_REQUEST", "The run id must be a lowercase UUID.")
    return path_of(ops.OPERATOR_WATCH_RUN, run_id), _Tap(run_id, 0)


def _job_tap(job_id: str, after: int) -> "tuple[str, _Tap, Optional[Dict[str, str]]]":
    request_body(ops.READ_JOB, {"id": job_id})
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise DriverError("INVALID_JOB_CURSOR", "after must be a non-negative integer.")
    headers = {"Last-Event-ID": str(after)} if after > 0 else None
    return path_of(ops.OPERATOR_STREAM_JOB, job_id), _Tap(None, after), headers


class OperatorClient:
    """Blocking operator client; takes the same options as ``AgenticClient``."""

    def __init__(self, url: str, token: str, **options: Any) -> None:
        self._client = AgenticClient(url, token, **options)

    def __enter__(self) -> "OperatorClient":
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def _call(self, op: Operation, request: Optional[Mapping[str, Any]]) -> Json:
        body = self._client._fetch_json("POST", op.path, request_body(op, _request(request)), self._client._io_timeout)
        return decode_answer(body, op, _request(request))

    def runs(self, request: Optional[OperatorRunsRequest] = None) -> OperatorRunList:
        """Active runs on this replica and one page of finished runs, newest first, filtered by
        ``state``, ``subject``, ``provider`` and ``search`` (``POST v1/operator/runs``); pass
        ``nextBefore`` as ``before`` for the next page."""
        return cast(OperatorRunList, self._call(ops.OPERATOR_LIST_RUNS, request))

    def run(self, run_id: str) -> OperatorRunDetail:
        """One run, with its steps, tools, tokens and timing when this replica served it
        (``GET v1/operator/runs/{id}``)."""
        body = self._client._fetch_json("GET", _run_endpoint(run_id), None, self._client._io_timeout)
        return _run_detail(body, run_id)

    def updates(self) -> Generator[OperatorUpdate, None, None]:
        """The live update feed (``GET v1/operator/updates``): a ``snapshot``, then each change,
        until the host ends the subscription (subscribe again for a new snapshot). ``close()`` on
        the generator (or leaving a ``for`` loop and dropping it) closes the connection. Updates
        of a type this client does not know are passed on as they are."""
        connection, response = self._client._exchange("GET", ops.OPERATOR_UPDATES.path, None, "text/event-stream", self._client._io_timeout)
        try:
            require_event_stream(response.getheader("Content-Type"))
            parser = _UpdateParser()
            while True:
                chunk = _read_some(response)
                if not chunk:
                    return
                yield from parser.feed(chunk)
        finally:
            _close_connection(connection, response)

    def approvals(self, request: Optional[OperatorListRequest] = None) -> OperatorApprovalList:
        """Pending approvals of every subject (``POST v1/operator/approvals``)."""
        return cast(OperatorApprovalList, self._call(ops.OPERATOR_LIST_APPROVALS, request))

    def decide_approval(self, decision: ApprovalDecision) -> ApprovalResolution:
        """Decide any subject's pending approval; the receipt must answer exactly this decision."""
        body = self._client._fetch_json("POST", ops.OPERATOR_DECIDE_APPROVAL.path, decision_body(decision, ops.OPERATOR_DECIDE_APPROVAL), self._client._io_timeout)
        return cast(ApprovalResolution, decode_answer(body, ops.OPERATOR_DECIDE_APPROVAL, decision))

    def jobs(self, request: Optional[OperatorJobsRequest] = None) -> OperatorJobList:
        """Durable jobs of every subject, most recently updated first (``POST v1/operator/jobs``)."""
        return cast(OperatorJobList, self._call(ops.OPERATOR_LIST_JOBS, request))

    def usage(self, request: Optional[OperatorUsageRequest] = None) -> OperatorUsage:
        """Usage totals, optionally grouped (``POST v1/operator/usage``)."""
        return cast(OperatorUsage, self._call(ops.OPERATOR_USAGE, request))

    def limits(self, request: Optional[OperatorLimitsRequest] = None) -> OperatorLimits:
        """Every configured scope's rate limits and budgets (limit, used, reserved, remaining,
        reset time), or one subject's (``POST v1/operator/limits``)."""
        return cast(OperatorLimits, self._call(ops.OPERATOR_LIMITS, request))

    def audit(self, request: Optional[OperatorAuditRequest] = None) -> OperatorAuditPage:
        """One page of the approval audit log, newest first (``POST v1/operator/audit``)."""
        return cast(OperatorAuditPage, self._call(ops.OPERATOR_AUDIT, request))

    def watch_run(self, run_id: str) -> Generator[RunEvent, None, None]:
        """An active run's recent, then live, events (``GET v1/operator/runs/{id}/events``),
        ending with its terminal event, or early without one when the host dropped this
        watcher for falling behind (the run is never slowed). ``close()`` the generator to stop."""
        path, tap = _watch(run_id)
        return self._follow(path, tap, None)

    def tail_job(self, job_id: str, *, after: int = 0) -> Generator[RunEvent, None, None]:
        """Any job's committed events after ``after`` (``GET v1/operator/jobs/{id}/stream``),
        until its terminal event. ``close()`` the generator to stop; the job keeps running."""
        path, tap, headers = _job_tap(job_id, after)
        return self._follow(path, tap, headers)

    def _follow(self, path: str, tap: _Tap, headers: Optional[Dict[str, str]]) -> Generator[RunEvent, None, None]:
        connection, response = self._client._exchange("GET", path, None, "text/event-stream", self._client._io_timeout, headers)
        try:
            require_event_stream(response.getheader("Content-Type"))
            while not tap.finished:
                chunk = _read_some(response)
                if not chunk:
                    return
                for data in tap.decoder.feed(chunk):
                    yield tap.accept(data)
                    if tap.finished:
                        return
        finally:
            _close_connection(connection, response)


class AsyncOperatorClient:
    """Asyncio operator client; takes the same options as ``AsyncAgenticClient``."""

    def __init__(self, url: str, token: str, **options: Any) -> None:
        self._client = AsyncAgenticClient(url, token, **options)

    async def __aenter__(self) -> "AsyncOperatorClient":
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _call(self, op: Operation, request: Optional[Mapping[str, Any]]) -> Json:
        body = await self._client._fetch_json("POST", op.path, request_body(op, _request(request)), self._client._io_timeout)
        return decode_answer(body, op, _request(request))

    async def runs(self, request: Optional[OperatorRunsRequest] = None) -> OperatorRunList:
        return cast(OperatorRunList, await self._call(ops.OPERATOR_LIST_RUNS, request))

    async def run(self, run_id: str) -> OperatorRunDetail:
        body = await self._client._fetch_json("GET", _run_endpoint(run_id), None, self._client._io_timeout)
        return _run_detail(body, run_id)

    async def updates(self) -> AsyncGenerator[OperatorUpdate, None]:
        """The live update feed; see ``OperatorClient.updates``. ``aclose()`` on the generator
        closes the connection."""
        response = await self._client._exchange("GET", ops.OPERATOR_UPDATES.path, None, "text/event-stream", self._client._io_timeout)
        try:
            require_event_stream(response.headers.get("Content-Type"))
            parser = _UpdateParser()
            async for chunk in response.aiter_raw():
                for update in parser.feed(chunk):
                    yield update
        finally:
            await response.aclose()

    async def approvals(self, request: Optional[OperatorListRequest] = None) -> OperatorApprovalList:
        return cast(OperatorApprovalList, await self._call(ops.OPERATOR_LIST_APPROVALS, request))

    async def decide_approval(self, decision: ApprovalDecision) -> ApprovalResolution:
        body = await self._client._fetch_json("POST", ops.OPERATOR_DECIDE_APPROVAL.path, decision_body(decision, ops.OPERATOR_DECIDE_APPROVAL), self._client._io_timeout)
        return cast(ApprovalResolution, decode_answer(body, ops.OPERATOR_DECIDE_APPROVAL, decision))

    async def jobs(self, request: Optional[OperatorJobsRequest] = None) -> OperatorJobList:
        return cast(OperatorJobList, await self._call(ops.OPERATOR_LIST_JOBS, request))

    async def usage(self, request: Optional[OperatorUsageRequest] = None) -> OperatorUsage:
        return cast(OperatorUsage, await self._call(ops.OPERATOR_USAGE, request))

    async def limits(self, request: Optional[OperatorLimitsRequest] = None) -> OperatorLimits:
        return cast(OperatorLimits, await self._call(ops.OPERATOR_LIMITS, request))

    async def audit(self, request: Optional[OperatorAuditRequest] = None) -> OperatorAuditPage:
        return cast(OperatorAuditPage, await self._call(ops.OPERATOR_AUDIT, request))

    def watch_run(self, run_id: str) -> AsyncGenerator[RunEvent, None]:
        """See ``OperatorClient.watch_run``; ``aclose()`` the generator to stop."""
        path, tap = _watch(run_id)
        return self._follow(path, tap, None)

    def tail_job(self, job_id: str, *, after: int = 0) -> AsyncGenerator[RunEvent, None]:
        """See ``OperatorClient.tail_job``; ``aclose()`` the generator to stop."""
        path, tap, headers = _job_tap(job_id, after)
        return self._follow(path, tap, headers)

    async def _follow(self, path: str, tap: _Tap, headers: Optional[Dict[str, str]]) -> AsyncGenerator[RunEvent, None]:
        response = await self._client._exchange("GET", path, None, "text/event-stream", self._client._io_timeout, headers)
        try:
            require_event_stream(response.headers.get("Content-Type"))
            async for chunk in response.aiter_raw():
                for data in tap.decoder.feed(chunk):
                    yield tap.accept(data)
                    if tap.finished:
                        return
        finally:
            await response.aclose()
