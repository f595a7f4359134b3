"""Operator clients: the ``/v1/operator/...`` endpoints, for a token with the ``operator``
grant (every subject's runs, pending approvals, jobs, usage totals and the approval audit
log). Requests are checked before sending (``INVALID_OPERATOR_REQUEST``, ``INVALID_APPROVAL``);
answers are validated like every other answer (``INVALID_RESPONSE``).
"""
from __future__ import annotations

from types import TracebackType
from typing import Any, Mapping, Optional, Type, cast

from ._async import AsyncAgenticClient
from ._responses import decode_approval_receipt, _decoded
from ._rules import Json
from ._submissions import decision_body, request_body
from ._sync import AgenticClient
from .generated import operations as ops
from .generated.operations import Operation
from .types import (
    ApprovalDecision,
    ApprovalResolution,
    OperatorApprovalList,
    OperatorAuditPage,
    OperatorAuditRequest,
    OperatorJobList,
    OperatorJobsRequest,
    OperatorListRequest,
    OperatorRunList,
    OperatorRunsRequest,
    OperatorUsage,
    OperatorUsageRequest,
)


def _request_body(op: Operation, request: Optional[Mapping[str, Any]]) -> bytes:
    return request_body(op, {} if request is None else request)


def _answer(op: Operation, body: bytes) -> Json:
    def checked(value: object) -> Json:
        op.response(value, "answer")
        return cast(Json, value)

    return _decoded(body, checked)


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
        body = self._client._fetch_json("POST", op.path, _request_body(op, request), self._client._io_timeout)
        return _answer(op, body)

    def runs(self, request: Optional[OperatorRunsRequest] = None) -> OperatorRunList:
        """Active runs on this replica and the most recently finished ones (``POST v1/operator/runs``)."""
        return cast(OperatorRunList, self._call(ops.OPERATOR_LIST_RUNS, request))

    def approvals(self, request: Optional[OperatorListRequest] = None) -> OperatorApprovalList:
        """Pending approvals of every subject (``POST v1/operator/approvals``)."""
        return cast(OperatorApprovalList, self._call(ops.OPERATOR_LIST_APPROVALS, request))

    def decide_approval(self, decision: ApprovalDecision) -> ApprovalResolution:
        """Decide any subject's pending approval; the receipt must answer exactly this decision."""
        body = self._client._fetch_json("POST", ops.OPERATOR_DECIDE_APPROVAL.path, decision_body(decision, ops.OPERATOR_DECIDE_APPROVAL), self._client._io_timeout)
        return cast(ApprovalResolution, decode_approval_receipt(body, decision))

    def jobs(self, request: Optional[OperatorJobsRequest] = None) -> OperatorJobList:
        """Durable jobs of every subject, most recently updated first (``POST v1/operator/jobs``)."""
        return cast(OperatorJobList, self._call(ops.OPERATOR_LIST_JOBS, request))

    def usage(self, request: Optional[OperatorUsageRequest] = None) -> OperatorUsage:
        """Usage totals, optionally grouped (``POST v1/operator/usage``)."""
        return cast(OperatorUsage, self._call(ops.OPERATOR_USAGE, request))

    def audit(self, request: Optional[OperatorAuditRequest] = None) -> OperatorAuditPage:
        """One page of the approval audit log, newest first (``POST v1/operator/audit``)."""
        return cast(OperatorAuditPage, self._call(ops.OPERATOR_AUDIT, request))


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
        body = await self._client._fetch_json("POST", op.path, _request_body(op, request), self._client._io_timeout)
        return _answer(op, body)

    async def runs(self, request: Optional[OperatorRunsRequest] = None) -> OperatorRunList:
        return cast(OperatorRunList, await self._call(ops.OPERATOR_LIST_RUNS, request))

    async def approvals(self, request: Optional[OperatorListRequest] = None) -> OperatorApprovalList:
        return cast(OperatorApprovalList, await self._call(ops.OPERATOR_LIST_APPROVALS, request))

    async def decide_approval(self, decision: ApprovalDecision) -> ApprovalResolution:
        body = await self._client._fetch_json("POST", ops.OPERATOR_DECIDE_APPROVAL.path, decision_body(decision, ops.OPERATOR_DECIDE_APPROVAL), self._client._io_timeout)
        return cast(ApprovalResolution, decode_approval_receipt(body, decision))

    async def jobs(self, request: Optional[OperatorJobsRequest] = None) -> OperatorJobList:
        return cast(OperatorJobList, await self._call(ops.OPERATOR_LIST_JOBS, request))

    async def usage(self, request: Optional[OperatorUsageRequest] = None) -> OperatorUsage:
        return cast(OperatorUsage, await self._call(ops.OPERATOR_USAGE, request))

    async def audit(self, request: Optional[OperatorAuditRequest] = None) -> OperatorAuditPage:
        return cast(OperatorAuditPage, await self._call(ops.OPERATOR_AUDIT, request))
