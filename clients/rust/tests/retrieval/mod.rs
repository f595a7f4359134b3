//! Retrieval search, source index/delete, document ingestion (against loopback peers
//! answering scripted bodies) and `check_citations`: every answer rule refuses a bad
//! answer with `INVALID_RESPONSE` and passes a good one.
use crate::support::*;
use agenticdriver::*;
use serde_json::{json, Value};

const SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// `base` with fields replaced (`null` removes one).
fn with(mut base: Value, changes: Value) -> Value {
    for (key, value) in changes.as_object().unwrap() {
        if value.is_null() {
            base.as_object_mut().unwrap().remove(key);
        } else {
            base[key] = value.clone();
        }
    }
    base
}

async fn scripted(body: &Value) -> (AsyncAgenticClient, Peer) {
    let peer = serve(Reply::Close(json("200 OK", body)), None).await;
    (AsyncAgenticClient::new(&peer.url, TOKEN).unwrap(), peer)
}

/// The request line, bearer and JSON body the peer received.
async fn received(peer: &mut Peer) -> (String, bool, Value) {
    let raw = peer.requests.recv().await.unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let bearer = head.to_ascii_lowercase().contains(&format!("authorization: bearer {}", TOKEN.to_ascii_lowercase()));
    (head.lines().next().unwrap().to_string(), bearer, serde_json::from_str(body).unwrap())
}

fn code<T: std::fmt::Debug>(outcome: Result<T, Error>) -> String {
    outcome.expect_err("the call succeeded").code().unwrap_or("no code").to_string()
}

fn manifest(changes: Value) -> Value {
    with(
        json!({"format": "markdown", "inputSha256": SHA, "inputBytes": 40, "extractor": {"id": "markdown", "version": "1"},
               "chunker": {"id": "source-lines-v1", "maxBytes": 2048}, "extractedTextBytes": 30, "indexedTextBytes": 30, "chunks": 2}),
        changes,
    )
}

fn hit(chunk: &str, source: &str, text: &str, score: f64) -> Value {
    json!({"chunkId": chunk, "source": {"id": source, "revision": "r1", "location": {"documentId": source}}, "text": text, "score": score, "documentSha256": SHA})
}

/// The host's built-in vector index, ranked by full-text relevance (an additive field).
fn index(changes: Value) -> Value {
    with(
        json!({"providerId": "builtin", "vendor": "agenticdriver", "accountId": "local", "authMode": "none", "model": "word-hash-v1",
               "dimensions": 256, "metric": "cosine", "version": "1", "ranking": "bm25"}),
        changes,
    )
}

fn search_answer(changes: Value) -> Value {
    with(
        json!({"corpus": "docs", "index": index(json!({})),
               "hits": [hit("c1", "guide", "Install with npm.", 0.5), hit("c2", "faq", "Ask the operator.", 0.2)], "truncated": false}),
        changes,
    )
}

fn search(changes: Value) -> RetrievalSearch {
    serde_json::from_value(with(json!({"corpus": "docs", "query": "q"}), changes)).unwrap()
}

fn many_hits(n: usize, text: &str) -> Value {
    Value::Array((0..n).map(|i| hit(&format!("c{i}"), "guide", text, 0.5)).collect())
}

#[tokio::test]
async fn search_returns_a_consistent_answer() {
    let (client, mut peer) = scripted(&search_answer(json!({}))).await;
    let result = client.search_retrieval(&search(json!({"query": "install"}))).await.unwrap();
    assert_eq!(result.hits.iter().map(|h| h.chunk_id.as_str()).collect::<Vec<_>>(), ["c1", "c2"]);
    assert_eq!(
        received(&mut peer).await,
        ("POST /v1/retrieval/search HTTP/1.1".into(), true, json!({"corpus": "docs", "query": "install"}))
    );

    let bytes = "Install with npm.Ask the operator.".len();
    let exact = search(json!({"limit": 2, "sourceIds": ["guide", "faq"], "minScore": 0.2, "maxContextBytes": bytes}));
    assert_eq!(peer_answer(&search_answer(json!({}))).await.search_retrieval(&exact).await.unwrap().hits.len(), 2);

    // A 1.0 host that ranks by cosine sends no `ranking`.
    let plain = search_answer(json!({"index": index(json!({"ranking": null}))}));
    let result = peer_answer(&plain).await.search_retrieval(&search(json!({}))).await.unwrap();
    assert_eq!((result.index.ranking, result.index.dimensions, result.index.metric.as_str()), (None, 256, "cosine"));
}

async fn peer_answer(body: &Value) -> AsyncAgenticClient {
    scripted(body).await.0
}

#[tokio::test]
async fn search_answers_out_of_scope_are_invalid() {
    let cases = [
        ("another corpus", json!({}), search_answer(json!({"corpus": "other"}))),
        ("over the limit", json!({"limit": 1}), search_answer(json!({}))),
        ("over the default limit", json!({}), search_answer(json!({"hits": many_hits(9, "x")}))),
        ("a chunk twice", json!({}), search_answer(json!({"hits": [hit("c1", "guide", "a", 0.5), hit("c1", "guide", "b", 0.5)]}))),
        ("an unselected source", json!({"sourceIds": ["guide"]}), search_answer(json!({}))),
        ("below minScore", json!({"minScore": 0.3}), search_answer(json!({}))),
        ("over maxContextBytes", json!({"maxContextBytes": 20}), search_answer(json!({}))),
        ("over the default bytes", json!({}), search_answer(json!({"hits": many_hits(5, &"é".repeat(8000))}))),
        ("a malformed answer", json!({}), json!({"corpus": "docs"})),
        ("a metric other than cosine", json!({}), search_answer(json!({"index": index(json!({"metric": "bm25"}))}))),
        ("no dimensions", json!({}), search_answer(json!({"index": index(json!({"dimensions": null}))}))),
        ("no accountId", json!({}), search_answer(json!({"index": index(json!({"accountId": null}))}))),
        ("an unknown ranking", json!({}), search_answer(json!({"index": index(json!({"ranking": "tfidf"}))}))),
    ];
    for (name, request, answer) in cases {
        let outcome = peer_answer(&answer).await.search_retrieval(&search(request)).await;
        assert_eq!(code(outcome), codes::INVALID_RESPONSE, "{name}");
    }
}

#[tokio::test]
async fn an_invalid_search_is_refused_before_sending() {
    let (client, mut peer) = scripted(&search_answer(json!({}))).await;
    assert_eq!(code(client.search_retrieval(&search(json!({"query": "  "}))).await), codes::INVALID_RETRIEVAL);
    assert!(peer.requests.try_recv().is_err());
}

fn receipt(changes: Value) -> Value {
    with(json!({"corpus": "docs", "sourceId": "guide", "revision": "r1", "documentSha256": SHA, "chunks": 1, "status": "indexed"}), changes)
}

fn index_request() -> RetrievalIndexRequest {
    serde_json::from_value(
        json!({"corpus": "docs", "source": {"id": "guide", "revision": "r1"}, "chunks": [{"id": "c1", "text": "Install with npm."}]}),
    )
    .unwrap()
}

#[tokio::test]
async fn index_and_delete_receipts_must_name_the_source() {
    let (client, mut peer) = scripted(&receipt(json!({}))).await;
    assert_eq!(client.index_source(&index_request()).await.unwrap().status, "indexed");
    let (line, _, body) = received(&mut peer).await;
    assert_eq!((line.as_str(), body), ("POST /v1/retrieval/index HTTP/1.1", serde_json::to_value(index_request()).unwrap()));
    for (name, changes) in [
        ("corpus", json!({"corpus": "other"})),
        ("source", json!({"sourceId": "other"})),
        ("revision", json!({"revision": "r2"})),
        ("manifest chunks", json!({"ingestion": manifest(json!({"chunks": 3}))})),
    ] {
        assert_eq!(code(peer_answer(&receipt(changes)).await.index_source(&index_request()).await), codes::INVALID_RESPONSE, "{name}");
    }

    let deleted = json!({"corpus": "docs", "sourceId": "guide", "revision": "r1", "deleted": true});
    let (client, mut peer) = scripted(&deleted).await;
    assert!(
        client
            .delete_source(&RetrievalDeleteRequest { corpus: "docs".into(), source_id: "guide".into(), revision: "r1".into() })
            .await
            .unwrap()
            .deleted
    );
    let (line, _, body) = received(&mut peer).await;
    assert_eq!(
        (line.as_str(), body),
        ("POST /v1/retrieval/delete HTTP/1.1", json!({"corpus": "docs", "sourceId": "guide", "revision": "r1"}))
    );
    let other = with(deleted, json!({"revision": "r0"}));
    assert_eq!(
        code(
            peer_answer(&other)
                .await
                .delete_source(&RetrievalDeleteRequest { corpus: "docs".into(), source_id: "guide".into(), revision: "r1".into() })
                .await
        ),
        codes::INVALID_RESPONSE
    );
    assert_eq!(
        code(
            client
                .delete_source(&RetrievalDeleteRequest { corpus: "docs".into(), source_id: "bad id".into(), revision: "r1".into() })
                .await
        ),
        codes::INVALID_RETRIEVAL
    );
}

fn ingest_request(text: &str) -> IngestRequest {
    IngestRequest {
        corpus: "docs".into(),
        document: IngestDocument::Text {
            source: ContextSource { id: "guide".into(), revision: "r1".into(), ..Default::default() },
            media_type: "text/markdown".into(),
            text: text.into(),
        },
        chunking: None,
        idle_timeout_ms: None,
    }
}

#[tokio::test]
async fn ingest_receipts_must_carry_a_matching_manifest() {
    let good = receipt(json!({"chunks": 2, "ingestion": manifest(json!({}))}));
    let (client, mut peer) = scripted(&good).await;
    assert_eq!(client.ingest_document(&ingest_request("# Guide\n\nInstall.")).await.unwrap().ingestion.chunks, 2);
    let (line, _, body) = received(&mut peer).await;
    assert_eq!(line, "POST /v1/retrieval/ingest HTTP/1.1");
    assert_eq!(
        body["document"],
        json!({"type": "text", "source": {"id": "guide", "revision": "r1"}, "mediaType": "text/markdown", "text": "# Guide\n\nInstall."})
    );
    for (name, changes) in [
        ("no manifest", json!({"ingestion": null})),
        ("another source", json!({"sourceId": "other"})),
        ("another corpus", json!({"corpus": "other"})),
        ("another revision", json!({"revision": "r2"})),
        ("uncounted chunks", json!({"chunks": 3})),
        ("an inconsistent manifest", json!({"ingestion": manifest(json!({"indexedTextBytes": 31}))})),
    ] {
        let outcome = peer_answer(&with(good.clone(), changes)).await.ingest_document(&ingest_request("x")).await;
        assert_eq!(code(outcome), codes::INVALID_RESPONSE, "{name}");
    }
    assert_eq!(code(client.ingest_document(&ingest_request("")).await), codes::INVALID_INGESTION);
}

#[test]
fn the_blocking_client_ingests_too() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let good = receipt(json!({"chunks": 2, "ingestion": manifest(json!({}))}));
    let peer = runtime.block_on(serve(Reply::Close(json("200 OK", &good)), None));
    let client = blocking::AgenticClient::new(&peer.url, TOKEN).unwrap();
    assert_eq!(client.ingest_document(&ingest_request("# Guide")).unwrap().source_id, "guide");
}

fn cited_result(text: &str, artifacts: Value) -> RunResult {
    let source =
        |id: &str| json!({"id": id, "revision": "r1", "mediaType": "text/markdown", "bytes": 10, "sha256": SHA, "origin": "retrieval"});
    serde_json::from_value(
        json!({"runId": "r", "provider": "mock", "model": "demo", "text": text, "usage": {}, "steps": 1, "finishReason": "stop",
                                  "sources": [source("c1"), source("p-2.b:x")], "artifacts": artifacts}),
    )
    .unwrap()
}

fn ids(cited: Vec<ContextManifest>) -> Vec<String> {
    cited.into_iter().map(|m| m.id).collect()
}

#[test]
fn citations_name_listed_sources_in_order_of_first_citation() {
    let cited = check_citations(&cited_result("See [source:p-2.b:x] and [source:c1], again [source:p-2.b:x].", json!([]))).unwrap();
    assert_eq!(ids(cited), ["p-2.b:x", "c1"]);
    assert!(check_citations(&cited_result("No citations [source] here.", json!([]))).unwrap().is_empty());
    let artifact = |content: &str| {
        json!([{"name": "a.md", "mediaType": "text/markdown", "id": "00000000-0000-4000-8000-000000000009", "status": "draft",
                "content": content, "sha256": SHA, "sourceIds": ["c1"]}])
    };
    assert_eq!(ids(check_citations(&cited_result("Text.", artifact("From [source:c1]."))).unwrap()), ["c1"]);
    assert_eq!(check_citations(&cited_result("Text.", artifact("[source:zz]"))).unwrap_err().code, codes::INVALID_CITATION);
    let long = format!("[source:{}]", "a".repeat(129));
    for text in [
        "[source:nope]",
        "[source:c1] and [source:nope]",
        "[source:",
        "[source:]",
        "[source:c1",
        "[source:c 1]",
        "[source:-c1]",
        long.as_str(),
    ] {
        let error = check_citations(&cited_result(text, json!([]))).unwrap_err();
        assert_eq!((error.code.as_str(), error.retryable), (codes::INVALID_CITATION, false), "{text:.30}");
    }
    let mut no_sources = cited_result("[source:c1]", json!([]));
    no_sources.sources = None;
    assert_eq!(check_citations(&no_sources).unwrap_err().code, codes::INVALID_CITATION);
}

/// A grounded run's result: retrieval in scope and budget (the same defaults as a search),
/// each hit cited by one retrieval manifest with its revision, document and byte count.
#[tokio::test]
async fn grounded_run_results_keep_the_retrieval_rules() {
    let manifest = |hit: &Value, changes: Value| {
        let text = hit["text"].as_str().unwrap();
        with(
            json!({"id": hit["chunkId"], "revision": "r1", "location": {"documentId": hit["source"]["id"]}, "mediaType": "text/plain",
                   "bytes": text.len(), "sha256": SHA, "origin": "retrieval"}),
            changes,
        )
    };
    let result = |hits: Value, sources: Value| {
        json!({"runId": "r1", "provider": "mock", "model": "demo", "text": "Hi", "usage": {}, "steps": 1, "finishReason": "stop",
               "retrieval": with(search_answer(json!({})), json!({"hits": hits})), "sources": sources})
    };
    let one = hit("c1", "guide", "Install with npm.", 0.5);
    let sources_of = |hits: &Value| Value::Array(hits.as_array().unwrap().iter().map(|h| manifest(h, json!({}))).collect());
    let nine = many_hits(9, "x");
    let big = many_hits(5, &"é".repeat(8000));
    let cases = [
        ("consistent", result(json!([one]), json!([manifest(&one, json!({}))])), true),
        ("over the default limit", result(nine.clone(), sources_of(&nine)), false),
        ("over the default bytes", result(big.clone(), sources_of(&big)), false),
        ("another byte count", result(json!([one]), json!([manifest(&one, json!({"bytes": 3}))])), false),
        ("another document", result(json!([one]), json!([manifest(&one, json!({"location": {"documentId": "faq"}}))])), false),
        ("no manifest", result(json!([one]), json!([])), false),
    ];
    for (name, body, ok) in cases {
        let request = RunRequest {
            retrieval: Some(RetrievalOptions { corpus: "docs".into(), ..Default::default() }),
            ..RunRequest::new("mock", "demo", "Hello")
        };
        let outcome = peer_answer(&body).await.run(&request).await;
        match outcome {
            Ok(_) => assert!(ok, "{name}: accepted"),
            Err(e) => assert!(!ok && e.code() == Some(codes::INVALID_RESPONSE), "{name}: {e:?}"),
        }
    }
}
