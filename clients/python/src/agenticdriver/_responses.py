"""Interpreting host responses, independent of the HTTP library that fetched them."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._json import MAX_JSON_BYTES, parse_json_body
from ._rules import evaluate
from ._run_events import CommittedEventChecker, RunEventChecker
from ._schema import Check, Invalid
from ._sse import SseDecoder
from ._endpoint import PROTOCOL_VERSION
from .errors import DriverError
from .generated.checks import error_info, protocol_info, provider_list
from .generated.operations import Operation

Json = Dict[str, Any]
MAX_ERROR_BODY_BYTES = 64_000
READ_SIZE = 65_536


def check_version(values: Sequence[str]) -> None:
    """An absent header is a legacy 1.0 host; a present one must say exactly 1.0, once."""
    if values and (len(values) != 1 or values[0].strip() != PROTOCOL_VERSION):
        raise DriverError(
            "UNSUPPORTED_PROTOCOL_VERSION",
            f"The host answered with protocol version {', '.join(values)!r}; this client speaks {PROTOCOL_VERSION}.",
        )


def is_success(status: int) -> bool:
    return 200 <= status < 300


def error_from_envelope(value: object) -> Optional[Json]:
    """The ``error`` object of a valid error envelope, else None."""
    if not isinstance(value, dict) or "error" not in value:
        return None
    try:
        error_info(value["error"], "error")
    except Invalid:
        return None
    info: Json = value["error"]
    return info


def error_for_status(status: int, body: bytes) -> DriverError:
    """The host's typed error when the body is an error envelope, else ``HTTP_ERROR``."""
    try:
        info = error_from_envelope(parse_json_body(body[:MAX_ERROR_BODY_BYTES]))
    except DriverError:
        info = None
    if info is not None:
        return DriverError(info["code"], info["message"], info["retryable"], info.get("outcome"))
    return DriverError("HTTP_ERROR", f"The host answered HTTP {status}.", status == 429 or status >= 500)


def require_event_stream(content_type: Optional[str]) -> None:
    if content_type is None or "text/event-stream" not in content_type.lower():
        raise DriverError("INVALID_RESPONSE", "The host did not answer with an event stream.")


def _decoded(body: bytes, check: Check) -> Json:
    value = parse_json_body(body)
    try:
        check(value, "answer")
    except Invalid as problem:
        raise DriverError("INVALID_RESPONSE", f"Invalid response: {problem}.") from None
    assert isinstance(value, dict)
    return value


def decode_protocol(body: bytes) -> Json:
    return _decoded(body, protocol_info)


def decode_providers(body: bytes) -> List[Json]:
    providers: List[Json] = _decoded(body, provider_list)["providers"]
    return providers


def decode_answer(body: bytes, op: Operation, request: Mapping[str, Any]) -> Json:
    """An operation's JSON answer: its schema, then the operation's rules against the request."""
    answer = _decoded(body, op.response)
    broken = evaluate(op.answer_rules, {"answer": answer, "request": request}) if op.answer_rules else None
    if broken is not None:
        raise DriverError("INVALID_RESPONSE", f"The host's {op.id} answer does not match the request: {broken}.")
    return answer


class JobStreamParser:
    """Bytes of one connection of a committed-event stream (a job's, a run's followed) in, validated events out.

    The checker outlives the connection, so a resumed stream continues its sequence.
    """

    def __init__(self, checker: CommittedEventChecker) -> None:
        self._decoder = SseDecoder()
        self.checker = checker

    def feed(self, chunk: bytes) -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        for data in self._decoder.feed(chunk):
            events.append(self.checker.accept(data))
            if self.checker.finished:
                break
        return events


class RunStreamParser:
    """Bytes of a /v1/runs event stream in, validated events out, up to the first terminal."""

    def __init__(self, request: Mapping[str, Any]) -> None:
        self._decoder = SseDecoder()
        self._checker = RunEventChecker(request)

    @property
    def finished(self) -> bool:
        return self._checker.finished

    def feed(self, chunk: bytes) -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        for data in self._decoder.feed(chunk):
            event = self._checker.accept(data)
            if event is not None:
                events.append(event)
            if self._checker.finished:
                break
        return events

    def end(self) -> None:
        """The body ended; without a terminal event that is never success."""
        if not self._checker.finished:
            raise DriverError("INCOMPLETE_STREAM", "The event stream ended before a terminal event.")

