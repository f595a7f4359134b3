"""The JSON Schema formats the wire contract uses, as Ajv checks them.

Hand-written: the generated checks (``generated/checks.py``) name these for
``format: date-time`` and ``format: uuid``.
"""
from __future__ import annotations

import re

_DATE = re.compile(r"(\d\d\d\d)-(\d\d)-(\d\d)", re.ASCII)
_TIME = re.compile(r"(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?", re.ASCII | re.IGNORECASE)
_DATE_TIME_SEPARATOR = re.compile(r"[tT]|\s")
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_UUID_FORMAT = re.compile(r"(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}", re.ASCII | re.IGNORECASE)


def _is_date(text: str) -> bool:
    match = _DATE.fullmatch(text)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _DAYS[month])


def _is_time(text: str) -> bool:
    match = _TIME.fullmatch(text)
    if match is None or match.group(4) is None:
        return False
    hour, minute, second = int(match.group(1)), int(match.group(2)), float(match.group(3))
    sign = -1 if match.group(5) == "-" else 1
    zone_hour, zone_minute = int(match.group(6) or 0), int(match.group(7) or 0)
    if zone_hour > 23 or zone_minute > 59:
        return False
    if hour <= 23 and minute <= 59 and second < 60:
        return True
    # A leap second is only valid at 23:59:60 UTC.
    utc_minute = minute - zone_minute * sign
    utc_hour = hour - zone_hour * sign - (1 if utc_minute < 0 else 0)
    return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61


def is_uuid(text: str) -> bool:
    return _UUID_FORMAT.fullmatch(text) is not None


def is_date_time(text: str) -> bool:
    """RFC 3339 date-time with a required offset, rejecting impossible dates."""
    parts = _DATE_TIME_SEPARATOR.split(text)
    return len(parts) == 2 and _is_date(parts[0]) and _is_time(parts[1])
