"""The cross-field rules of wire protocol 1.0, evaluated.

The rules themselves (an answer against its request, a stream event against the run) are
data: ``generated/rules.py``, which ``npm run protocol`` writes from ``protocol/rules.json``
(``src/protocol/rules.ts`` holds them and describes the vocabulary). This module evaluates
them on decoded JSON, step for step as ``src/protocol/rule-evaluator.ts`` does, with JSON
semantics rather than Python ones: ``bool`` is not a number, ``1 == 1.0``, an absent field is
absent (never ``None``). The shared vectors in ``protocol/fixtures/rules.json`` hold every
client to the same answers.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, NamedTuple, Optional

from ._schema import is_number
from .generated.rules import RULE_SETS

Scope = Mapping[str, Any]


class _Absent:
    """The value of a path that reaches nothing."""


ABSENT: Any = _Absent()


class Violation(NamedTuple):
    rule: str
    message: str
    #: The list items walked to reach it (``answer.hits[1]``), empty at the top.
    at: str

    def __str__(self) -> str:
        where = f" (at {self.at})" if self.at else ""
        return f"{self.message}{where} [{self.rule}]"


def evaluate(name: str, scope: Scope) -> Optional[Violation]:
    """The first rule of the set ``name`` that ``scope`` breaks, or None."""
    return _run(RULE_SETS[name]["rules"], scope, "")


def _run(rules: List[Any], scope: Scope, at: str) -> Optional[Violation]:
    for rule in rules:
        if "when" in rule and not _holds(rule["when"], scope):
            continue
        if "id" in rule:
            if not _holds(rule["check"], scope):
                return Violation(rule["id"], rule["message"], at)
            continue
        if "apply" in rule:
            inner = {name: _value(expression, scope) for name, expression in rule["with"].items()}
            found = _run(RULE_SETS[rule["apply"]]["rules"], {k: v for k, v in inner.items() if v is not ABSENT}, at)
            if found is not None:
                return found
            continue
        each = rule.get("each")
        items = _list(_value(each["in"], scope)) if each is not None else [ABSENT]
        for index, item in enumerate(items):
            inner_scope: Dict[str, Any] = dict(scope)
            where = at
            if each is not None:
                inner_scope[each["as"]] = item
                if "index" in each:
                    inner_scope[each["index"]] = index
                name = each["in"] if isinstance(each["in"], str) else "items"
                where = f"{at}/{name}[{index}]" if at else f"{name}[{index}]"
            if "let" in rule:
                bound = {name: _value(expression, inner_scope) for name, expression in rule["let"].items()}
                inner_scope.update({k: v for k, v in bound.items() if v is not ABSENT})
            found = _run(rule["rules"], inner_scope, where)
            if found is not None:
                return found
    return None


def _holds(condition: Mapping[str, Any], scope: Scope) -> bool:
    if "equal" in condition:
        a, b = (_value(operand, scope) for operand in condition["equal"])
        return json_equal(a, b)
    if "less" in condition:
        order = _compare(*(_value(operand, scope) for operand in condition["less"]))
        return order is not None and order < 0
    if "atMost" in condition:
        order = _compare(*(_value(operand, scope) for operand in condition["atMost"]))
        return order is not None and order <= 0
    if "present" in condition:
        return _value(condition["present"], scope) is not ABSENT
    if "in" in condition:
        item, items = (_value(operand, scope) for operand in condition["in"])
        return item is not ABSENT and any(json_equal(candidate, item) for candidate in _list(items))
    if "unique" in condition:
        items = _list(_value(condition["unique"], scope))
        return all(not any(json_equal(earlier, item) for earlier in items[:index]) for index, item in enumerate(items))
    if "iff" in condition:
        first, second = condition["iff"]
        return _holds(first, scope) == _holds(second, scope)
    if "not" in condition:
        return not _holds(condition["not"], scope)
    if "and" in condition:
        return all(_holds(part, scope) for part in condition["and"])
    if "uriWithoutCredentials" in condition:
        return not _has_credentials(_value(condition["uriWithoutCredentials"], scope))
    raise ValueError(f"unknown rule condition {condition!r}")


def _value(expression: Any, scope: Scope) -> Any:
    if isinstance(expression, str):
        return _lookup(expression, scope)
    if not isinstance(expression, dict):
        return expression  # a number, boolean or null literal
    if "value" in expression:
        return expression["value"]
    if "count" in expression:
        items = _list(_value(expression["count"], scope))
        where = expression.get("where")
        return sum(1 for it in items if where is None or _holds(where, {**scope, "it": it}))
    if "bytes" in expression:
        target = _value(expression["bytes"], scope)
        if isinstance(target, str):
            return _utf8_length(target)
        if isinstance(target, list):
            return sum(_utf8_length(item) for item in target if isinstance(item, str))
        return ABSENT
    if "add" in expression:
        terms = [_value(term, scope) for term in expression["add"]]
        return sum(terms) if all(is_number(term) for term in terms) else ABSENT
    if "default" in expression:
        for option in expression["default"]:
            found = _value(option, scope)
            if found is not ABSENT:
                return found
        return ABSENT
    if "lower" in expression:
        target = _value(expression["lower"], scope)
        return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in target) if isinstance(target, str) else ABSENT
    if "find" in expression:
        for it in _list(_value(expression["find"], scope)):
            if _holds(expression["where"], {**scope, "it": it}):
                return it
        return ABSENT
    if "map" in expression:
        key = _value(expression["map"], scope)
        table = expression["to"]
        return table[key] if isinstance(key, str) and key in table else ABSENT
    raise ValueError(f"unknown rule value {expression!r}")


def _lookup(path: str, scope: Scope) -> Any:
    """``a.b`` is one value; a path with ``[]`` the list of every value it reaches."""
    steps = path.split(".")
    if "[]" not in path:
        current: Any = scope
        for step in steps:
            current = _field(current, step)
        return current
    found: List[Any] = []

    def walk(current: Any, index: int) -> None:
        if index == len(steps):
            if current is not ABSENT:
                found.append(current)
            return
        step = steps[index]
        each = step.endswith("[]")
        following = _field(current, step[:-2] if each else step)
        if not each:
            walk(following, index + 1)
        elif isinstance(following, list):
            for item in following:
                walk(item, index + 1)

    walk(scope, 0)
    return found


def _field(value: Any, name: str) -> Any:
    return value.get(name, ABSENT) if isinstance(value, Mapping) else ABSENT


def _list(value: Any) -> List[Any]:
    return value if isinstance(value, list) else []


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: absent equals only absent; numbers by value, never a boolean."""
    if a is ABSENT or b is ABSENT:
        return a is b
    if is_number(a) or is_number(b):
        return is_number(a) and is_number(b) and a == b
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[key], b[key]) for key in a)
    return False


def _compare(a: Any, b: Any) -> Optional[float]:
    """Numbers by value, strings by code point; None for anything else."""
    if is_number(a) and is_number(b):
        return float(a - b)
    if isinstance(a, str) and isinstance(b, str):
        return 0 if a == b else (-1 if a < b else 1)
    return None


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _has_credentials(uri: Any) -> bool:
    """Whether a URI's authority (after ``://``, up to the first ``/``, ``?`` or ``#``) carries user information."""
    if not isinstance(uri, str) or "://" not in uri:
        return False
    rest = uri.split("://", 1)[1]
    for stop in "/?#":
        rest = rest.split(stop, 1)[0]
    return "@" in rest
