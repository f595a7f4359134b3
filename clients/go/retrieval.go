package agenticdriver

import (
	"context"
	"fmt"
)

// SearchRetrieval searches one corpus (POST /v1/retrieval/search). The answer must be
// the requested corpus with at most Limit (default 8) unique chunks, each from a selected
// source and scored at least MinScore, and at most MaxContextBytes (default 65,536) bytes
// of hit text; else INVALID_RESPONSE. A malformed request is refused with
// INVALID_RETRIEVAL before anything is sent.
func (c *Client) SearchRetrieval(ctx context.Context, req RetrievalSearch) (*RetrievalResult, error) {
	var result RetrievalResult
	if err := c.post(ctx, opSearchRetrieval, req, &result); err != nil {
		return nil, err
	}
	if err := checkSearch(&result, &req); err != nil {
		return nil, newError(CodeInvalidResponse, "the search answer does not match the request: %v", err)
	}
	return &result, nil
}

// IndexSource indexes a source revision's own chunks (POST /v1/retrieval/index). The
// receipt must name the corpus, source and revision indexed.
func (c *Client) IndexSource(ctx context.Context, req RetrievalIndexRequest) (*RetrievalIndexReceipt, error) {
	var receipt RetrievalIndexReceipt
	if err := c.post(ctx, opIndexSource, req, &receipt); err != nil {
		return nil, err
	}
	want := RetrievalDeleteRequest{Corpus: req.Corpus, SourceID: req.Source.ID, Revision: req.Source.Revision}
	if err := checkSourceReceipt(receipt.Corpus, receipt.SourceID, receipt.Revision, want, receipt.Chunks, receipt.Ingestion); err != nil {
		return nil, err
	}
	return &receipt, nil
}

// DeleteSource removes one source revision from a corpus (POST /v1/retrieval/delete);
// the receipt must name it.
func (c *Client) DeleteSource(ctx context.Context, req RetrievalDeleteRequest) (*RetrievalDeleteResult, error) {
	var result RetrievalDeleteResult
	if err := c.post(ctx, opDeleteSource, req, &result); err != nil {
		return nil, err
	}
	if err := checkSourceReceipt(result.Corpus, result.SourceID, result.Revision, req, 0, nil); err != nil {
		return nil, err
	}
	return &result, nil
}

// IngestDocument extracts, chunks and indexes one document (POST /v1/retrieval/ingest).
// The receipt must name the corpus and the document's source and revision, and carry an
// ingestion manifest that counts the receipt's chunks (else INVALID_RESPONSE). A
// malformed request is refused with INVALID_INGESTION before anything is sent.
func (c *Client) IngestDocument(ctx context.Context, req IngestRequest) (*IngestResult, error) {
	var result IngestResult
	if err := c.post(ctx, opIngestDocument, req, &result); err != nil {
		return nil, err
	}
	want := RetrievalDeleteRequest{Corpus: req.Corpus, SourceID: req.Document.Source.ID, Revision: req.Document.Source.Revision}
	if err := checkSourceReceipt(result.Corpus, result.SourceID, result.Revision, want, result.Chunks, &result.Ingestion); err != nil {
		return nil, err
	}
	return &result, nil
}

// checkSearch holds a search answer to the request's scope and budget.
func checkSearch(r *RetrievalResult, req *RetrievalSearch) error {
	if r.Corpus != req.Corpus {
		return fmt.Errorf("corpus %q is not the requested %q", r.Corpus, req.Corpus)
	}
	limit := req.Limit
	if limit == 0 {
		limit = defaultRetrievalLimit
	}
	if len(r.Hits) > limit {
		return fmt.Errorf("%d hits, more than the limit %d", len(r.Hits), limit)
	}
	maxBytes := req.MaxContextBytes
	if maxBytes == 0 {
		maxBytes = defaultMaxContextBytes
	}
	selected := map[string]bool{}
	for _, id := range req.SourceIDs {
		selected[id] = true
	}
	chunks := map[string]bool{}
	total := 0
	for i, h := range r.Hits {
		path := fmt.Sprintf("hits[%d]", i)
		switch {
		case chunks[h.ChunkID]:
			return fmt.Errorf("%s: chunk %q is listed twice", path, h.ChunkID)
		case req.SourceIDs != nil && !selected[h.Source.ID]:
			return fmt.Errorf("%s: source %q was not selected", path, h.Source.ID)
		case req.MinScore != nil && h.Score < *req.MinScore:
			return fmt.Errorf("%s: score %g is below minScore %g", path, h.Score, *req.MinScore)
		}
		chunks[h.ChunkID] = true
		total += len(h.Text)
		if err := checkContextSource(&h.Source); err != nil {
			return fmt.Errorf("%s.source: %v", path, err)
		}
		if h.Ingestion != nil {
			if err := checkIngestion(h.Ingestion); err != nil {
				return fmt.Errorf("%s.ingestion: %v", path, err)
			}
		}
	}
	if total > maxBytes {
		return fmt.Errorf("the hits carry %d bytes of text, more than %d", total, maxBytes)
	}
	return nil
}

// checkSourceReceipt holds an index, delete or ingest receipt to the corpus, source and
// revision asked for; an ingestion manifest, when there is one, counts the receipt's chunks.
func checkSourceReceipt(corpus, sourceID, revision string, want RetrievalDeleteRequest, chunks int, m *IngestionManifest) error {
	switch {
	case corpus != want.Corpus:
		return newError(CodeInvalidResponse, "the receipt names corpus %q, not %q", corpus, want.Corpus)
	case sourceID != want.SourceID:
		return newError(CodeInvalidResponse, "the receipt names source %q, not %q", sourceID, want.SourceID)
	case revision != want.Revision:
		return newError(CodeInvalidResponse, "the receipt names revision %q, not %q", revision, want.Revision)
	case m == nil:
		return nil
	case m.Chunks != chunks:
		return newError(CodeInvalidResponse, "the ingestion manifest counts %d chunks, the receipt %d", m.Chunks, chunks)
	}
	if err := checkIngestion(m); err != nil {
		return newError(CodeInvalidResponse, "the receipt's ingestion manifest: %v", err)
	}
	return nil
}
