"""Operator clients: the ``/v1/operator/...`` endpoints, for a token with the ``operator``
grant (every subject's runs, one run with its steps, the live update feed, pending approvals,
jobs, usage totals and the approval audit log). Requests are checked before sending
(``INVALID_OPERATOR_REQUEST``, ``INVALID_APPROVAL``); answers are validated like every other
answer (``INVALID_RESPONSE``).
"""
from __future__ import annotations

import re
from types import TracebackType
from typing import Any, AsyncGenerator, Dict, Generator, List, Mapping, Optional, Type, cast

from ._async import AsyncAgenticClient
from ._json import parse_json_body
from ._responses import decode_approval_receipt, _decoded, require_event_stream
from ._rules import Json
from ._schema import Check, Invalid
from ._sse import SseDecoder
from ._submissions import _checked_body, decision_body
from ._sync import AgenticClient, _close_connection, _read_some
from .errors import DriverError
from .generated.checks import (
    operator_approval_list,
    operator_audit_page,
    operator_audit_request,
    operator_job_list,
    operator_jobs_request,
    operator_list_request,
    operator_run_detail,
    operator_run_list,
    operator_runs_request,
    operator_update,
    operator_usage,
    operator_usage_request,
)
from .types import (
    ApprovalDecision,
    ApprovalResolution,
    OperatorApprovalList,
    OperatorAuditPage,
    OperatorAuditRequest,
    OperatorJobList,
    OperatorJobsRequest,
    OperatorListRequest,
    OperatorRunDetail,
    OperatorRunList,
    OperatorRunsRequest,
    OperatorUpdate,
    OperatorUsage,
    OperatorUsageRequest,
)

DECISION_ENDPOINT = "v1/operator/approvals/decisions"
UPDATES_ENDPOINT = "v1/operator/updates"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# endpoint → (request check, answer check)
_CALLS: Dict[str, tuple[Check, Check]] = {
    "runs": (operator_runs_request, operator_run_list),
    "approvals": (operator_list_request, operator_approval_list),
    "jobs": (operator_jobs_request, operator_job_list),
    "usage": (operator_usage_request, operator_usage),
    "audit": (operator_audit_request, operator_audit_page),
}


def _request_body(name: str, request: Optional[Mapping[str, Any]]) -> bytes:
    return _checked_body({} if request is None else request, _CALLS[name][0], "INVALID_OPERATOR_REQUEST", "operator request")


def _answer(name: str, body: bytes) -> Json:
    check = _CALLS[name][1]

    def checked(value: object) -> Json:
        check(value, "answer")
        return cast(Json, value)

    return _decoded(body, checked)


def _run_endpoint(run_id: object) -> str:
    if not isinstance(run_id, str) or _UUID.fullmatch(run_id) is None:
        raise DriverError("INVALID_OPERATOR_REQUEST", "The run id must be a lowercase UUID.")
    return f"v1/operator/runs/{run_id}"


def _run_detail(body: bytes, run_id: str) -> OperatorRunDetail:
    def checked(value: object) -> Json:
        operator_run_detail(value, "answer")
        return cast(Json, value)

    detail = _decoded(body, checked)
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
                operator_update(value, "update")
            except Invalid as problem:
                raise DriverError("INVALID_RESPONSE", f"Invalid update: {problem}.") from None
            updates.append(cast(OperatorUpdate, value))
        return updates


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

    def _call(self, name: str, request: Optional[Mapping[str, Any]]) -> Json:
        body = self._client._fetch_json("POST", f"v1/operator/{name}", _request_body(name, request), self._client._io_timeout)
        return _answer(name, body)

    def runs(self, request: Optional[OperatorRunsRequest] = None) -> OperatorRunList:
        """Active runs on this replica and one page of finished runs, newest first, filtered by
        ``state``, ``subject``, ``provider`` and ``search`` (``POST v1/operator/runs``); pass
        ``nextBefore`` as ``before`` for the next page."""
        return cast(OperatorRunList, self._call("runs", request))

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
        connection, response = self._client._exchange("GET", UPDATES_ENDPOINT, None, "text/event-stream", self._client._io_timeout)
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
        return cast(OperatorApprovalList, self._call("approvals", request))

    def decide_approval(self, decision: ApprovalDecision) -> ApprovalResolution:
        """Decide any subject's pending approval; the receipt must answer exactly this decision."""
        body = self._client._fetch_json("POST", DECISION_ENDPOINT, decision_body(decision), self._client._io_timeout)
        return cast(ApprovalResolution, decode_approval_receipt(body, decision))

    def jobs(self, request: Optional[OperatorJobsRequest] = None) -> OperatorJobList:
        """Durable jobs of every subject, most recently updated first (``POST v1/operator/jobs``)."""
        return cast(OperatorJobList, self._call("jobs", request))

    def usage(self, request: Optional[OperatorUsageRequest] = None) -> OperatorUsage:
        """Usage totals, optionally grouped (``POST v1/operator/usage``)."""
        return cast(OperatorUsage, self._call("usage", request))

    def audit(self, request: Optional[OperatorAuditRequest] = None) -> OperatorAuditPage:
        """One page of the approval audit log, newest first (``POST v1/operator/audit``)."""
        return cast(OperatorAuditPage, self._call("audit", request))


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

    async def _call(self, name: str, request: Optional[Mapping[str, Any]]) -> Json:
        body = await self._client._fetch_json("POST", f"v1/operator/{name}", _request_body(name, request), self._client._io_timeout)
        return _answer(name, body)

    async def runs(self, request: Optional[OperatorRunsRequest] = None) -> OperatorRunList:
        return cast(OperatorRunList, await self._call("runs", request))

    async def run(self, run_id: str) -> OperatorRunDetail:
        body = await self._client._fetch_json("GET", _run_endpoint(run_id), None, self._client._io_timeout)
        return _run_detail(body, run_id)

    async def updates(self) -> AsyncGenerator[OperatorUpdate, None]:
        """The live update feed; see ``OperatorClient.updates``. ``aclose()`` on the generator
        closes the connection."""
        response = await self._client._exchange("GET", UPDATES_ENDPOINT, None, "text/event-stream", self._client._io_timeout)
        try:
            require_event_stream(response.headers.get("Content-Type"))
            parser = _UpdateParser()
            async for chunk in response.aiter_raw():
                for update in parser.feed(chunk):
                    yield update
        finally:
            await response.aclose()

    async def approvals(self, request: Optional[OperatorListRequest] = None) -> OperatorApprovalList:
        return cast(OperatorApprovalList, await self._call("approvals", request))

    async def decide_approval(self, decision: ApprovalDecision) -> ApprovalResolution:
        body = await self._client._fetch_json("POST", DECISION_ENDPOINT, decision_body(decision), self._client._io_timeout)
        return cast(ApprovalResolution, decode_approval_receipt(body, decision))

    async def jobs(self, request: Optional[OperatorJobsRequest] = None) -> OperatorJobList:
        return cast(OperatorJobList, await self._call("jobs", request))

    async def usage(self, request: Optional[OperatorUsageRequest] = None) -> OperatorUsage:
        return cast(OperatorUsage, await self._call("usage", request))

    async def audit(self, request: Optional[OperatorAuditRequest] = None) -> OperatorAuditPage:
        return cast(OperatorAuditPage, await self._call("audit", request))
