"""Bodies of approval decisions and tool-execution reports, checked before they are sent.

The host parses them strictly; checking here turns a malformed submission into the same
typed error the host would answer (``INVALID_APPROVAL`` / ``INVALID_TOOL_EXECUTION``)
without spending a request, so a valid retry is still possible.
"""
from __future__ import annotations

from typing import Any, Mapping

from ._endpoint import encode_body
from ._schema import Check, Invalid
from .generated.checks import approval_decision, tool_execution_identity, tool_execution_result
from .errors import DriverError

DECISION_ENDPOINT = "v1/approvals/decisions"
PROGRESS_ENDPOINT = "v1/tool-executions/progress"
RESULT_ENDPOINT = "v1/tool-executions/results"


def _checked_body(value: object, check: Check, code: str, what: str) -> bytes:
    try:
        check(value, what)
        assert isinstance(value, Mapping)
        return encode_body(value)
    except Invalid as problem:
        raise DriverError(code, f"The {what} is invalid: {problem}.") from None
    except (TypeError, ValueError, RecursionError):
        raise DriverError(code, f"The {what} is not representable as JSON.") from None


def decision_body(decision: object) -> bytes:
    return _checked_body(decision, approval_decision, "INVALID_APPROVAL", "approval decision")


def progress_body(identity: object) -> bytes:
    return _checked_body(identity, tool_execution_identity, "INVALID_TOOL_EXECUTION", "tool execution identity")


def result_body(result: object) -> bytes:
    return _checked_body(result, tool_execution_result, "INVALID_TOOL_EXECUTION", "tool execution result")


def identity_of(submission: Mapping[str, Any]) -> Mapping[str, Any]:
    return {key: submission[key] for key in ("executionId", "runId", "callId")}
