"""Incremental Server-Sent Events decoder: bytes in, complete ``data`` payloads out.

Handles LF, CRLF and bare CR line endings (also when a CR and its LF arrive in different
reads), a leading UTF-8 BOM, comment lines and multi-line ``data``. A frame counts the
bytes of its lines (field names and comments included, terminators and the BOM not);
a frame above ``max_frame_bytes`` fails with ``RESPONSE_TOO_LARGE`` as soon as it is
seen, without buffering it. Invalid UTF-8 fails with ``INVALID_STREAM``.
"""
from __future__ import annotations

import re
from typing import Iterator, List, Optional

from .errors import DriverError

MAX_FRAME_BYTES = 2_000_000
_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile("\r\n|\r|\n")


class SseDecoder:
    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self._max = max_frame_bytes
        self._line = bytearray()
        self._frame_bytes = 0
        self._data: Optional[List[str]] = None
        self._skip_lf = False
        self._at_start = True

    def feed(self, chunk: bytes) -> Iterator[str]:
        """Decode one read, yielding the data of each frame as it completes.

        Lazy on purpose: a caller that stops at a terminal event never decodes what follows.
        The complete lines of a read are decoded and split in bulk; a read with invalid
        UTF-8 (and the first read, for the BOM) goes line by line, so frames before the bad
        bytes are still yielded first.
        """
        if self._at_start:
            yield from self._feed_lines(chunk)
            return
        data = bytes(self._line) + chunk if self._line else chunk
        if not data:
            return
        start = 0
        if self._skip_lf:
            self._skip_lf = False
            if data[0] == 0x0A:
                start = 1
        last = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if last < start:
            self._line = bytearray(data[start:])
            self._check_size(len(self._line))
            return
        try:
            text = data[start : last + 1].decode("utf-8")
        except UnicodeDecodeError:
            self._line = bytearray()
            yield from self._feed_lines(data[start:])
            return
        self._line = bytearray(data[last + 1 :])
        lines = _LINE_END.split(text) if "\r" in text else text.split("\n")
        lines.pop()  # the empty rest after the last terminator
        for line in lines:
            if not line:
                frame, self._data, self._frame_bytes = self._data, None, 0
                if frame is not None:
                    yield "\n".join(frame)
                continue
            self._frame_bytes += len(line) if line.isascii() else len(line.encode("utf-8"))
            if self._frame_bytes > self._max:
                raise DriverError("RESPONSE_TOO_LARGE", f"An event stream frame exceeds {self._max} bytes.")
            if line.startswith("data"):
                if len(line) == 4:
                    value = ""
                elif line[4] == ":":
                    value = line[6:] if line.startswith(" ", 5) else line[5:]
                else:
                    continue
                if self._data is None:
                    self._data = []
                self._data.append(value)
        self._skip_lf = text.endswith("\r")
        if self._line:
            self._check_size(len(self._line))

    def _feed_lines(self, chunk: bytes) -> Iterator[str]:
        """The line-by-line decoder (first read, invalid UTF-8)."""
        view = memoryview(chunk)
        position = 0
        if self._at_start and (view.nbytes or self._line):
            position = self._strip_bom(chunk)
            if position < 0:
                return
        while position < len(view):
            if self._skip_lf:
                self._skip_lf = False
                if view[position] == 0x0A:
                    position += 1
                    continue
            end = _next_line_end(chunk, position)
            if end < 0:
                self._line += view[position:]
                self._check_size(len(self._line))
                break
            self._line += view[position:end]
            self._check_size(len(self._line))
            self._skip_lf = view[end] == 0x0D
            position = end + 1
            frame = self._end_line()
            if frame is not None:
                yield frame

    def _strip_bom(self, chunk: bytes) -> int:
        """Consume a leading BOM, possibly split over reads; -1 means "need more bytes"."""
        prefix = bytes(self._line) + chunk
        if len(prefix) < len(_BOM) and _BOM.startswith(prefix):
            self._line = bytearray(prefix)
            return -1
        self._at_start = False
        held = len(self._line)
        self._line = bytearray()
        if prefix.startswith(_BOM):
            return len(_BOM) - held
        # Bytes held back for a possible BOM were not one: they start the first line.
        self._line += prefix[:held]
        return 0

    def _check_size(self, line_bytes: int) -> None:
        if self._frame_bytes + line_bytes > self._max:
            raise DriverError("RESPONSE_TOO_LARGE", f"An event stream frame exceeds {self._max} bytes.")

    def _end_line(self) -> Optional[str]:
        raw = bytes(self._line)
        self._line = bytearray()
        if not raw:
            data, self._data, self._frame_bytes = self._data, None, 0
            return "\n".join(data) if data is not None else None
        self._frame_bytes += len(raw)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DriverError("INVALID_STREAM", "The event stream is not valid UTF-8.") from None
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if name != "data":
            return None
        if colon and value.startswith(" "):
            value = value[1:]
        if self._data is None:
            self._data = []
        self._data.append(value)
        return None


def _next_line_end(chunk: bytes, start: int) -> int:
    lf = chunk.find(b"\n", start)
    cr = chunk.find(b"\r", start, lf if lf >= 0 else len(chunk))
    return cr if cr >= 0 else lf
