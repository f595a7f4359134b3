"""Validation of one run's event sequence against the request that started it.

``RunEventChecker.accept`` takes each decoded frame in order and returns the event to
deliver, or None for an unfamiliar optional event that is skipped. Problems raise
``DriverError``: ``INVALID_STREAM`` for malformed or inconsistent events,
``UNSUPPORTED_EVENT`` for events the client cannot interpret or did not negotiate.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ._json import parse_json_text
from ._rules import evaluate
from ._schema import Invalid
from .generated.checks import EVENT_CHECKS, event_envelope
from .errors import DriverError

# The envelope rules (order, one run, negotiation) stay code in every client rather than rows
# of the rule tables: they decide, before the payload is validated, whether an event is
# skipped, UNSUPPORTED_EVENT or INVALID_STREAM, and they are the stream reader's own state.
_APPROVAL_EVENTS = frozenset({"approval.requested", "approval.resolved"})
TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.failed", "run.cancelled"})


def _invalid(message: str) -> DriverError:
    return DriverError("INVALID_STREAM", message)


class RunEventChecker:
    def __init__(self, request: Mapping[str, Any]) -> None:
        self._request = request
        self._run_id: Optional[str] = None
        self._sequence = 0
        # What the rules of later events need to know of earlier ones (rule set runEvent).
        self._approvals: List[Dict[str, str]] = []
        self._executions: List[Dict[str, str]] = []
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
        except Invalid as problem:
            raise _invalid(f"Invalid {kind} event: {problem}.") from None
        scope = {"event": event, "request": self._request, "runId": self._run_id, "approvals": self._approvals, "executions": self._executions}
        broken = evaluate("runEvent", scope)
        if broken is not None:
            raise _invalid(f"A {kind} event is inconsistent: {broken}.")
        if kind == "approval.requested":
            self._approvals.append({"approvalId": event["approval"]["approvalId"], "callId": event["approval"]["call"]["id"]})
        elif kind == "tool.execution.requested":
            self._executions.append({"executionId": event["execution"]["executionId"], "callId": event["execution"]["call"]["id"]})
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


class CommittedEventChecker:
    """Validation of a committed-event stream (a job's, or any run's followed) across reconnections.

    Every event is a known type (an unknown one is refused even when ``optional``: the
    log is replayed as stored), passes the record's stream rules (its run, the last
    delivered sequence + 1: no duplicate, no gap); a terminal event ends it.
    """

    def __init__(self, record: Mapping[str, Any], after: int, what: str, rules: str) -> None:
        self._record = record
        self._what = what
        self._rules = rules
        self.cursor = after
        self.finished = False

    def accept(self, data: str) -> Dict[str, Any]:
        what = self._what
        try:
            event = parse_json_text(data)
        except (ValueError, RecursionError):
            raise _invalid(f"A {what} event is not valid JSON.") from None
        try:
            event_envelope(event, "event")
        except Invalid as problem:
            raise _invalid(f"Invalid {what} event: {problem}.") from None
        assert isinstance(event, dict)
        kind: str = event["type"]
        payload = EVENT_CHECKS.get(kind)
        if payload is None:
            raise DriverError("UNSUPPORTED_EVENT", f"The {what} stream sent event type {kind!r}, which this client does not understand.")
        try:
            payload(event, "event")
        except Invalid as problem:
            raise _invalid(f"Invalid {what} event: {problem}.") from None
        broken = evaluate(self._rules, {"event": event, what: self._record, "sequence": self.cursor + 1})
        if broken is not None:
            raise _invalid(f"The {what} stream is inconsistent: {broken}.")
        self.cursor = event["sequence"]
        if kind in TERMINAL_EVENT_TYPES:
            self.finished = True
        return event


class JobStreamChecker(CommittedEventChecker):
    """A job's live event stream (``tail_job``)."""

    def __init__(self, job: Mapping[str, Any], after: int) -> None:
        super().__init__(job, after, "job", "jobEvent")


INTERACTIVE_EVENT_TYPES = frozenset({"approval.requested", "approval.resolved", "tool.execution.requested"})


class RunRecordChecker(CommittedEventChecker):
    """A run followed (``follow_run``): its record's committed events, attached or background.

    A background run may ask for approvals and application-tool results only on a host that
    advertises ``interactive-jobs`` (as a stream's run may only when its request negotiated
    them); anything else is ``UNSUPPORTED_EVENT``, so no handle is made for a question nobody
    may answer.
    """

    def __init__(self, run: Mapping[str, Any], after: int, interactive_jobs: bool) -> None:
        super().__init__(run, after, "run", "runLogEvent")
        self._refuses_interactive = run["mode"] == "background" and not interactive_jobs

    def accept(self, data: str) -> Dict[str, Any]:
        event = super().accept(data)
        if self._refuses_interactive and event["type"] in INTERACTIVE_EVENT_TYPES:
            raise DriverError("UNSUPPORTED_EVENT", f"The host sent {event['type']} on a background run, but did not advertise interactive-jobs.")
        return event


def error_of(info: Mapping[str, Any]) -> DriverError:
    """A run's wire error (``run.failed``, ``run.cancelled``, a record's ``error``) as the ``DriverError`` raised for it."""
    return DriverError(info["code"], info["message"], info["retryable"], info.get("outcome"))


def settled(run: Mapping[str, Any]) -> Any:
    """A finished run's record as ``wait_run`` answers it: its result, or its error raised."""
    if "result" in run:
        return run["result"]
    if "error" in run:
        raise error_of(run["error"])
    raise DriverError("INCOMPLETE_STREAM", f"The run ended {run['state']} without a result or an error.")
