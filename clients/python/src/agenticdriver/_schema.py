"""A small declarative checker for decoded JSON values.

It is the runtime of ``generated/checks.py``, which ``npm run protocol`` writes from the
published JSON Schemas. It follows JSON Schema with JSON semantics rather than Python
ones: ``bool`` is not a number, integral floats are integers, lengths count code points,
and a pattern is searched for as ECMAScript does (the generator rewrites each pattern so
Python's ``re`` reads it the same way).
"""
from __future__ import annotations

import json
import math
import re
from typing import Callable, Mapping, NoReturn, Optional

MAX_SAFE_INTEGER = 2**53 - 1


class Invalid(Exception):
    """A value broke a wire rule; ``str()`` names where and how."""


Check = Callable[[object, str], None]


def fail(path: str, problem: str) -> NoReturn:
    raise Invalid(f"{path or 'value'} {problem}")


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_integer(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def _bounded(value: float, path: str, minimum: Optional[float], maximum: Optional[float]) -> None:
    if minimum is not None and value < minimum:
        fail(path, f"must be >= {minimum}")
    if maximum is not None and value > maximum:
        fail(path, f"must be <= {maximum}")


def string(
    min_length: int = 0,
    max_length: Optional[int] = None,
    pattern: Optional[str] = None,
    fmt: Optional[Callable[[str], bool]] = None,
) -> Check:
    compiled = re.compile(pattern) if pattern is not None else None

    def check(value: object, path: str) -> None:
        if not isinstance(value, str):
            fail(path, "must be a string")
        if len(value) < min_length:
            fail(path, f"must have at least {min_length} characters")
        if max_length is not None and len(value) > max_length:
            fail(path, f"must have at most {max_length} characters")
        if compiled is not None and compiled.search(value) is None:
            fail(path, "has an invalid format")
        if fmt is not None and not fmt(value):
            fail(path, "has an invalid format")

    return check


def integer(minimum: Optional[int] = None, maximum: Optional[int] = MAX_SAFE_INTEGER) -> Check:
    def check(value: object, path: str) -> None:
        if not is_integer(value) or not isinstance(value, (int, float)):
            fail(path, "must be an integer")
        _bounded(value, path, minimum, maximum)

    return check


def number(minimum: Optional[float] = None, maximum: Optional[float] = None) -> Check:
    def check(value: object, path: str) -> None:
        if not is_number(value) or not isinstance(value, (int, float)) or not math.isfinite(value):
            fail(path, "must be a finite number")
        _bounded(value, path, minimum, maximum)

    return check


def boolean() -> Check:
    def check(value: object, path: str) -> None:
        if not isinstance(value, bool):
            fail(path, "must be a boolean")

    return check


def one_of(*values: str) -> Check:
    allowed = frozenset(values)

    def check(value: object, path: str) -> None:
        if not isinstance(value, str) or value not in allowed:
            fail(path, f"must be one of {', '.join(sorted(allowed))}")

    return check


def any_json() -> Check:
    def check(value: object, path: str) -> None:
        return None

    return check


def array(item: Check, min_items: int = 0, max_items: Optional[int] = None, unique: bool = False) -> Check:
    def check(value: object, path: str) -> None:
        if not isinstance(value, list):
            fail(path, "must be an array")
        if len(value) < min_items:
            fail(path, f"must have at least {min_items} items")
        if max_items is not None and len(value) > max_items:
            fail(path, f"must have at most {max_items} items")
        for index, element in enumerate(value):
            item(element, f"{path}/{index}")
        if unique and len({canonical(element) for element in value}) != len(value):
            fail(path, "must not contain duplicates")

    return check


def record(value_check: Check, max_properties: Optional[int] = None) -> Check:
    def check(value: object, path: str) -> None:
        if not isinstance(value, dict):
            fail(path, "must be an object")
        if max_properties is not None and len(value) > max_properties:
            fail(path, f"must have at most {max_properties} properties")
        for key, element in value.items():
            value_check(element, f"{path}/{key}")

    return check


def obj(
    required: Mapping[str, Check],
    optional: Optional[Mapping[str, Check]] = None,
    strict: bool = False,
    extra: Optional[Check] = None,
) -> Check:
    """An object; ``strict`` rejects unknown keys, ``extra`` checks unknown keys' values."""
    optional = optional or {}
    known = set(required) | set(optional)

    def check(value: object, path: str) -> None:
        if not isinstance(value, dict):
            fail(path, "must be an object")
        for key, field in required.items():
            if key not in value:
                fail(path, f"must have the field {key!r}")
            field(value[key], f"{path}/{key}")
        for key, field in optional.items():
            if key in value:
                field(value[key], f"{path}/{key}")
        unknown = [key for key in value if key not in known]
        if strict and unknown:
            fail(path, f"has an unknown field {unknown[0]!r}")
        if extra is not None:
            for key in unknown:
                extra(value[key], f"{path}/{key}")

    return check


def any_of(*checks: Check) -> Check:
    """Passes when one of ``checks`` passes; otherwise reports the first one's problem."""

    def check(value: object, path: str) -> None:
        first: Optional[Invalid] = None
        for each in checks:
            try:
                each(value, path)
                return
            except Invalid as problem:
                first = first or problem
        if first is not None:
            raise first

    return check


def contains(expected: str) -> Check:
    """An array (already checked as one) that holds ``expected``."""

    def check(value: object, path: str) -> None:
        if not isinstance(value, list) or expected not in value:
            fail(path, f"must contain {expected!r}")

    return check


def all_of(*checks: Check) -> Check:
    def check(value: object, path: str) -> None:
        for each in checks:
            each(value, path)

    return check


def canonical(value: object) -> str:
    """A stable text form for deep-equality (uniqueness) checks."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True)
