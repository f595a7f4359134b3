package agenticdriver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const sha = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// seenRequest is what the loopback server received.
type seenRequest struct {
	method, path, auth string
	header             http.Header
	body               map[string]any
}

// recorder answers every request with body and records what it received.
func recorder(t *testing.T, body string) (*Client, *[]seenRequest) {
	seen := &[]seenRequest{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(seen, r)
		writeJSON(w, 200, body)
	}))
	t.Cleanup(srv.Close)
	return newTestClient(t, srv.URL), seen
}

// record keeps the path, bearer and JSON body of a request.
func record(seen *[]seenRequest, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var decoded map[string]any
	_ = json.Unmarshal(raw, &decoded)
	*seen = append(*seen, seenRequest{method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"), header: r.Header.Clone(), body: decoded})
}

func toJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func with(base map[string]any, changes map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func manifestJSON(changes map[string]any) map[string]any {
	return with(map[string]any{"format": "markdown", "inputSha256": sha, "inputBytes": 40, "extractor": map[string]any{"id": "markdown", "version": "1"},
		"chunker": map[string]any{"id": "source-lines-v1", "maxBytes": 2048}, "extractedTextBytes": 30, "indexedTextBytes": 30, "chunks": 2}, changes)
}

func hitJSON(chunk, source, text string, score float64) map[string]any {
	return map[string]any{"chunkId": chunk, "source": map[string]any{"id": source, "revision": "r1", "location": map[string]any{"documentId": source}},
		"text": text, "score": score, "documentSha256": sha}
}

// indexJSON is the host's built-in vector index, ranked by full-text relevance (an additive field).
func indexJSON(changes map[string]any) map[string]any {
	return with(map[string]any{"providerId": "builtin", "vendor": "agenticdriver", "accountId": "local", "authMode": "none", "model": "word-hash-v1",
		"dimensions": 256, "metric": "cosine", "version": "1", "ranking": "bm25"}, changes)
}

func searchJSON(changes map[string]any) string {
	return toJSON(with(map[string]any{"corpus": "docs",
		"index": indexJSON(nil),
		"hits":  []any{hitJSON("c1", "guide", "Install with npm.", 0.5), hitJSON("c2", "faq", "Ask the operator.", 0.2)}, "truncated": false}, changes))
}

func manyHits(n int, text string) []any {
	hits := []any{}
	for i := range n {
		hits = append(hits, hitJSON(fmt.Sprintf("c%d", i), "guide", text, 0.5))
	}
	return hits
}

func TestSearchRetrieval(t *testing.T) {
	client, seen := recorder(t, searchJSON(nil))
	result, err := client.SearchRetrieval(t.Context(), RetrievalSearch{Corpus: "docs", Query: "install"})
	if err != nil || len(result.Hits) != 2 || result.Hits[0].ChunkID != "c1" {
		t.Fatalf("search: %+v %v", result, err)
	}
	got := (*seen)[0]
	if got.path != "/v1/retrieval/search" || got.auth != "Bearer "+testToken || toJSON(got.body) != `{"corpus":"docs","query":"install"}` {
		t.Errorf("sent %+v", got)
	}

	client, _ = recorder(t, searchJSON(map[string]any{"index": indexJSON(map[string]any{"ranking": nil})}))
	if result, err := client.SearchRetrieval(t.Context(), RetrievalSearch{Corpus: "docs", Query: "q"}); err != nil || result.Index.Ranking != "" || result.Index.Dimensions != 256 {
		t.Errorf("a 1.0 descriptor without ranking: %+v %v", result, err)
	}

	low := 0.2
	bytes := len("Install with npm.Ask the operator.")
	if _, err := client.SearchRetrieval(t.Context(), RetrievalSearch{Corpus: "docs", Query: "q", Limit: 2, SourceIDs: []string{"guide", "faq"}, MinScore: &low, MaxContextBytes: bytes}); err != nil {
		t.Errorf("hits exactly at the bounds: %v", err)
	}

	high := 0.3
	cases := []struct {
		name string
		req  RetrievalSearch
		body string
	}{
		{"another corpus", RetrievalSearch{Corpus: "docs", Query: "q"}, searchJSON(map[string]any{"corpus": "other"})},
		{"over the limit", RetrievalSearch{Corpus: "docs", Query: "q", Limit: 1}, searchJSON(nil)},
		{"over the default limit", RetrievalSearch{Corpus: "docs", Query: "q"}, searchJSON(map[string]any{"hits": manyHits(9, "x")})},
		{"a chunk twice", RetrievalSearch{Corpus: "docs", Query: "q"}, searchJSON(map[string]any{"hits": []any{hitJSON("c1", "guide", "a", 0.5), hitJSON("c1", "guide", "b", 0.5)}})},
		{"an unselected source", RetrievalSearch{Corpus: "docs", Query: "q", SourceIDs: []string{"guide"}}, searchJSON(nil)},
		{"below minScore", RetrievalSearch{Corpus: "docs", Query: "q", MinScore: &high}, searchJSON(nil)},
		{"over maxContextBytes", RetrievalSearch{Corpus: "docs", Query: "q", MaxContextBytes: 20}, searchJSON(nil)},
		{"over the default bytes", RetrievalSearch{Corpus: "docs", Query: "q"}, searchJSON(map[string]any{"hits": manyHits(5, strings.Repeat("é", 8000))})},
		{"a malformed answer", RetrievalSearch{Corpus: "docs", Query: "q"}, `{"corpus":"docs"}`},
		{"a metric other than cosine", RetrievalSearch{Corpus: "docs", Query: "q"}, searchJSON(map[string]any{"index": indexJSON(map[string]any{"metric": "bm25"})})},
		{"no dimensions", RetrievalSearch{Corpus: "docs", Query: "q"}, searchJSON(map[string]any{"index": indexJSON(map[string]any{"dimensions": nil})})},
		{"no accountId", RetrievalSearch{Corpus: "docs", Query: "q"}, searchJSON(map[string]any{"index": indexJSON(map[string]any{"accountId": nil})})},
		{"an unknown ranking", RetrievalSearch{Corpus: "docs", Query: "q"}, searchJSON(map[string]any{"index": indexJSON(map[string]any{"ranking": "tfidf"})})},
	}
	for _, c := range cases {
		client, _ := recorder(t, c.body)
		if _, err := client.SearchRetrieval(t.Context(), c.req); !isCode(err, CodeInvalidResponse) {
			t.Errorf("%s: got %v, want INVALID_RESPONSE", c.name, err)
		}
	}

	client, seen = recorder(t, searchJSON(nil))
	if _, err := client.SearchRetrieval(t.Context(), RetrievalSearch{Corpus: "docs", Query: "  "}); !isCode(err, CodeInvalidRetrieval) || len(*seen) != 0 {
		t.Errorf("blank query: %v (sent %d)", err, len(*seen))
	}
}

func receiptJSON(changes map[string]any) map[string]any {
	return with(map[string]any{"corpus": "docs", "sourceId": "guide", "revision": "r1", "documentSha256": sha, "chunks": 1, "status": "indexed"}, changes)
}

func TestIndexAndDeleteSource(t *testing.T) {
	req := RetrievalIndexRequest{Corpus: "docs", Source: ContextSource{ID: "guide", Revision: "r1"}, Chunks: []IndexChunk{{ID: "c1", Text: "Install with npm."}}}
	client, seen := recorder(t, toJSON(receiptJSON(nil)))
	if receipt, err := client.IndexSource(t.Context(), req); err != nil || receipt.Status != "indexed" {
		t.Fatalf("index: %+v %v", receipt, err)
	}
	if got := (*seen)[0]; got.path != "/v1/retrieval/index" || toJSON(got.body) != `{"chunks":[{"id":"c1","text":"Install with npm."}],"corpus":"docs","source":{"id":"guide","revision":"r1"}}` {
		t.Errorf("sent %+v", got)
	}
	for name, changes := range map[string]map[string]any{
		"corpus":          {"corpus": "other"},
		"source":          {"sourceId": "other"},
		"revision":        {"revision": "r2"},
		"manifest chunks": {"ingestion": manifestJSON(map[string]any{"chunks": 3})},
	} {
		client, _ := recorder(t, toJSON(receiptJSON(changes)))
		if _, err := client.IndexSource(t.Context(), req); !isCode(err, CodeInvalidResponse) {
			t.Errorf("index receipt with another %s: %v", name, err)
		}
	}

	client, seen = recorder(t, `{"corpus":"docs","sourceId":"guide","revision":"r1","deleted":true}`)
	if result, err := client.DeleteSource(t.Context(), RetrievalDeleteRequest{Corpus: "docs", SourceID: "guide", Revision: "r1"}); err != nil || !result.Deleted {
		t.Fatalf("delete: %+v %v", result, err)
	}
	if got := (*seen)[0]; got.path != "/v1/retrieval/delete" || toJSON(got.body) != `{"corpus":"docs","revision":"r1","sourceId":"guide"}` {
		t.Errorf("sent %+v", got)
	}
	client, _ = recorder(t, `{"corpus":"docs","sourceId":"guide","revision":"r0","deleted":true}`)
	if _, err := client.DeleteSource(t.Context(), RetrievalDeleteRequest{Corpus: "docs", SourceID: "guide", Revision: "r1"}); !isCode(err, CodeInvalidResponse) {
		t.Errorf("delete receipt of another revision: %v", err)
	}
	if _, err := client.DeleteSource(t.Context(), RetrievalDeleteRequest{Corpus: "docs", SourceID: "bad id", Revision: "r1"}); !isCode(err, CodeInvalidRetrieval) {
		t.Errorf("bad source id: %v", err)
	}
}

func TestIngestDocument(t *testing.T) {
	req := IngestRequest{Corpus: "docs", Document: IngestDocument{Type: "text", Source: ContextSource{ID: "guide", Revision: "r1"}, MediaType: "text/markdown", Text: "# Guide\n\nInstall."}}
	good := receiptJSON(map[string]any{"chunks": 2, "ingestion": manifestJSON(nil)})
	client, seen := recorder(t, toJSON(good))
	if result, err := client.IngestDocument(t.Context(), req); err != nil || result.Ingestion.Chunks != 2 {
		t.Fatalf("ingest: %+v %v", result, err)
	}
	if got := (*seen)[0]; got.path != "/v1/retrieval/ingest" || got.body["document"].(map[string]any)["type"] != "text" {
		t.Errorf("sent %+v", got)
	}
	for name, changes := range map[string]map[string]any{
		"no manifest":           {"ingestion": nil},
		"another source":        {"sourceId": "other"},
		"another corpus":        {"corpus": "other"},
		"another revision":      {"revision": "r2"},
		"uncounted chunks":      {"chunks": 3},
		"inconsistent manifest": {"ingestion": manifestJSON(map[string]any{"indexedTextBytes": 31})},
	} {
		client, _ := recorder(t, toJSON(with(good, changes)))
		if _, err := client.IngestDocument(t.Context(), req); !isCode(err, CodeInvalidResponse) {
			t.Errorf("ingest receipt with %s: %v", name, err)
		}
	}
	client, seen = recorder(t, toJSON(good))
	bad := req
	bad.Document.Text = ""
	if _, err := client.IngestDocument(t.Context(), bad); !isCode(err, CodeInvalidIngestion) || len(*seen) != 0 {
		t.Errorf("empty document: %v (sent %d)", err, len(*seen))
	}
}

func TestCheckCitations(t *testing.T) {
	source := func(id string) ContextManifest {
		return ContextManifest{ContextSource: ContextSource{ID: id, Revision: "r1"}, MediaType: "text/markdown", Bytes: 10, SHA256: sha, Origin: "retrieval"}
	}
	result := func(text string) *RunResult {
		return &RunResult{Text: text, Sources: []ContextManifest{source("c1"), source("p-2.b:x")}}
	}
	ids := func(ms []ContextManifest) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	cited, err := CheckCitations(result("See [source:p-2.b:x] and [source:c1], again [source:p-2.b:x]."))
	if err != nil || fmt.Sprint(ids(cited)) != "[p-2.b:x c1]" {
		t.Errorf("cited %v %v", ids(cited), err)
	}
	if cited, err := CheckCitations(result("No citations [source] here.")); err != nil || len(cited) != 0 {
		t.Errorf("no citations: %v %v", cited, err)
	}
	withArtifact := result("Text.")
	withArtifact.Artifacts = []DraftArtifact{{Content: "From [source:c1]."}}
	if cited, err := CheckCitations(withArtifact); err != nil || fmt.Sprint(ids(cited)) != "[c1]" {
		t.Errorf("artifact: %v %v", ids(cited), err)
	}
	withArtifact.Artifacts[0].Content = "[source:zz]"
	if _, err := CheckCitations(withArtifact); !isCode(err, CodeInvalidCitation) {
		t.Errorf("unknown artifact citation: %v", err)
	}
	for _, text := range []string{"[source:nope]", "[source:c1] and [source:nope]", "[source:", "[source:]", "[source:c1", "[source:c 1]", "[source:-c1]", "[source:" + strings.Repeat("a", 129) + "]"} {
		if _, err := CheckCitations(result(text)); !isCode(err, CodeInvalidCitation) {
			t.Errorf("%.30q: got %v, want INVALID_CITATION", text, err)
		}
	}
	if _, err := CheckCitations(&RunResult{Text: "[source:c1]"}); !isCode(err, CodeInvalidCitation) {
		t.Errorf("no sources: %v", err)
	}
}

// A grounded run's result: retrieval in scope and budget (the same defaults as a search),
// each hit cited by one retrieval manifest with its revision, document and byte count.
func TestRunResultRetrievalRules(t *testing.T) {
	manifest := func(h map[string]any, changes map[string]any) map[string]any {
		text := h["text"].(string)
		return with(map[string]any{"id": h["chunkId"], "revision": "r1", "location": map[string]any{"documentId": h["source"].(map[string]any)["id"]},
			"mediaType": "text/plain", "bytes": len(text), "sha256": sha, "origin": "retrieval"}, changes)
	}
	result := func(hits []any, sources []any) string {
		retrieval := with(map[string]any{}, map[string]any{"corpus": "docs", "hits": hits, "truncated": false, "index": indexJSON(nil)})
		return toJSON(map[string]any{"runId": "r1", "provider": "mock", "model": "demo", "text": "Hi", "usage": map[string]any{}, "steps": 1, "finishReason": "stop",
			"retrieval": retrieval, "sources": sources})
	}
	one := hitJSON("c1", "guide", "Install with npm.", 0.5)
	nine := manyHits(9, "x")
	var nineSources []any
	for _, h := range nine {
		nineSources = append(nineSources, manifest(h.(map[string]any), nil))
	}
	big := manyHits(5, strings.Repeat("é", 8000))
	var bigSources []any
	for _, h := range big {
		bigSources = append(bigSources, manifest(h.(map[string]any), nil))
	}
	cases := []struct {
		name string
		body string
		ok   bool
	}{
		{"consistent", result([]any{one}, []any{manifest(one, nil)}), true},
		{"over the default limit", result(nine, nineSources), false},
		{"over the default bytes", result(big, bigSources), false},
		{"another byte count", result([]any{one}, []any{manifest(one, map[string]any{"bytes": 3})}), false},
		{"another document", result([]any{one}, []any{manifest(one, map[string]any{"location": map[string]any{"documentId": "faq"}})}), false},
		{"no manifest", result([]any{one}, []any{}), false},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, c.body) }))
		req := demo()
		req.Retrieval = &RetrievalOptions{Corpus: "docs"}
		_, err := newTestClient(t, srv.URL).Run(t.Context(), req)
		srv.Close()
		if (c.ok && err != nil) || (!c.ok && !isCode(err, CodeInvalidResponse)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
