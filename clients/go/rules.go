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

// checkSessionInfo checks the timestamps of a session: updatedAt ≥ createdAt, a running
// session has no expiry yet, any other expires after its last update.
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
	case s.State == "running" && s.ExpiresAt != "":
		return errors.New("a running session must not have expiresAt")
	case s.State == "running":
		return nil
	case s.ExpiresAt == "":
		return fmt.Errorf("a %s session must have expiresAt", s.State)
	default:
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
		if l.Page != 0 && l.PageEnd != 0 && l.PageEnd < l.Page {
			return errors.New("location.pageEnd precedes page")
		}
		if l.StartLine != 0 && l.EndLine != 0 && l.EndLine < l.StartLine {
			return errors.New("location.endLine precedes startLine")
		}
	}
	return nil
}

func checkRetrieval(r *RetrievalResult, opts *RetrievalOptions, sources []ContextManifest) error {
	scope := RetrievalSearch{Corpus: opts.Corpus, SourceIDs: opts.SourceIDs, Limit: opts.Limit, MaxContextBytes: opts.MaxContextBytes, MinScore: opts.MinScore}
	if err := checkSearch(r, &scope); err != nil {
		return fmt.Errorf("retrieval: %v", err)
	}
	// Every hit is cited by exactly one retrieval manifest that describes it.
	manifests := map[string]ContextManifest{}
	retrieved := 0
	for _, s := range sources {
		manifests[s.ID] = s
		if s.Origin == "retrieval" {
			retrieved++
		}
	}
	if retrieved != len(r.Hits) {
		return fmt.Errorf("result.sources holds %d retrieval manifests for %d hits", retrieved, len(r.Hits))
	}
	for i, h := range r.Hits {
		path := fmt.Sprintf("retrieval.hits[%d]", i)
		m, ok := manifests[h.ChunkID]
		switch {
		case !ok || m.Origin != "retrieval":
			return fmt.Errorf("%s: no retrieval manifest in result.sources", path)
		case m.Revision != h.Source.Revision:
			return fmt.Errorf("%s: the manifest has revision %q, the hit %q", path, m.Revision, h.Source.Revision)
		case m.Location == nil || m.Location.DocumentID != h.Source.ID:
			return fmt.Errorf("%s: the manifest's location.documentId is not the hit's source %q", path, h.Source.ID)
		case m.Bytes != int64(len(h.Text)):
			return fmt.Errorf("%s: the manifest counts %d bytes, the hit text %d", path, m.Bytes, len(h.Text))
		}
	}
	return nil
}

// checkIngestion checks that a manifest's coverage is consistent with its format.
func checkIngestion(m *IngestionManifest) error {
	if m.IndexedTextBytes > m.ExtractedTextBytes {
		return errors.New("indexedTextBytes exceeds extractedTextBytes")
	}
	if m.Pages != nil && m.Format != "pdf" {
		return fmt.Errorf("page coverage for a %s document", m.Format)
	}
	if m.Messages != nil && m.Format != "email" {
		return fmt.Errorf("message coverage for a %s document", m.Format)
	}
	if p := m.Pages; p != nil {
		ocr, empty := pageSet(p.OCR), pageSet(p.Empty)
		switch {
		case len(ocr) != len(p.OCR) || len(empty) != len(p.Empty):
			return errors.New("pages lists a page twice")
		case maxPage(p.OCR) > p.Total || maxPage(p.Empty) > p.Total:
			return errors.New("pages names a page beyond the total")
		case overlaps(ocr, empty):
			return errors.New("pages lists a page as both OCR and empty")
		case len(p.OCR) > 0 && m.OCRExtractor == nil:
			return errors.New("OCR was used without naming the OCR extractor")
		case len(p.Empty) >= p.Total:
			return errors.New("no page has text")
		case m.Chunks < p.Total-len(p.Empty):
			return errors.New("fewer chunks than pages with text")
		}
	}
	if msgs := m.Messages; msgs != nil && msgs.Empty >= msgs.Total {
		return errors.New("no message has text")
	}
	return nil
}

func pageSet(pages []int) map[int]bool {
	set := map[int]bool{}
	for _, p := range pages {
		set[p] = true
	}
	return set
}

func maxPage(pages []int) int {
	highest := 0
	for _, p := range pages {
		highest = max(highest, p)
	}
	return highest
}

func overlaps(a, b map[int]bool) bool {
	for p := range a {
		if b[p] {
			return true
		}
	}
	return false
}

// Job states.
const (
	JobQueued      = "queued"
	JobRunning     = "running"
	JobCompleted   = "completed"
	JobFailed      = "failed"
	JobCancelled   = "cancelled"
	JobInterrupted = "interrupted"
)

// defaultJobEventsLimit is the page size the host uses when the request names none.
const defaultJobEventsLimit = 100

// JobTerminal reports whether a job state is final.
func JobTerminal(state string) bool {
	switch state {
	case JobCompleted, JobFailed, JobCancelled, JobInterrupted:
		return true
	}
	return false
}

// checkSessionCreated checks a create receipt: the session echoes the request (provider,
// model, mode, instructions, history) at revision 0 and is ready.
func checkSessionCreated(s *SessionSnapshot, req *SessionCreate) error {
	if err := checkSessionSnapshot(s, ""); err != nil {
		return err
	}
	info := &s.Session
	switch {
	case info.Provider != req.Provider || info.Model != req.Model:
		return fmt.Errorf("the session is for %s/%s, not the requested %s/%s", info.Provider, info.Model, req.Provider, req.Model)
	case info.Mode != req.Mode:
		return fmt.Errorf("the session mode %q is not the requested %q", info.Mode, req.Mode)
	case info.Revision != 0:
		return fmt.Errorf("a new session has revision %d, not 0", info.Revision)
	case info.State != "ready":
		return fmt.Errorf("a new session is %s, not ready", info.State)
	case s.Instructions != req.Instructions:
		return errors.New("the session instructions differ from the requested ones")
	case len(s.History) != len(req.History):
		return fmt.Errorf("the session has %d history messages, the request %d", len(s.History), len(req.History))
	}
	for i, m := range s.History {
		if m.Role != req.History[i].Role || m.Content != req.History[i].Content {
			return fmt.Errorf("session history[%d] differs from the requested one", i)
		}
	}
	return nil
}

// checkSessionSnapshot checks a snapshot's session timestamps and, when id is set, that
// it is the requested session.
func checkSessionSnapshot(s *SessionSnapshot, id string) error {
	if id != "" && !strings.EqualFold(s.Session.ID, id) {
		return fmt.Errorf("the host answered for session %q, not %q", s.Session.ID, id)
	}
	return checkSessionInfo(&s.Session)
}

// defaultListLimit is how many a list holds when the request names no limit.
const defaultListLimit = 20

// checkListing checks a list: at most limit (0: the default), each id once, most recently
// updated first (host timestamps are fixed-width UTC, so text order is time order).
func checkListing(ids, updated []string, limit int, what string) error {
	if limit == 0 {
		limit = defaultListLimit
	}
	if len(ids) > limit {
		return fmt.Errorf("the %s list holds %d, more than the limit of %d", what, len(ids), limit)
	}
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		if seen[id] {
			return fmt.Errorf("the %s list names %q twice", what, id)
		}
		seen[id] = true
		if i > 0 && updated[i] > updated[i-1] {
			return fmt.Errorf("the %s list is not most recently updated first", what)
		}
	}
	return nil
}

func checkSessionList(sessions []SessionInfo, limit int) error {
	ids, updated := make([]string, len(sessions)), make([]string, len(sessions))
	for i := range sessions {
		ids[i], updated[i] = sessions[i].ID, sessions[i].UpdatedAt
		if err := checkSessionInfo(&sessions[i]); err != nil {
			return err
		}
	}
	return checkListing(ids, updated, limit, "session")
}

func checkJobList(jobs []JobInfo, req JobListRequest) error {
	ids, updated := make([]string, len(jobs)), make([]string, len(jobs))
	for i := range jobs {
		ids[i], updated[i] = jobs[i].ID, jobs[i].UpdatedAt
		if req.State != "" && jobs[i].State != req.State {
			return fmt.Errorf("the job list holds a %s job, not only %s ones", jobs[i].State, req.State)
		}
		if err := checkJobInfo(&jobs[i]); err != nil {
			return err
		}
	}
	return checkListing(ids, updated, req.Limit, "job")
}

// checkJobInfo checks the invariants of a job's state: updatedAt ≥ createdAt; a finished
// job, and only a finished one, has expiresAt, later than updatedAt; a queued job has no
// events; a finished one has at least run.started and its terminal event.
func checkJobInfo(j *JobInfo) error {
	created, err1 := time.Parse(time.RFC3339Nano, j.CreatedAt)
	updated, err2 := time.Parse(time.RFC3339Nano, j.UpdatedAt)
	if err1 != nil || err2 != nil {
		return errors.New("job timestamps are invalid")
	}
	terminal := JobTerminal(j.State)
	switch {
	case updated.Before(created):
		return errors.New("job.updatedAt is before createdAt")
	case terminal && j.ExpiresAt == "":
		return fmt.Errorf("a %s job must have expiresAt", j.State)
	case !terminal && j.ExpiresAt != "":
		return fmt.Errorf("a %s job must not have expiresAt", j.State)
	case j.State == JobQueued && j.Cursor != 0:
		return fmt.Errorf("a queued job has cursor %d, not 0", j.Cursor)
	case terminal && j.Cursor < 2:
		return fmt.Errorf("a %s job has cursor %d, fewer than 2 events", j.State, j.Cursor)
	}
	if terminal {
		expires, err := time.Parse(time.RFC3339Nano, j.ExpiresAt)
		if err != nil || !expires.After(updated) {
			return errors.New("job.expiresAt must be after updatedAt")
		}
	}
	return nil
}

// checkJobPage checks a page of a job's events as the continuation of events 1..after.
func checkJobPage(p *JobEventPage, req *JobEventsRequest) error {
	if err := checkJobInfo(&p.Job); err != nil {
		return err
	}
	if p.Job.ID != req.ID {
		return fmt.Errorf("the page is for job %q, not %q", p.Job.ID, req.ID)
	}
	limit := req.Limit
	if limit <= 0 || limit > defaultJobEventsLimit {
		limit = defaultJobEventsLimit
	}
	if len(p.Events) > limit {
		return fmt.Errorf("the page holds %d events, more than the limit %d", len(p.Events), limit)
	}
	last := req.After
	for i := range p.Events {
		if err := checkJobEvent(&p.Job, &p.Events[i], last); err != nil {
			return fmt.Errorf("events[%d]: %v", i, err)
		}
		last = p.Events[i].Sequence
	}
	switch {
	case p.NextCursor != last:
		return fmt.Errorf("nextCursor %d is not the last sequence %d", p.NextCursor, last)
	case p.NextCursor > p.Job.Cursor:
		return fmt.Errorf("nextCursor %d is beyond the job's cursor %d", p.NextCursor, p.Job.Cursor)
	case p.HasMore != (p.NextCursor < p.Job.Cursor):
		return fmt.Errorf("hasMore %v contradicts nextCursor %d and the job's cursor %d", p.HasMore, p.NextCursor, p.Job.Cursor)
	case p.HasMore && len(p.Events) == 0:
		return errors.New("an empty page says hasMore")
	}
	return nil
}

// checkJobEvent checks one committed event of job j that follows sequence previous.
// Jobs never negotiate approvals or application tools, and every type is known: an
// unknown event is refused even when it is marked optional.
func checkJobEvent(j *JobInfo, ev *Event, previous int64) error {
	if err := checkJobEventOrder(j, ev, previous); err != nil {
		return err
	}
	if ev.Sequence > j.Cursor {
		return fmt.Errorf("sequence %d is beyond the job's cursor %d", ev.Sequence, j.Cursor)
	}
	atEnd := ev.Sequence == j.Cursor && JobTerminal(j.State)
	if !ev.Terminal() {
		if atEnd {
			return fmt.Errorf("the last event of a %s job is %s, not a terminal event", j.State, ev.Type)
		}
		return nil
	}
	if !atEnd {
		return fmt.Errorf("%s at sequence %d of a %s job with cursor %d", ev.Type, ev.Sequence, j.State, j.Cursor)
	}
	return checkJobTerminal(j, ev)
}

// checkJobEventOrder holds the rules every event of job j obeys, in a page or in the
// live stream: a known type, the job's run, the sequence after previous, run.started
// exactly at 1 naming the job's provider and model, and no approval or application-tool
// event (jobs negotiate neither).
func checkJobEventOrder(j *JobInfo, ev *Event, previous int64) error {
	if _, known := eventRules[ev.Type]; !known {
		return fmt.Errorf("event type %q is not a job event", ev.Type)
	}
	switch {
	case ev.RunID != j.RunID:
		return fmt.Errorf("runId %q is not the job's run %q", ev.RunID, j.RunID)
	case ev.Sequence != previous+1:
		return fmt.Errorf("sequence %d does not follow %d", ev.Sequence, previous)
	case (ev.Sequence == 1) != (ev.Type == EventRunStarted):
		return fmt.Errorf("%s at sequence %d: run.started comes exactly at sequence 1", ev.Type, ev.Sequence)
	case ev.Type == EventRunStarted && (ev.Provider != j.Provider || ev.Model != j.Model):
		return fmt.Errorf("run.started names %s/%s, the job %s/%s", ev.Provider, ev.Model, j.Provider, j.Model)
	case ev.Type == EventToolExecutionRequested || ev.Type == EventApprovalRequested || ev.Type == EventApprovalResolved:
		return fmt.Errorf("%s in a job (jobs negotiate no approvals or application tools)", ev.Type)
	}
	return nil
}

// checkJobResult checks that a job's run.completed result is the job's run (jobs have
// no sessions).
func checkJobResult(j *JobInfo, r *RunResult) error {
	switch {
	case r.RunID != j.RunID || r.Provider != j.Provider || r.Model != j.Model:
		return errors.New("the run.completed result is not the job's run, provider and model")
	case r.Session != nil:
		return errors.New("a job result has no session")
	}
	_, err := checkSources(r.Sources)
	return err
}

// checkJobTerminal checks that a job's terminal event agrees with its state (and, for
// run.completed, that the result is the job's run; jobs have no sessions).
func checkJobTerminal(j *JobInfo, ev *Event) error {
	switch ev.Type {
	case EventRunCompleted:
		if j.State != JobCompleted {
			return fmt.Errorf("run.completed ends a %s job", j.State)
		}
		return checkJobResult(j, ev.Result)
	case EventRunCancelled:
		if j.State != JobCancelled {
			return fmt.Errorf("run.cancelled ends a %s job", j.State)
		}
	case EventRunFailed:
		switch {
		case j.State != JobFailed && j.State != JobInterrupted:
			return fmt.Errorf("run.failed ends a %s job", j.State)
		case j.State == JobInterrupted && ev.Error.Outcome != OutcomeUncertain:
			return errors.New("an interrupted job's run.failed must have outcome uncertain")
		}
	}
	return nil
}
