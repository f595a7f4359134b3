"""Retrieval search, source index/delete, document ingestion (both clients, real loopback
HTTP) and ``check_citations``: every answer rule refuses a bad answer with
``INVALID_RESPONSE`` and passes a good one."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, List

import pytest

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError, check_citations
from hosts import TOKEN, Exchange, ScriptedHost

SHA = "a" * 64
Json = Dict[str, Any]


def sync_call(url: str, method: str, *args: Any) -> Any:
    return getattr(AgenticClient(url, TOKEN), method)(*args)


def async_call(url: str, method: str, *args: Any) -> Any:
    async def main() -> Any:
        async with AsyncAgenticClient(url, TOKEN) as client:
            return await getattr(client, method)(*args)

    return asyncio.run(main())


CALLS = pytest.mark.parametrize("call", [sync_call, async_call], ids=["sync", "async"])


def code_of(call: Callable[[], Any]) -> str:
    with pytest.raises(DriverError) as raised:
        call()
    return raised.value.code


def answer(value: Any) -> Callable[[Exchange], None]:
    return lambda exchange: exchange.reply(200, value)


def sent(host: ScriptedHost) -> List[Any]:
    return [(request["path"].rsplit("/v1/", 1)[-1], json.loads(request["body"]), request["headers"].get("Authorization")) for request in host.requests]


def manifest(**overrides: Any) -> Json:
    return {"format": "markdown", "inputSha256": SHA, "inputBytes": 40, "extractor": {"id": "markdown", "version": "1"},
            "chunker": {"id": "source-lines-v1", "maxBytes": 2048}, "extractedTextBytes": 30, "indexedTextBytes": 30, "chunks": 2, **overrides}


def hit(chunk_id: str, source_id: str, text: str, score: float = 0.5) -> Json:
    return {"chunkId": chunk_id, "source": {"id": source_id, "revision": "r1", "location": {"documentId": source_id}},
            "text": text, "score": score, "documentSha256": SHA}


# The host's built-in vector index, ranked by full-text relevance (an additive field).
VECTOR_INDEX: Json = {"providerId": "builtin", "vendor": "agenticdriver", "accountId": "local", "authMode": "none", "model": "word-hash-v1",
                      "dimensions": 256, "metric": "cosine", "version": "1", "ranking": "bm25"}


def index_with(**changes: Any) -> Json:
    return {key: value for key, value in {**VECTOR_INDEX, **changes}.items() if value is not None}


def search_answer(**overrides: Any) -> Json:
    return {"corpus": "docs", "index": VECTOR_INDEX,
            "hits": [hit("c1", "guide", "Install with npm."), hit("c2", "faq", "Ask the operator.", 0.2)], "truncated": False, **overrides}


# ---------------------------------------------------------------------------
# search_retrieval


@CALLS
def test_search_returns_a_consistent_answer(host: ScriptedHost, call: Any) -> None:
    host.routes["retrieval/search"] = answer(search_answer())
    result = call(host.url, "search_retrieval", {"corpus": "docs", "query": "install"})
    assert [h["chunkId"] for h in result["hits"]] == ["c1", "c2"]
    assert sent(host) == [("retrieval/search", {"corpus": "docs", "query": "install"}, f"Bearer {TOKEN}")]


@CALLS
def test_search_accepts_hits_exactly_at_the_bounds(host: ScriptedHost, call: Any) -> None:
    host.routes["retrieval/search"] = answer(search_answer())
    size = len("Install with npm.Ask the operator.")
    request = {"corpus": "docs", "query": "q", "limit": 2, "sourceIds": ["guide", "faq"], "minScore": 0.2, "maxContextBytes": size}
    assert len(call(host.url, "search_retrieval", request)["hits"]) == 2


@CALLS
def test_search_accepts_a_descriptor_without_ranking(host: ScriptedHost, call: Any) -> None:
    # A 1.0 host that ranks by cosine sends no `ranking`.
    host.routes["retrieval/search"] = answer(search_answer(index=index_with(ranking=None)))
    result = call(host.url, "search_retrieval", {"corpus": "docs", "query": "q"})
    assert "ranking" not in result["index"] and result["index"]["metric"] == "cosine"


BAD_SEARCHES = [
    ({"corpus": "docs", "query": "q"}, search_answer(corpus="other")),
    ({"corpus": "docs", "query": "q", "limit": 1}, search_answer()),
    ({"corpus": "docs", "query": "q"}, search_answer(hits=[hit(f"c{i}", "guide", "x") for i in range(9)])),
    ({"corpus": "docs", "query": "q"}, search_answer(hits=[hit("c1", "guide", "a"), hit("c1", "guide", "b")])),
    ({"corpus": "docs", "query": "q", "sourceIds": ["guide"]}, search_answer()),
    ({"corpus": "docs", "query": "q", "minScore": 0.3}, search_answer()),
    ({"corpus": "docs", "query": "q", "maxContextBytes": 20}, search_answer()),
    ({"corpus": "docs", "query": "q"}, search_answer(hits=[hit(f"c{i}", "guide", "é" * 8000) for i in range(5)])),
    ({"corpus": "docs", "query": "q"}, {"corpus": "docs"}),
    ({"corpus": "docs", "query": "q"}, search_answer(index=index_with(metric="bm25"))),
    ({"corpus": "docs", "query": "q"}, search_answer(index=index_with(dimensions=None))),
    ({"corpus": "docs", "query": "q"}, search_answer(index=index_with(accountId=None))),
    ({"corpus": "docs", "query": "q"}, search_answer(index=index_with(ranking="tfidf"))),
]


@CALLS
@pytest.mark.parametrize("request_, bad", BAD_SEARCHES,
                         ids=["corpus", "limit", "default-limit", "chunk-twice", "source", "min-score", "max-bytes", "default-bytes", "shape",
                              "metric", "no-dimensions", "no-account", "ranking"])
def test_search_answers_out_of_scope_are_invalid(host: ScriptedHost, call: Any, request_: Json, bad: Json) -> None:
    host.routes["retrieval/search"] = answer(bad)
    assert code_of(lambda: call(host.url, "search_retrieval", request_)) == "INVALID_RESPONSE"


@CALLS
def test_an_invalid_search_is_refused_before_sending(host: ScriptedHost, call: Any) -> None:
    assert code_of(lambda: call(host.url, "search_retrieval", {"corpus": "docs", "query": "   "})) == "INVALID_RETRIEVAL"
    assert host.requests == []


# ---------------------------------------------------------------------------
# index_source, delete_source

INDEX: Json = {"corpus": "docs", "source": {"id": "guide", "revision": "r1"}, "chunks": [{"id": "c1", "text": "Install with npm."}]}


def receipt(**overrides: Any) -> Json:
    return {"corpus": "docs", "sourceId": "guide", "revision": "r1", "documentSha256": SHA, "chunks": 1, "status": "indexed", **overrides}


@CALLS
def test_index_returns_a_receipt_that_echoes_the_source(host: ScriptedHost, call: Any) -> None:
    host.routes["retrieval/index"] = answer(receipt())
    assert call(host.url, "index_source", INDEX)["status"] == "indexed"
    assert sent(host)[0][:2] == ("retrieval/index", INDEX)


@CALLS
@pytest.mark.parametrize("bad", [receipt(corpus="other"), receipt(sourceId="other"), receipt(revision="r2"), receipt(ingestion=manifest(chunks=3))],
                         ids=["corpus", "source", "revision", "manifest-chunks"])
def test_index_receipts_for_another_source_are_invalid(host: ScriptedHost, call: Any, bad: Json) -> None:
    host.routes["retrieval/index"] = answer(bad)
    assert code_of(lambda: call(host.url, "index_source", INDEX)) == "INVALID_RESPONSE"


@CALLS
def test_delete_checks_its_receipt(host: ScriptedHost, call: Any) -> None:
    host.routes["retrieval/delete"] = answer({"corpus": "docs", "sourceId": "guide", "revision": "r1", "deleted": True})
    assert call(host.url, "delete_source", {"corpus": "docs", "sourceId": "guide", "revision": "r1"})["deleted"] is True
    assert sent(host)[0][:2] == ("retrieval/delete", {"corpus": "docs", "sourceId": "guide", "revision": "r1"})
    host.routes["retrieval/delete"] = answer({"corpus": "docs", "sourceId": "guide", "revision": "r0", "deleted": True})
    assert code_of(lambda: call(host.url, "delete_source", {"corpus": "docs", "sourceId": "guide", "revision": "r1"})) == "INVALID_RESPONSE"
    assert code_of(lambda: call(host.url, "delete_source", {"corpus": "docs", "sourceId": "bad id", "revision": "r1"})) == "INVALID_RETRIEVAL"


# ---------------------------------------------------------------------------
# ingest_document

INGEST: Json = {"corpus": "docs", "document": {"type": "text", "source": {"id": "guide", "revision": "r1"}, "mediaType": "text/markdown", "text": "# Guide\n\nInstall."}}


def ingest_receipt(**overrides: Any) -> Json:
    return {**receipt(chunks=2), "ingestion": manifest(), **overrides}


@CALLS
def test_ingest_returns_the_receipt_with_its_manifest(host: ScriptedHost, call: Any) -> None:
    host.routes["retrieval/ingest"] = answer(ingest_receipt())
    assert call(host.url, "ingest_document", INGEST)["ingestion"]["chunks"] == 2


def _without_manifest() -> Json:
    value = ingest_receipt()
    del value["ingestion"]
    return value


@CALLS
@pytest.mark.parametrize("bad", [_without_manifest(), ingest_receipt(sourceId="other"), ingest_receipt(corpus="other"), ingest_receipt(revision="r2"),
                                 ingest_receipt(chunks=3), ingest_receipt(ingestion=manifest(indexedTextBytes=31))],
                         ids=["no-manifest", "source", "corpus", "revision", "chunks", "inconsistent-manifest"])
def test_ingest_receipts_that_do_not_match_are_invalid(host: ScriptedHost, call: Any, bad: Json) -> None:
    host.routes["retrieval/ingest"] = answer(bad)
    assert code_of(lambda: call(host.url, "ingest_document", INGEST)) == "INVALID_RESPONSE"


@CALLS
def test_an_invalid_document_is_refused_before_sending(host: ScriptedHost, call: Any) -> None:
    bad = {"corpus": "docs", "document": {**INGEST["document"], "text": ""}}
    assert code_of(lambda: call(host.url, "ingest_document", bad)) == "INVALID_INGESTION"
    assert host.requests == []


# ---------------------------------------------------------------------------
# check_citations


def cited_result(text: str, **extra: Any) -> Json:
    def source(source_id: str) -> Json:
        return {"id": source_id, "revision": "r1", "mediaType": "text/markdown", "bytes": 10, "sha256": SHA, "origin": "retrieval"}

    return {"runId": "r", "provider": "mock", "model": "demo", "text": text, "usage": {}, "steps": 1, "finishReason": "stop",
            "sources": [source("c1"), source("p-2.b:x")], **extra}


def test_citations_return_each_cited_source_once_in_order() -> None:
    cited = check_citations(cited_result("See [source:p-2.b:x] and [source:c1], again [source:p-2.b:x]."))
    assert [source["id"] for source in cited] == ["p-2.b:x", "c1"]


def test_text_without_citations_cites_nothing() -> None:
    assert check_citations(cited_result("No citations [source] here.")) == []


def test_citations_in_artifacts_are_read_after_the_text() -> None:
    artifact = {"name": "a.md", "mediaType": "text/markdown", "id": "x", "status": "draft", "content": "From [source:c1].", "sha256": SHA, "sourceIds": ["c1"]}
    assert [source["id"] for source in check_citations(cited_result("Text.", artifacts=[artifact]))] == ["c1"]
    assert code_of(lambda: check_citations(cited_result("Text.", artifacts=[{**artifact, "content": "[source:zz]"}]))) == "INVALID_CITATION"


@pytest.mark.parametrize("text", ["[source:nope]", "[source:c1] and [source:nope]", "[source:", "[source:]", "[source:c1", "[source:c 1]",
                                  "[source:-c1]", "[source:" + "a" * 129 + "]"])
def test_unknown_or_malformed_citations_are_refused(text: str) -> None:
    with pytest.raises(DriverError) as raised:
        check_citations(cited_result(text))
    assert (raised.value.code, raised.value.retryable) == ("INVALID_CITATION", False)


def test_a_result_without_sources_cites_nothing_validly() -> None:
    value = cited_result("[source:c1]")
    del value["sources"]
    assert code_of(lambda: check_citations(value)) == "INVALID_CITATION"
