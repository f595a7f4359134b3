"""Property tests (hypothesis) of the SSE decoder, the run-stream parser and the
submission checks the client runs before sending.

Streams are generated from a model (frames of data lines, comments, other fields, blank
lines, any line ending per line, an optional BOM), serialised and fed in random reads;
the decoder must give exactly the model's frames. Arbitrary bytes must give frames or a
typed DriverError, never another exception.

Bounded for CI: AGENTICDRIVER_PROPERTY_RUNS examples per property (default 200), no
deadline flakiness, no example database written; set it higher for a long run.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenticdriver import AgenticClient, DriverError
from agenticdriver._responses import RunStreamParser
from agenticdriver._sse import SseDecoder

RUNS = int(os.environ.get("AGENTICDRIVER_PROPERTY_RUNS", "200"))
PROPERTY = settings(max_examples=RUNS, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
BOM = b"\xef\xbb\xbf"
ENDINGS = ("\n", "\r\n", "\r")
DECODER_CODES = {"INVALID_STREAM", "RESPONSE_TOO_LARGE"}


@dataclass(frozen=True)
class Line:
    text: str
    data: Optional[str] = None


@dataclass(frozen=True)
class Model:
    bom: bool
    frames: Tuple[Tuple[Line, ...], ...]
    gaps: Tuple[int, ...]

    def expected(self) -> List[str]:
        out = []
        for frame in self.frames:
            data = [line.data for line in frame if line.data is not None]
            if data:
                out.append("\n".join(data))
        return out

    def serialise(self, ending: Callable[[int], str]) -> bytes:
        """One ending per line; a CR followed by a blank line ending in LF would read as
        one CRLF, so that LF becomes CRLF."""
        lines: List[str] = []
        for frame, gap in zip(self.frames, self.gaps):
            lines.extend(line.text for line in frame)
            lines.extend([""] * (gap + 1))
        text, previous = "", ""
        for index, line in enumerate(lines):
            end = ending(index)
            if previous == "\r" and line == "" and end == "\n":
                end = "\r\n"
            text += line + end
            previous = end
        return (BOM if self.bom else b"") + text.encode("utf-8")


# Line content: any characters but CR and LF (no lone surrogates: the wire is UTF-8).
line_text = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=10)
data_line = st.one_of(
    line_text.map(lambda v: Line(f"data: {v}", v)),
    line_text.map(lambda v: v.lstrip(" ")).map(lambda v: Line(f"data:{v}", v)),
    st.just(Line("data", "")),  # a bare field name is a data line with an empty value
    st.just(Line("data:", "")),
)
ignored_line = st.one_of(
    line_text.map(lambda v: Line(f":{v}")),
    st.just(Line(": heartbeat")),
    st.tuples(st.sampled_from(["event", "id", "retry", "Data", "DATA", "datum", "data ", "dat", "x-data"]), line_text).map(
        lambda pair: Line(f"{pair[0]}:{pair[1]}")
    ),
    st.sampled_from(["event", "id", "datax", "data-"]).map(Line),
)
frame = st.lists(st.one_of(data_line, data_line, ignored_line), max_size=6).map(tuple)
model = st.builds(
    lambda bom, frames: Model(bom, tuple(f for f, _ in frames), tuple(g for _, g in frames)),
    st.booleans(),
    st.lists(st.tuples(frame, st.integers(0, 2)), max_size=6),
)
cuts = st.lists(st.integers(min_value=0), max_size=12)


def pieces(body: bytes, at: Sequence[int]) -> List[bytes]:
    points = sorted({cut % (len(body) + 1) for cut in at}) + [len(body)]
    out, start = [], 0
    for point in points:
        out.append(body[start:point])  # empty reads included
        start = point
    return out


def decode(chunks: Sequence[bytes], limit: int = 2_000_000) -> List[str]:
    decoder = SseDecoder(limit)
    return [data for chunk in chunks for data in decoder.feed(chunk)]


def outcome(chunks: Sequence[bytes], limit: int) -> Tuple[List[str], Optional[str]]:
    frames: List[str] = []
    decoder = SseDecoder(limit)
    try:
        for chunk in chunks:
            frames.extend(decoder.feed(chunk))
    except DriverError as error:
        assert error.code in DECODER_CODES, error.code
        return frames, error.code
    return frames, None


@PROPERTY
@given(model, st.lists(st.sampled_from(ENDINGS), min_size=1, max_size=6), cuts)
def test_generated_streams_decode_to_the_model_in_any_reads(value: Model, endings: List[str], at: List[int]) -> None:
    body = value.serialise(lambda index: endings[index % len(endings)])
    assert decode([body]) == value.expected()
    assert decode(pieces(body, at)) == value.expected()
    assert decode([body[i : i + 1] for i in range(len(body))]) == value.expected()


@PROPERTY
@given(model, cuts)
def test_line_endings_and_a_leading_bom_are_equivalent(value: Model, at: List[int]) -> None:
    want = value.expected()
    for end in ENDINGS:
        for bom in (False, True):
            assert decode(pieces(replace(value, bom=bom).serialise(lambda _: end), at)) == want, (end, bom)


@PROPERTY
@given(model, st.lists(st.tuples(st.integers(min_value=0), ignored_line), max_size=8), st.sampled_from(ENDINGS))
def test_comments_and_other_fields_are_ignored_wherever_inserted(value: Model, inserts: List[Tuple[int, Line]], end: str) -> None:
    frames = [list(f) for f in value.frames]
    for at, line in inserts:
        if frames:
            target = frames[at % len(frames)]
            target.insert(at % (len(target) + 1), line)
    noisy = replace(value, frames=tuple(tuple(f) for f in frames))
    assert decode([noisy.serialise(lambda _: end)]) == value.expected()


sse_bytes = st.one_of(
    st.binary(max_size=64),
    st.lists(st.sampled_from([b"data", b":", b" ", b"\r", b"\n", BOM, b"x", "é".encode(), b"\xff", b"\xf0\x9f"]), max_size=40).map(b"".join),
)


@PROPERTY
@given(sse_bytes, cuts, st.integers(1, 24))
def test_arbitrary_bytes_fail_only_with_typed_errors(body: bytes, at: List[int], limit: int) -> None:
    whole, whole_code = outcome([body], limit)
    split, split_code = outcome(pieces(body, at), limit)
    assert split_code == whole_code
    # Frames are yielded lazily, so every read delivers the same frames before an error.
    assert split == whole
    assert all(len(frame.encode()) <= limit for frame in split)


@PROPERTY
@given(st.one_of(sse_bytes, st.lists(st.sampled_from(['data: {"type":"run.started"}', "data: {}", ": hb", "", "data", "data: [1,"]), max_size=8).map(lambda parts: "\n".join(parts).encode())), cuts)
def test_the_run_stream_parser_settles_with_events_or_a_typed_error(body: bytes, at: List[int]) -> None:
    parser = RunStreamParser({"provider": "mock", "model": "demo", "input": "Hello"})
    with pytest.raises(DriverError):
        for chunk in pieces(body, at):
            parser.feed(chunk)
            if parser.finished:
                break
        parser.end()


def test_regression_examples() -> None:
    # A body that is only a BOM (whole or split) is an empty stream; a second BOM is content.
    assert decode([BOM]) == decode([BOM[:1], BOM[1:2], BOM[2:]]) == []
    assert decode(["\ufeff\ufeffdata: x\n\n".encode()]) == []
    # A bare "data" line is a data line with an empty value.
    assert decode([b"data\n\n"]) == [""]
    assert decode([b"data: a\r\ndata\r\ndata:b\r\n\r\n"]) == ["a\n\nb"]


# --- Submission checks (before anything is sent) ---

# Nothing listens on the discard port: a submission that passed its check fails to connect
# (OSError, the sync client's transport failure), one that did not fails with its
# INVALID_* code before connecting.
CLIENT = AgenticClient("http://127.0.0.1:9", "property-token-0123456789abcdef0123")

ticket = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12),
    st.sampled_from(["", "é" * 256, "r" * 257]),
)
tool_name = st.one_of(st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,20}", fullmatch=True), st.sampled_from(["9bad", "bad-name", "", "n" * 64, "n" * 65]))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4) | st.just("__proto__"), inner, max_size=3),
    max_leaves=12,
)


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


plain_or_deep = st.one_of(json_values, json_values, st.integers(60, 70).map(nested))


def depth(value: Any) -> int:
    children = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
    return max((1 + depth(child) for child in children), default=0)


def has_proto(value: Any) -> bool:
    if isinstance(value, dict):
        return "__proto__" in value or any(has_proto(child) for child in value.values())
    return isinstance(value, list) and any(has_proto(child) for child in value)


def ticket_ok(value: str) -> bool:
    return 1 <= len(value) <= 256


def plain_ok(value: Any) -> bool:
    return depth(value) <= 64 and not has_proto(value)


def name_ok(name: str) -> bool:
    import re

    return re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}", name) is not None


def submitted(send: Callable[[], object], code: str) -> bool:
    """True when the submission passed its check (it then failed only in transport)."""
    try:
        send()
    except DriverError as error:
        assert error.code == code, error.code
        return False
    except OSError:  # the sync client's documented transport failure
        return True
    raise AssertionError("a submission to a closed port succeeded")


@PROPERTY
@given(ticket, ticket, ticket, tool_name, st.dictionaries(st.text(max_size=4) | st.just("__proto__"), plain_or_deep, max_size=3), st.sampled_from(["approve", "deny", "cancel", "Approve", ""]))
def test_approval_decisions_are_refused_exactly_when_invalid(approval_id: str, run_id: str, call_id: str, name: str, arguments: Dict[str, Any], decision: str) -> None:
    body = {"approvalId": approval_id, "runId": run_id, "call": {"id": call_id, "name": name, "arguments": arguments}, "decision": decision}
    want = all(ticket_ok(v) for v in (approval_id, run_id, call_id)) and name_ok(name) and plain_ok(arguments) and decision in ("approve", "deny", "cancel")
    assert submitted(lambda: CLIENT.decide_approval(body), "INVALID_APPROVAL") == want  # type: ignore[arg-type]


@PROPERTY
@given(ticket, ticket, ticket, st.one_of(st.none(), plain_or_deep.map(lambda v: ("output", v)), st.sampled_from([("error", "APPLICATION_TOOL_FAILED"), ("error", "OTHER")])), st.booleans())
def test_tool_results_and_identities_are_refused_exactly_when_invalid(execution_id: str, run_id: str, call_id: str, payload: Optional[Tuple[str, Any]], both: bool) -> None:
    identity = {"executionId": execution_id, "runId": run_id, "callId": call_id}
    ids_ok = all(ticket_ok(v) for v in identity.values())
    assert submitted(lambda: CLIENT.report_tool_progress(identity), "INVALID_TOOL_EXECUTION") == ids_ok  # type: ignore[arg-type]
    result: Dict[str, Any] = dict(identity)
    if payload is not None:
        result[payload[0]] = payload[1]
        if both:
            result["error" if payload[0] == "output" else "output"] = "APPLICATION_TOOL_FAILED" if payload[0] == "output" else 1
    want = ids_ok and (
        ("output" in result and "error" not in result and plain_ok(result["output"]))
        or ("error" in result and "output" not in result and result["error"] == "APPLICATION_TOOL_FAILED")
    )
    assert submitted(lambda: CLIENT.complete_tool(result), "INVALID_TOOL_EXECUTION") == want  # type: ignore[arg-type]


def test_regression_submissions_that_are_not_plain_json_are_refused_before_sending() -> None:
    # The host refuses a "__proto__" key or nesting past 64 levels; the client used to send them.
    decision = {"approvalId": "a", "runId": "r", "call": {"id": "c", "name": "n", "arguments": {"q": {"__proto__": 1}}}, "decision": "approve"}
    assert not submitted(lambda: CLIENT.decide_approval(decision), "INVALID_APPROVAL")  # type: ignore[arg-type]
    decision["call"]["arguments"] = {"deep": nested(64)}  # type: ignore[index]
    assert not submitted(lambda: CLIENT.decide_approval(decision), "INVALID_APPROVAL")  # type: ignore[arg-type]
    decision["call"]["arguments"] = {"deep": nested(63)}  # type: ignore[index]
    assert submitted(lambda: CLIENT.decide_approval(decision), "INVALID_APPROVAL")  # type: ignore[arg-type]
    identity = {"executionId": "e", "runId": "r", "callId": "c"}
    assert not submitted(lambda: CLIENT.complete_tool({**identity, "output": nested(65)}), "INVALID_TOOL_EXECUTION")  # type: ignore[typeddict-item]
    assert submitted(lambda: CLIENT.complete_tool({**identity, "output": nested(64)}), "INVALID_TOOL_EXECUTION")  # type: ignore[typeddict-item]


def test_caller_schema_patterns_are_never_run_by_the_client() -> None:
    # Caller-supplied schemas (outputSchema, application tools' input/output schemas) are
    # sent as opaque JSON; only the host evaluates them, on a linear-time engine. A
    # catastrophic pattern against its worst input must therefore cost the client nothing.
    import time

    hostile = {"type": "string", "pattern": "^(a+)+$"}
    request = {
        "provider": "mock",
        "model": "demo",
        "input": "Hello",
        "outputSchema": hostile,
        "tools": ["lookup"],
        "applicationTools": [{"name": "lookup", "description": "d", "inputSchema": {"type": "object", "properties": {"q": hostile}}, "outputSchema": hostile}],
    }
    output = "a" * 64 + "!"
    events = [
        {"type": "run.started", "runId": "r1", "sequence": 1, "timestamp": "2026-09-20T12:00:00.000Z", "provider": "mock", "model": "demo"},
        {"type": "tool.execution.requested", "runId": "r1", "sequence": 2, "timestamp": "2026-09-20T12:00:00.000Z",
         "execution": {"executionId": "e1", "runId": "r1", "call": {"id": "c1", "name": "lookup", "arguments": {"q": output}}}},
        {"type": "run.completed", "runId": "r1", "sequence": 3, "timestamp": "2026-09-20T12:00:00.000Z",
         "result": {"runId": "r1", "provider": "mock", "model": "demo", "text": json.dumps(output), "output": output, "usage": {}, "steps": 1, "finishReason": "stop"}},
    ]
    parser = RunStreamParser(request)
    started = time.monotonic()
    delivered = parser.feed("".join(f"data: {json.dumps(event)}\n\n" for event in events).encode())
    parser.end()
    assert [event["type"] for event in delivered] == ["run.started", "tool.execution.requested", "run.completed"]
    assert time.monotonic() - started < 1.0


STREAM_CODES = {"INVALID_STREAM", "INCOMPLETE_STREAM", "RESPONSE_TOO_LARGE", "UNSUPPORTED_EVENT"}


def run_body(deltas: List[Tuple[str, bool]], end: str) -> Tuple[bytes, List[str]]:
    """A valid run (unfamiliar optional events between deltas, a comment before each frame)."""
    at = "2026-09-20T12:00:00.000Z"
    events: List[Dict[str, Any]] = [{"type": "run.started", "runId": "r1", "sequence": 1, "timestamp": at, "provider": "mock", "model": "demo"}]
    for text, optional in deltas:
        if optional:
            events.append({"type": "x.future", "optional": True, "runId": "r1", "sequence": len(events) + 1, "timestamp": at})
        events.append({"type": "text.delta", "runId": "r1", "sequence": len(events) + 1, "timestamp": at, "text": text})
    result = {"runId": "r1", "provider": "mock", "model": "demo", "text": "".join(t for t, _ in deltas), "usage": {}, "steps": 1, "finishReason": "stop"}
    events.append({"type": "run.completed", "runId": "r1", "sequence": len(events) + 1, "timestamp": at, "result": result})
    body = "".join(f": hb{end}data: {json.dumps(event, ensure_ascii=False)}{end}{end}" for event in events).encode()
    return body, ["run.started"] + ["text.delta"] * len(deltas) + ["run.completed"]


def parse_run(chunks: Sequence[bytes]) -> List[str]:
    parser = RunStreamParser({"provider": "mock", "model": "demo", "input": "Hello"})
    delivered: List[str] = []
    for chunk in chunks:
        delivered.extend(event["type"] for event in parser.feed(chunk))
        if parser.finished:
            return delivered
    parser.end()
    return delivered


@PROPERTY
@given(st.lists(st.tuples(line_text, st.booleans()), max_size=4), st.sampled_from(ENDINGS), cuts)
def test_a_valid_run_is_delivered_whole_in_any_reads(deltas: List[Tuple[str, bool]], end: str, at: List[int]) -> None:
    body, want = run_body(deltas, end)
    assert parse_run(pieces(body, at)) == want


@PROPERTY
@given(st.lists(st.tuples(line_text, st.booleans()), max_size=3), st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=3), st.integers(min_value=0), cuts)
def test_a_damaged_run_fails_only_with_a_typed_stream_error(deltas: List[Tuple[str, bool]], damage: List[Tuple[int, int]], cut: int, at: List[int]) -> None:
    body = bytearray(run_body(deltas, "\n")[0])
    for where, byte in damage:
        body[where % len(body)] = byte
    damaged = bytes(body[: cut % (len(body) + 1)])
    try:
        parse_run(pieces(damaged, at))
    except DriverError as error:
        assert error.code in STREAM_CODES, (error.code, error.message)
