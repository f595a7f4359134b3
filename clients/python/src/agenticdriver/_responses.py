"""Interpreting host responses, independent of the HTTP library that fetched them."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar

from ._json import MAX_JSON_BYTES, parse_json_body
from ._rules import (
    check_approval_receipt,
    check_job_event_page,
    check_job_list,
    check_job_receipt,
    check_session_created,
    check_session_deleted,
    check_session_list,
    check_session_snapshot,
    check_protocol_info,
    check_provider_list,
    check_retrieval_search,
    check_run_result,
    check_source_receipt,
    check_tool_receipt,
    error_from_envelope,
)
from ._run_events import JobStreamChecker, RunEventChecker
from ._schema import Invalid
from ._sse import SseDecoder
from ._endpoint import PROTOCOL_VERSION
from .errors import DriverError

MAX_ERROR_BODY_BYTES = 64_000
READ_SIZE = 65_536
T = TypeVar("T")


def check_version(values: Sequence[str]) -> None:
    """An absent header is a legacy 1.0 host; a present one must say exactly 1.0, once."""
    if values and (len(values) != 1 or values[0].strip() != PROTOCOL_VERSION):
        raise DriverError(
            "UNSUPPORTED_PROTOCOL_VERSION",
            f"The host answered with protocol version {', '.join(values)!r}; this client speaks {PROTOCOL_VERSION}.",
        )


def is_success(status: int) -> bool:
    return 200 <= status < 300


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


def _decoded(body: bytes, check: Callable[[object], T]) -> T:
    value = parse_json_body(body)
    try:
        return check(value)
    except Invalid as problem:
        raise DriverError("INVALID_RESPONSE", f"Invalid response: {problem}.") from None


def decode_protocol(body: bytes) -> Dict[str, Any]:
    return _decoded(body, check_protocol_info)


def decode_providers(body: bytes) -> List[Dict[str, Any]]:
    return _decoded(body, check_provider_list)


def decode_run_result(body: bytes, request: Mapping[str, Any]) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_run_result(value, request, None))


def decode_approval_receipt(body: bytes, decision: Mapping[str, Any]) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_approval_receipt(value, decision))


def decode_tool_receipt(body: bytes, identity: Mapping[str, Any], status: str) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_tool_receipt(value, identity, status))


def decode_session_created(body: bytes, request: Mapping[str, Any]) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_session_created(value, request))


def decode_session_snapshot(body: bytes, session_id: str) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_session_snapshot(value, session_id))


def decode_session_deleted(body: bytes, session_id: str) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_session_deleted(value, session_id))


def decode_job(body: bytes, *, job_id: Optional[str] = None, request: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_job_receipt(value, job_id=job_id, request=request))


def decode_job_list(body: bytes, request: Mapping[str, Any]) -> List[Dict[str, Any]]:
    return _decoded(body, lambda value: check_job_list(value, request))


def decode_session_list(body: bytes, request: Mapping[str, Any]) -> List[Dict[str, Any]]:
    return _decoded(body, lambda value: check_session_list(value, request))


def decode_job_event_page(body: bytes, request: Mapping[str, Any]) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_job_event_page(value, request))


def decode_search(body: bytes, request: Mapping[str, Any]) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_retrieval_search(value, request))


def decode_source_receipt(body: bytes, kind: str, expected: Mapping[str, str]) -> Dict[str, Any]:
    return _decoded(body, lambda value: check_source_receipt(value, kind, expected))


class JobStreamParser:
    """Bytes of one connection of a job's event stream in, validated events out.

    The checker outlives the connection, so a resumed stream continues its sequence.
    """

    def __init__(self, checker: JobStreamChecker) -> None:
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

