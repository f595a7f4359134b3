package agenticdriver

import "context"

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
	return &result, nil
}

// IndexSource indexes a source revision's own chunks (POST /v1/retrieval/index). A
// request that breaks the index rules (chunk ids used twice, a location range that ends
// before it starts, an ingestion manifest that does not count the chunks) is refused
// with INVALID_RETRIEVAL before it is sent. The receipt must name the corpus, source and
// revision indexed.
func (c *Client) IndexSource(ctx context.Context, req RetrievalIndexRequest) (*RetrievalIndexReceipt, error) {
	var receipt RetrievalIndexReceipt
	if err := c.post(ctx, opIndexSource, req, &receipt); err != nil {
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
	return &result, nil
}
