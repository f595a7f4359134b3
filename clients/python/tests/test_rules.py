"""The generated cross-field rules (``generated/rules.py``) evaluated by ``_rules.py``: the
shared vectors of ``protocol/fixtures/rules.json`` (the TypeScript, Go and Rust clients
answer them too), and a request rule refusing a body with the operation's code."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from agenticdriver import DriverError
from agenticdriver._rules import Violation, evaluate
from agenticdriver._submissions import request_body
from agenticdriver.generated import operations as ops

VECTORS: List[Dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[3] / "protocol" / "fixtures" / "rules.json").read_text(encoding="utf-8")
)["cases"]


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["name"] for vector in VECTORS])
def test_answers_the_shared_vectors(vector: Dict[str, Any]) -> None:
    broken = evaluate(vector["ruleSet"], vector["scope"])
    assert (broken.rule if broken else None) == vector["broken"]
    if broken is not None:
        assert broken.at == vector["at"]


def test_words_a_violation_as_every_client() -> None:
    assert str(Violation("a.b", "it is wrong", "answer.hits[1]")) == "it is wrong (at answer.hits[1]) [a.b]"
    assert str(Violation("a.b", "it is wrong", "")) == "it is wrong [a.b]"


def test_refuses_a_body_breaking_its_request_rules_with_the_operation_code() -> None:
    request = {"corpus": "docs", "source": {"id": "guide", "revision": "1"}, "chunks": [{"id": "c1", "text": "a"}, {"id": "c1", "text": "b"}]}
    with pytest.raises(DriverError) as refused:
        request_body(ops.INDEX_SOURCE, request)
    assert refused.value.code == "INVALID_RETRIEVAL"
    assert "[indexRequest.chunkIds]" in str(refused.value)
    assert request_body(ops.INDEX_SOURCE, {**request, "chunks": request["chunks"][:1]})
