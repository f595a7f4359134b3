package agenticdriver

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Cross-field rules of wire protocol 1.0 that JSON Schema cannot express. They run on
// results whose shape was already validated and compare them with the request, so a
// client never accepts a result that belongs to another run, session or corpus.

const (
	defaultRetrievalLimit   = 8
	defaultMaxContextBytes  = 65_536
	maxToolExecutionsPerRun = 2048
)

// checkResult verifies a run result against the request (and the stream's runId, when
// the result arrived in a run.completed event).
func checkResult(r *RunResult, req *RunRequest, streamRunID string) error {
	if streamRunID != "" && r.RunID != streamRunID {
		return fmt.Errorf("result.runId %q differs from the stream's runId %q", r.RunID, streamRunID)
	}
	if r.Provider != req.Provider || r.Model != req.Model {
		return fmt.Errorf("result is for %s/%s, not the requested %s/%s", r.Provider, r.Model, req.Provider, req.Model)
	}
	if err := checkResultSession(r, req.Session); err != nil {
		return err
	}
	sourceIDs, err := checkSources(r.Sources)
	if err != nil {
		return err
	}
	for _, a := range r.Artifacts {
		if a.Name == "." || a.Name == ".." {
			return fmt.Errorf("artifact name %q is not allowed", a.Name)
		}
		for _, id := range a.SourceIDs {
			if !sourceIDs[id] {
				return fmt.Errorf("artifact cites source %q that is not in result.sources", id)
			}
		}
	}
	switch {
	case req.Retrieval == nil && r.Retrieval != nil:
		return errors.New("result.retrieval is present but the request asked for no retrieval")
	case req.Retrieval != nil && r.Retrieval == nil:
		return errors.New("result.retrieval is missing for a retrieval request")
	case r.Retrieval != nil:
		return checkRetrieval(r.Retrieval, req.Retrieval, r.Sources)
	}
	return nil
}

func checkResultSession(r *RunResult, binding *SessionBinding) error {
	switch {
	case binding == nil && r.Session != nil:
		return errors.New("result.session is present but the request named no session")
	case binding != nil && r.Session == nil:
		return errors.New("result.session is missing for a session run")
	case binding == nil:
		return nil
	}
	s := r.Session
	if err := checkSessionInfo(s); err != nil {
		return err
	}
	switch {
	case s.ID != strings.ToLower(binding.ID):
		return fmt.Errorf("result.session.id %q is not the requested session", s.ID)
	case s.Revision != binding.Revision+1:
		return fmt.Errorf("result.session.revision %d must be %d", s.Revision, binding.Revision+1)
	case s.Provider != r.Provider || s.Model != r.Model:
		return errors.New("result.session provider/model differ from the result's")
	case s.State != "ready":
		return fmt.Errorf("result.session.state %q must be ready", s.State)
	}
	return nil
}

// checkSessionInfo checks the timestamps of a session: updatedAt ≥ createdAt, a ready
// session expires after its last update, a running one has no expiry yet.
func checkSessionInfo(s *SessionInfo) error {
	created, err1 := time.Parse(time.RFC3339Nano, s.CreatedAt)
	updated, err2 := time.Parse(time.RFC3339Nano, s.UpdatedAt)
	if err1 != nil || err2 != nil {
		return errors.New("session timestamps are invalid")
	}
	if updated.Before(created) {
		return errors.New("session.updatedAt is before createdAt")
	}
	switch {
	case s.State == "ready" && s.ExpiresAt == "":
		return errors.New("a ready session must have expiresAt")
	case s.State == "running" && s.ExpiresAt != "":
		return errors.New("a running session must not have expiresAt")
	case s.ExpiresAt != "":
		expires, err := time.Parse(time.RFC3339Nano, s.ExpiresAt)
		if err != nil || !expires.After(updated) {
			return errors.New("session.expiresAt must be after updatedAt")
		}
	}
	return nil
}

// checkSources checks result.sources and returns the set of their ids.
func checkSources(sources []ContextManifest) (map[string]bool, error) {
	ids := map[string]bool{}
	for i, s := range sources {
		if ids[s.ID] {
			return nil, fmt.Errorf("result.sources[%d]: duplicate source id %q", i, s.ID)
		}
		ids[s.ID] = true
		if err := checkContextSource(&s.ContextSource); err != nil {
			return nil, fmt.Errorf("result.sources[%d]: %v", i, err)
		}
	}
	return ids, nil
}

func checkContextSource(s *ContextSource) error {
	if s.URI != "" {
		u, err := url.Parse(s.URI)
		if err != nil || u.User != nil {
			return errors.New("uri must be a valid URL without credentials")
		}
	}
	if l := s.Location; l != nil {
		if l.PageEnd != 0 && (l.Page == 0 || l.PageEnd < l.Page) {
			return errors.New("location.pageEnd needs a page and must not precede it")
		}
		if l.EndLine != 0 && (l.StartLine == 0 || l.EndLine < l.StartLine) {
			return errors.New("location.endLine needs a startLine and must not precede it")
		}
	}
	return nil
}

func checkRetrieval(r *RetrievalResult, opts *RetrievalOptions, sources []ContextManifest) error {
	if r.Corpus != opts.Corpus {
		return fmt.Errorf("retrieval corpus %q is not the requested %q", r.Corpus, opts.Corpus)
	}
	limit, maxBytes, minScore := defaultRetrievalLimit, defaultMaxContextBytes, -1.0
	if opts.Limit > 0 {
		limit = opts.Limit
	}
	if opts.MaxContextBytes > 0 {
		maxBytes = opts.MaxContextBytes
	}
	if opts.MinScore != nil {
		minScore = *opts.MinScore
	}
	if len(r.Hits) > limit {
		return fmt.Errorf("retrieval returned %d hits, more than the limit %d", len(r.Hits), limit)
	}
	selected := map[string]bool{}
	for _, id := range opts.SourceIDs {
		selected[id] = true
	}
	retrievalSources := map[string]ContextManifest{}
	for _, s := range sources {
		if s.Origin == "retrieval" {
			retrievalSources[s.ID] = s
		}
	}
	if len(retrievalSources) != len(r.Hits) {
		return errors.New("result.sources must hold exactly one retrieval manifest per hit")
	}
	chunks := map[string]bool{}
	total := 0
	for i, h := range r.Hits {
		path := fmt.Sprintf("retrieval.hits[%d]", i)
		if chunks[h.ChunkID] {
			return fmt.Errorf("%s: duplicate chunkId %q", path, h.ChunkID)
		}
		chunks[h.ChunkID] = true
		if len(selected) > 0 && !selected[h.Source.ID] {
			return fmt.Errorf("%s: source %q was not selected", path, h.Source.ID)
		}
		if h.Score < minScore {
			return fmt.Errorf("%s: score %g is below minScore %g", path, h.Score, minScore)
		}
		if err := checkContextSource(&h.Source); err != nil {
			return fmt.Errorf("%s.source: %v", path, err)
		}
		if h.Ingestion != nil {
			if err := checkIngestion(h.Ingestion); err != nil {
				return fmt.Errorf("%s.ingestion: %v", path, err)
			}
		}
		total += len(h.Text)
		m, ok := retrievalSources[h.ChunkID]
		if !ok || m.Revision != h.Source.Revision || m.Location == nil ||
			m.Location.DocumentID != h.Source.ID || m.Bytes != int64(len(h.Text)) {
			return fmt.Errorf("%s: no matching retrieval manifest in result.sources", path)
		}
	}
	if total > maxBytes {
		return fmt.Errorf("retrieval text is %d bytes, more than maxContextBytes %d", total, maxBytes)
	}
	return nil
}

// checkIngestion checks that a manifest's coverage is consistent with its format.
func checkIngestion(m *IngestionManifest) error {
	if m.IndexedTextBytes < 1 || m.IndexedTextBytes > m.ExtractedTextBytes {
		return errors.New("indexedTextBytes must be between 1 and extractedTextBytes")
	}
	if m.Format != "pdf" && (m.Pages != nil || m.OCRExtractor != nil) {
		return errors.New("only pdf manifests carry pages or ocrExtractor")
	}
	if m.Format != "email" && m.Messages != nil {
		return errors.New("only email manifests carry messages")
	}
	switch m.Format {
	case "pdf":
		p := m.Pages
		if p == nil {
			return errors.New("a pdf manifest needs pages")
		}
		if err := checkPageList(p.OCR, p.Total); err != nil {
			return fmt.Errorf("pages.ocr: %v", err)
		}
		if err := checkPageList(p.Empty, p.Total); err != nil {
			return fmt.Errorf("pages.empty: %v", err)
		}
		if len(p.Empty) >= p.Total || m.Chunks < p.Total-len(p.Empty) {
			return errors.New("pages coverage is inconsistent with chunks")
		}
		if (len(p.OCR) > 0) != (m.OCRExtractor != nil) {
			return errors.New("ocrExtractor must be present exactly when pages were OCRed")
		}
	case "email":
		msgs := m.Messages
		if msgs == nil {
			return errors.New("an email manifest needs messages")
		}
		if msgs.Empty >= msgs.Total || m.Chunks < msgs.Total-msgs.Empty {
			return errors.New("messages coverage is inconsistent with chunks")
		}
	}
	return nil
}

func checkPageList(pages []int, total int) error {
	seen := map[int]bool{}
	for _, p := range pages {
		if p > total || seen[p] {
			return fmt.Errorf("page %d is out of range or repeated", p)
		}
		seen[p] = true
	}
	return nil
}
