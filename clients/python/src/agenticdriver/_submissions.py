"""Bodies of approval decisions, tool-execution reports, session and job calls, checked
before they are sent.

The host parses them strictly; checking here turns a malformed submission into the same
typed error the host would answer (``INVALID_APPROVAL``, ``INVALID_TOOL_EXECUTION``,
``INVALID_SESSION``, ``INVALID_JOB``, ``INVALID_JOB_CURSOR``) without spending a request,
so a valid retry is still possible.
"""
from __future__ import annotations

from typing import Mapping, Optional

from ._endpoint import encode_body
from ._rules import evaluate
from ._schema import Check, Invalid
from .errors import DriverError
from .generated import operations as ops
from .generated.operations import Operation

# How deep the host follows arguments and outputs when it checks that they survive its
# JSON parsing unchanged; anything deeper, or a "__proto__" key, it refuses.
MAX_PLAIN_JSON_DEPTH = 64


def _plain_json(value: object, path: str, depth: int = 0) -> None:
    if depth > MAX_PLAIN_JSON_DEPTH:
        raise Invalid(f"{path} is nested more than {MAX_PLAIN_JSON_DEPTH} levels deep")
    if isinstance(value, Mapping):
        if "__proto__" in value:
            raise Invalid(f"{path} has a __proto__ key")
        for key, child in value.items():
            _plain_json(child, f"{path}.{key}", depth + 1)
    elif isinstance(value, (list, tuple)):
        for child in value:
            _plain_json(child, f"{path}[]", depth + 1)


def _checked_body(value: object, check: Check, code: str, what: str, plain: str = "") -> bytes:
    try:
        check(value, what)
        assert isinstance(value, Mapping)
        if plain == "arguments":
            _plain_json(value["call"]["arguments"], f"{what}.call.arguments")
        elif plain == "output":
            _plain_json(value["output"], f"{what}.output")
        return encode_body(value)
    except Invalid as problem:
        raise DriverError(code, f"The {what} is invalid: {problem}.") from None
    except (TypeError, ValueError, RecursionError):
        raise DriverError(code, f"The {what} is not representable as JSON.") from None


def request_body(op: Operation, request: object, plain: str = "") -> bytes:
    """``request`` as JSON, checked by the operation's request check and rules (a malformed one
    is refused with the operation's code before anything is sent)."""
    assert op.request is not None and op.invalid_code is not None
    return _checked_body(request, _with_rules(op.request, op.request_rules), op.invalid_code, f"{op.id} request", plain)


def _with_rules(check: Check, rules: Optional[str]) -> Check:
    if rules is None:
        return check

    def checked(value: object, path: str) -> None:
        check(value, path)
        assert isinstance(value, Mapping)
        broken = evaluate(rules, {"request": value})
        if broken is not None:
            raise Invalid(str(broken))

    return checked


def decision_body(decision: object, op: Operation = ops.DECIDE_APPROVAL) -> bytes:
    return request_body(op, decision, plain="arguments")


def progress_body(identity: object) -> bytes:
    return request_body(ops.REPORT_TOOL_PROGRESS, identity)


def result_body(result: object) -> bytes:
    has_output = isinstance(result, Mapping) and "output" in result
    return request_body(ops.COMPLETE_TOOL, result, plain="output" if has_output else "")


def path_of(op: Operation, object_id: str) -> str:
    """The operation's path with its ``{id}`` (already checked: a UUID needs no escaping)."""
    return op.path.replace("{id}", object_id)
