"""The SSE decoder across every read boundary and its size and encoding limits."""
from __future__ import annotations

from typing import List

import pytest

from agenticdriver import DriverError
from agenticdriver._sse import SseDecoder

BODY = ": comment\ndata: {\"a\":\ndata: 1}\n\ndata:\xf0\x9f\x8c\x8d\n\n".encode("latin-1")


def decode(body: bytes, split: int, limit: int = 2_000_000) -> List[str]:
    decoder = SseDecoder(limit)
    frames: List[str] = []
    for start in range(0, len(body), split):
        frames.extend(decoder.feed(body[start : start + split]))
    return frames


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_every_line_ending_and_bom_at_every_split(ending: bytes, bom: bytes) -> None:
    body = bom + BODY.replace(b"\n", ending)
    for split in range(1, len(body) + 1):
        assert decode(body, split) == ['{"a":\n1}', "\U0001f30d"], split


def test_unfinished_frame_is_not_dispatched() -> None:
    assert decode(b'data: {"type":"run.started"}', 4) == []
    assert decode(b'data: {"x":1}\n', 4) == []


def test_frame_limit_counts_line_bytes_without_terminators() -> None:
    exact = b"data: " + b"x" * 94 + b"\r\n\r\n"
    assert decode(exact, 7, limit=100) == ["x" * 94]
    with pytest.raises(DriverError) as raised:
        decode(b": c\n" + exact, 7, limit=100)
    assert raised.value.code == "RESPONSE_TOO_LARGE"


def test_oversize_frame_fails_before_its_end_arrives() -> None:
    decoder = SseDecoder(100)
    with pytest.raises(DriverError) as raised:
        list(decoder.feed(b"data: " + b"x" * 200))
    assert raised.value.code == "RESPONSE_TOO_LARGE"


def test_invalid_utf8_is_an_invalid_stream() -> None:
    with pytest.raises(DriverError) as raised:
        decode(b"data: \xff\n\n", 3)
    assert raised.value.code == "INVALID_STREAM"
