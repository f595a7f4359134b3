"""Strict JSON decoding of response bodies and event frames."""
from __future__ import annotations

import json
from typing import NoReturn

from .errors import DriverError

MAX_JSON_BYTES = 2_000_000


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def parse_json_text(text: str) -> object:
    """Parse JSON text; NaN and Infinity are rejected. Raises ValueError."""
    return json.loads(text, parse_constant=_reject_constant)


def parse_json_body(body: bytes, code: str = "INVALID_RESPONSE") -> object:
    """Parse a complete response body (already bounded by the reader)."""
    if len(body) > MAX_JSON_BYTES:
        raise DriverError("RESPONSE_TOO_LARGE", f"The response body exceeds {MAX_JSON_BYTES} bytes.")
    try:
        text = body.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        return parse_json_text(text)
    except (ValueError, RecursionError):
        raise DriverError(code, "The response body is not valid JSON.") from None
