"""Validation of one run's event sequence against the request that started it.

``RunEventChecker.accept`` takes each decoded frame in order and returns the event to
deliver, or None for an unfamiliar optional event that is skipped. Problems raise
``DriverError``: ``INVALID_STREAM`` for malformed or inconsistent events,
``UNSUPPORTED_EVENT`` for events the client cannot interpret or did not negotiate.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Set

from ._json import parse_json_text
from ._rules import check_job_event, check_run_result
from ._schema import Invalid
from .generated.checks import EVENT_CHECKS, event_envelope
from .errors import DriverError

MAX_TOOL_EXECUTIONS = 2048
_APPROVAL_EVENTS = frozenset({"approval.requested", "approval.resolved"})
TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.failed", "run.cancelled"})


def _invalid(message: str) -> DriverError:
    return DriverError("INVALID_STREAM", message)


class RunEventChecker:
    def __init__(self, request: Mapping[str, Any]) -> None:
        self._request = request
        self._run_id: Optional[str] = None
        self._sequence = 0
        self._execution_ids: Set[str] = set()
        self._execution_call_ids: Set[str] = set()
        self._approval_calls: Dict[str, str] = {}
        self.finished = False

    def accept(self, data: str) -> Optional[Dict[str, Any]]:
        try:
            event = parse_json_text(data)
        except (ValueError, RecursionError):
            raise _invalid("An event is not valid JSON.") from None
        try:
            event_envelope(event, "event")
        except Invalid as problem:
            raise _invalid(f"Invalid event: {problem}.") from None
        assert isinstance(event, dict)
        self._check_order(event)
        kind: str = event["type"]
        payload = EVENT_CHECKS.get(kind)
        if payload is None:
            if event.get("optional") is True:
                return None
            raise DriverError("UNSUPPORTED_EVENT", f"The event type {kind!r} is not supported.")
        self._check_negotiated(kind)
        try:
            payload(event, "event")
            self._check_payload(kind, event)
        except Invalid as problem:
            raise _invalid(f"Invalid {kind} event: {problem}.") from None
        if kind in TERMINAL_EVENT_TYPES:
            self.finished = True
        return event

    def _check_order(self, event: Mapping[str, Any]) -> None:
        if event["sequence"] != self._sequence + 1:
            raise _invalid("Event sequence numbers must increase by one.")
        self._sequence = event["sequence"]
        if self._run_id is None:
            if event["type"] != "run.started":
                raise _invalid("The first event must be run.started.")
            self._run_id = event["runId"]
        elif event["runId"] != self._run_id:
            raise _invalid("Every event of a run must carry the same runId.")
        elif event["type"] == "run.started":
            raise _invalid("run.started must occur once.")

    def _check_negotiated(self, kind: str) -> None:
        if kind in _APPROVAL_EVENTS and self._request.get("approvals") is None:
            raise DriverError("UNSUPPORTED_EVENT", f"{kind} arrived although the request did not ask for approvals.")
        if kind == "tool.execution.requested" and not self._request.get("applicationTools"):
            raise DriverError("UNSUPPORTED_EVENT", f"{kind} arrived although the request declared no application tools.")

    def _check_payload(self, kind: str, event: Mapping[str, Any]) -> None:
        if kind == "run.started":
            if event["provider"] != self._request.get("provider") or event["model"] != self._request.get("model"):
                raise Invalid("names another provider or model than the request")
        elif kind == "approval.requested":
            approval = event["approval"]
            if approval["runId"] != self._run_id:
                raise Invalid("approval/runId differs from the run")
            if approval["idlePolicy"] != self._request["approvals"].get("idlePolicy"):
                raise Invalid("approval/idlePolicy differs from the requested policy")
            self._approval_calls[approval["approvalId"]] = approval["call"]["id"]
        elif kind == "approval.resolved":
            resolution = event["resolution"]
            if resolution["runId"] != self._run_id:
                raise Invalid("resolution/runId differs from the run")
            if self._approval_calls.get(resolution["approvalId"]) != resolution["callId"]:
                raise Invalid("resolution answers no requested approval of that call")
        elif kind == "tool.execution.requested":
            self._check_execution(event["execution"])
        elif kind == "run.completed":
            check_run_result(event["result"], self._request, self._run_id)

    def _check_execution(self, execution: Mapping[str, Any]) -> None:
        if execution["runId"] != self._run_id:
            raise Invalid("execution/runId differs from the run")
        name = execution["call"]["name"]
        declared = {tool.get("name") for tool in self._request.get("applicationTools") or [] if isinstance(tool, dict)}
        if name not in declared or name not in (self._request.get("tools") or []):
            raise Invalid(f"execution/call/name {name!r} is not a declared and selected application tool")
        execution_id, call_id = execution["executionId"], execution["call"]["id"]
        if execution_id in self._execution_ids or call_id in self._execution_call_ids:
            raise Invalid("execution repeats an executionId or call id")
        if len(self._execution_ids) >= MAX_TOOL_EXECUTIONS:
            raise Invalid(f"more than {MAX_TOOL_EXECUTIONS} tool executions in one run")
        self._execution_ids.add(execution_id)
        self._execution_call_ids.add(call_id)


class JobStreamChecker:
    """Validation of a job's live event stream across reconnections.

    Every event is a known type (an unknown one is refused even when ``optional``: a
    job's log is replayed as stored), belongs to the job's run and follows the last
    delivered sequence exactly (no duplicate, no gap); a terminal event ends the job.
    """

    def __init__(self, job: Mapping[str, Any], after: int) -> None:
        self._job = job
        self.cursor = after
        self.finished = False

    def accept(self, data: str) -> Dict[str, Any]:
        try:
            event = parse_json_text(data)
        except (ValueError, RecursionError):
            raise _invalid("A job event is not valid JSON.") from None
        try:
            event_envelope(event, "event")
        except Invalid as problem:
            raise _invalid(f"Invalid job event: {problem}.") from None
        assert isinstance(event, dict)
        kind: str = event["type"]
        payload = EVENT_CHECKS.get(kind)
        if payload is None:
            raise DriverError("UNSUPPORTED_EVENT", f"The job stream sent event type {kind!r}, which this client does not understand.")
        try:
            payload(event, "event")
            check_job_event(event, self._job, self.cursor + 1)
        except Invalid as problem:
            raise _invalid(f"The job stream is inconsistent: {problem}.") from None
        self.cursor = event["sequence"]
        if kind in TERMINAL_EVENT_TYPES:
            self.finished = True
        return event
