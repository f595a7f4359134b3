package conformance_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	agenticdriver "github.com/agenticdriver/agenticdriver/clients/go"
)

const (
	hangScript     = `{"mockScript":{"steps":[{"actions":[{"hang":true}]}]}}`
	quietScript    = `{"mockScript":{"steps":[{"actions":[{"stallMs":80},{"text":"quiet"}]}]}}`
	progressScript = `{"mockScript":{"steps":[{"actions":[{"progress":16,"everyMs":20},{"text":"done"}]}]}}`
	lateScript     = `{"mockScript":{"steps":[{"actions":[{"stallMs":400},{"text":"late"}]}]}}`
	jobScript      = `{"mockScript":{"steps":[{"actions":[{"text":"one "},{"stallMs":150},{"text":"two "},{"stallMs":150},{"text":"three"}]}]}}`
)

type liveScenario struct {
	name      string
	httpsOnly bool
	run       func(ctx context.Context, h *harness) error
}

var liveScenarios = []liveScenario{
	{name: "protocol", run: liveProtocol},
	{name: "providers", run: liveProviders},
	{name: "run", run: liveRun},
	{name: "stream", run: liveStream},
	{name: "unauthorized", run: liveUnauthorized},
	{name: "forbidden", run: liveForbidden},
	{name: "quiet", run: liveQuiet},
	{name: "idle-timeout", run: liveIdleTimeout},
	{name: "progress", run: liveProgress},
	{name: "cancel", run: liveCancel},
	{name: "idempotency", run: liveIdempotency},
	{name: "job-tail", run: liveJobTail},
	{name: "run-read-back", run: liveRunReadBack},
	{name: "run-follow", run: liveRunFollow},
	{name: "session", run: liveSession},
	{name: "retrieval", run: liveRetrieval},
	{name: "tls-untrusted", httpsOnly: true, run: func(ctx context.Context, h *harness) error { return expectTLSFailure(ctx, h, h.untrustedURL) }},
	{name: "tls-mismatch", httpsOnly: true, run: func(ctx context.Context, h *harness) error { return expectTLSFailure(ctx, h, h.mismatchURL) }},
}

func (h *harness) runLive(t *testing.T, r *report) {
	for _, s := range liveScenarios {
		if s.httpsOnly && h.transport != "https" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
		r.record(t, "live:"+s.name, s.run(ctx, h))
		cancel()
	}
}

func demoRequest(input string) agenticdriver.RunRequest {
	return agenticdriver.RunRequest{Provider: "mock", Model: "demo", Input: input}
}

func liveProtocol(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	info, err := client.Protocol(ctx)
	switch {
	case err != nil:
		return err
	case info.Version != "1.0" || !slices.Contains(info.SupportedVersions, "1.0"):
		return fmt.Errorf("unexpected versions %q %v", info.Version, info.SupportedVersions)
	case !slices.Contains(info.Features, "json-results") || !slices.Contains(info.Features, "event-stream"):
		return fmt.Errorf("features %v lack json-results or event-stream", info.Features)
	}
	return nil
}

func liveProviders(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	providers, err := client.Providers(ctx, false)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(providers, func(p agenticdriver.Provider) bool { return p.ID == "mock" })
	if i < 0 || !providers[i].Capabilities["tools"] {
		return fmt.Errorf("main token does not see mock with tools: %+v", providers)
	}
	restricted, err := h.client(h.liveURL, h.restrictedToken)
	if err != nil {
		return err
	}
	if providers, err = restricted.Providers(ctx, true); err != nil || len(providers) != 0 {
		return fmt.Errorf("restricted token: providers %+v, error %v", providers, err)
	}
	return nil
}

func liveRun(ctx context.Context, h *harness) error {
	return expectRunText(ctx, h, demoRequest("Hello"), "Hello")
}

func expectRunText(ctx context.Context, h *harness, req agenticdriver.RunRequest, want string) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	result, err := client.Run(ctx, req)
	if err != nil {
		return err
	}
	if result.Text != want {
		return fmt.Errorf("text %q, want %q", result.Text, want)
	}
	return nil
}

func liveStream(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	var events []agenticdriver.Event
	if err := each(client.Stream(ctx, demoRequest("Hello")), func(ev agenticdriver.Event) error {
		events = append(events, ev)
		return nil
	}); err != nil {
		return err
	}
	for i, ev := range events {
		if ev.Sequence != int64(i+1) {
			return fmt.Errorf("event %d has sequence %d", i, ev.Sequence)
		}
	}
	if len(events) < 2 || events[0].Type != agenticdriver.EventRunStarted || events[len(events)-1].Type != agenticdriver.EventRunCompleted {
		return fmt.Errorf("unexpected event order: %d events", len(events))
	}
	return nil
}

func expectCode(err error, code string) error {
	var de *agenticdriver.DriverError
	if errors.As(err, &de) && de.Code == code {
		return nil
	}
	return fmt.Errorf("expected %s, got %v", code, err)
}

func liveUnauthorized(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, "wrong-token-wrong-token-wrong-token")
	if err != nil {
		return err
	}
	_, err = client.Run(ctx, demoRequest("Hello"))
	return expectCode(err, "UNAUTHORIZED")
}

func liveForbidden(ctx context.Context, h *harness) error {
	restricted, err := h.client(h.liveURL, h.restrictedToken)
	if err != nil {
		return err
	}
	if _, err := restricted.Run(ctx, demoRequest("Hello")); expectCode(err, "FORBIDDEN") != nil {
		return fmt.Errorf("restricted token: %v", expectCode(err, "FORBIDDEN"))
	}
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	req := demoRequest("Hello")
	req.Tools = []string{"nope"}
	_, err = client.Run(ctx, req)
	return expectCode(err, "FORBIDDEN")
}

func liveQuiet(ctx context.Context, h *harness) error {
	return expectRunText(ctx, h, demoRequest(quietScript), "quiet")
}

func liveIdleTimeout(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	req := demoRequest(hangScript)
	req.IdleTimeoutMs = 30
	_, err = client.Run(ctx, req)
	return expectCode(err, "IDLE_TIMEOUT")
}

func liveProgress(ctx context.Context, h *harness) error {
	req := demoRequest(progressScript)
	req.IdleTimeoutMs = 150
	return expectRunText(ctx, h, req, "done")
}

func liveCancel(ctx context.Context, h *harness) error {
	before, err := h.liveCancelled(ctx)
	if err != nil {
		return err
	}
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	errStop := errors.New("stop after run.started")
	err = each(client.Stream(ctx, demoRequest(hangScript)), func(ev agenticdriver.Event) error {
		if ev.Type == agenticdriver.EventRunStarted {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		return fmt.Errorf("stream ended with %v before run.started", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		after, err := h.liveCancelled(ctx)
		if err != nil {
			return err
		}
		if after > before {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the live host did not cancel the abandoned run within 5 s")
}

// freshKey is a key no earlier mode, transport or harness run used, so each run of the
// idempotency scenario starts fresh.
func freshKey() string {
	return "conformance-" + rand.Text()
}

// expectError checks a typed error's code and retryable flag.
func expectError(err error, code string, retryable bool) error {
	var de *agenticdriver.DriverError
	if errors.As(err, &de) && de.Code == code && de.Retryable == retryable {
		return nil
	}
	return fmt.Errorf("expected %s with retryable %v, got %v (%#v)", code, retryable, err, de)
}

// liveIdempotency: the same key and request replay the recorded run (JSON and SSE), a
// different request under the key conflicts, and a duplicate while the first still runs
// is refused as in progress.
func liveIdempotency(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	req := demoRequest("Hello")
	req.IdempotencyKey = freshKey()
	first, err := client.Run(ctx, req)
	if err != nil {
		return err
	}
	again, err := client.Run(ctx, req)
	switch {
	case err != nil:
		return fmt.Errorf("the repeat: %w", err)
	case first.Text != "Hello" || again.Text != "Hello":
		return fmt.Errorf("texts %q, %q", first.Text, again.Text)
	case again.RunID != first.RunID:
		return fmt.Errorf("the repeat has runId %s, the first %s", again.RunID, first.RunID)
	}
	var events []agenticdriver.Event
	if err := each(client.Stream(ctx, req), func(ev agenticdriver.Event) error {
		events = append(events, ev)
		return nil
	}); err != nil {
		return fmt.Errorf("streamed replay: %w", err)
	}
	for i, ev := range events {
		if ev.Sequence != int64(i+1) || ev.RunID != first.RunID {
			return fmt.Errorf("streamed replay: event %d has sequence %d, runId %s", i, ev.Sequence, ev.RunID)
		}
	}
	last := len(events) - 1
	if last < 1 || events[0].Type != agenticdriver.EventRunStarted || events[last].Type != agenticdriver.EventRunCompleted || events[last].Result.Text != "Hello" {
		return fmt.Errorf("streamed replay: unexpected events %+v", events)
	}
	other := req
	other.Input = "Other"
	if _, err := client.Run(ctx, other); expectError(err, "IDEMPOTENCY_CONFLICT", false) != nil {
		return fmt.Errorf("a different request under the key: %w", expectError(err, "IDEMPOTENCY_CONFLICT", false))
	}

	slow := demoRequest(lateScript)
	slow.IdempotencyKey = freshKey()
	type outcome struct {
		result *agenticdriver.RunResult
		err    error
	}
	running := make(chan outcome, 1)
	go func() {
		result, err := client.Run(ctx, slow)
		running <- outcome{result, err}
	}()
	time.Sleep(100 * time.Millisecond)
	_, busy := client.Run(ctx, slow)
	late := <-running
	switch {
	case expectError(busy, "OPERATION_IN_PROGRESS", true) != nil:
		return fmt.Errorf("a duplicate while running: %w", expectError(busy, "OPERATION_IN_PROGRESS", true))
	case late.err != nil:
		return fmt.Errorf("the first run: %w", late.err)
	case late.result.Text != "late":
		return fmt.Errorf("the first run's text %q", late.result.Text)
	}
	retried, err := client.Run(ctx, slow)
	if err != nil {
		return fmt.Errorf("the retry: %w", err)
	}
	if retried.RunID != late.result.RunID || retried.Text != "late" {
		return fmt.Errorf("the retry got %s %q, the first %s", retried.RunID, retried.Text, late.result.RunID)
	}
	return nil
}

// tailEvents tails a job after `after`; leaving the loop after `limit` events (0: no
// limit) closes the connection.
func tailEvents(ctx context.Context, client *agenticdriver.Client, id string, after int64, limit int) ([]agenticdriver.Event, error) {
	return collectLive(client.TailJob(ctx, id, agenticdriver.TailOptions{After: after}), limit)
}

// collectLive reads a live tail or follow; stopping after limit events (0: none) closes it.
func collectLive(tail iter.Seq2[agenticdriver.Event, error], limit int) ([]agenticdriver.Event, error) {
	var events []agenticdriver.Event
	for ev, err := range tail {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
		if limit > 0 && len(events) >= limit {
			break
		}
	}
	return events, nil
}

// liveRunReadBack: an attached run is read back by its run id and its events paged;
// another subject's token gets RUN_NOT_FOUND.
func liveRunReadBack(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	result, err := client.Run(ctx, demoRequest("Hello"))
	if err != nil {
		return err
	}
	read, err := client.ReadRun(ctx, result.RunID)
	if err != nil {
		return fmt.Errorf("ReadRun: %w", err)
	}
	if read.Mode != "attached" || read.State != "completed" || read.Result == nil || read.Result.Text != "Hello" || read.Result.RunID != result.RunID {
		return fmt.Errorf("ReadRun: %s %s %+v", read.Mode, read.State, read.Result)
	}
	page, err := client.RunEvents(ctx, agenticdriver.RunEventsRequest{RunID: result.RunID})
	if err != nil {
		return fmt.Errorf("RunEvents: %w", err)
	}
	if int64(len(page.Events)) != read.Cursor || page.HasMore {
		return fmt.Errorf("RunEvents: %d events, cursor %d, hasMore %v", len(page.Events), read.Cursor, page.HasMore)
	}
	for i, ev := range page.Events {
		if ev.Sequence != int64(i+1) {
			return fmt.Errorf("RunEvents: event %d has sequence %d", i, ev.Sequence)
		}
	}
	if last := page.Events[len(page.Events)-1]; last.Type != agenticdriver.EventRunCompleted || last.Result == nil || last.Result.Text != "Hello" {
		return fmt.Errorf("RunEvents: the last event %s", last.Raw)
	}
	restricted, err := h.client(h.liveURL, h.restrictedToken)
	if err != nil {
		return err
	}
	_, err = restricted.ReadRun(ctx, result.RunID)
	if err := expectCode(err, "RUN_NOT_FOUND"); err != nil {
		return fmt.Errorf("another subject: %v", err)
	}
	return nil
}

// liveRunFollow: a background run is followed by its run id for three events, the
// connection is dropped, and a second follow from the last sequence delivers the rest.
func liveRunFollow(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	job, err := client.SubmitJob(ctx, agenticdriver.JobSubmit{Key: freshKey(), Request: demoRequest(jobScript)})
	if err != nil {
		return err
	}
	first, err := collectLive(client.FollowRun(ctx, job.RunID, agenticdriver.TailOptions{}), 3)
	if err != nil || len(first) != 3 {
		return fmt.Errorf("the first follow: %d events, %v", len(first), err)
	}
	rest, err := collectLive(client.FollowRun(ctx, job.RunID, agenticdriver.TailOptions{After: first[2].Sequence}), 0)
	if err != nil {
		return fmt.Errorf("the second follow: %w", err)
	}
	events := append(first, rest...)
	for i, ev := range events {
		if ev.Sequence != int64(i+1) {
			return fmt.Errorf("event %d has sequence %d", i, ev.Sequence)
		}
	}
	if last := events[len(events)-1]; last.Type != agenticdriver.EventRunCompleted || last.Result == nil || last.Result.Text != "one two three" {
		return fmt.Errorf("the last event: %s %s", last.Type, last.Raw)
	}
	read, err := client.ReadRun(ctx, job.RunID)
	if err != nil {
		return fmt.Errorf("ReadRun: %w", err)
	}
	if read.Mode != "background" || read.JobID != job.ID || read.State != "completed" || read.Cursor != int64(len(events)) {
		return fmt.Errorf("ReadRun: %s job %s, %s at cursor %d, %d events followed", read.Mode, read.JobID, read.State, read.Cursor, len(events))
	}
	return nil
}

// liveJobTail: a job submitted by key is tailed for three events, the connection is
// dropped, and a second tail from the last sequence delivers the rest exactly once.
func liveJobTail(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	submission := agenticdriver.JobSubmit{Key: freshKey(), Request: demoRequest(jobScript)}
	job, err := client.SubmitJob(ctx, submission)
	if err != nil {
		return err
	}
	first, err := tailEvents(ctx, client, job.ID, 0, 3)
	if err != nil {
		return fmt.Errorf("the first tail: %w", err)
	}
	if len(first) != 3 {
		return fmt.Errorf("the first tail delivered %d events", len(first))
	}
	rest, err := tailEvents(ctx, client, job.ID, first[2].Sequence, 0)
	if err != nil {
		return fmt.Errorf("the second tail: %w", err)
	}
	events := append(first, rest...)
	for i, ev := range events {
		if ev.Sequence != int64(i+1) {
			return fmt.Errorf("event %d has sequence %d", i, ev.Sequence)
		}
	}
	last := events[len(events)-1]
	if last.Type != agenticdriver.EventRunCompleted || last.Result == nil || last.Result.Text != "one two three" {
		return fmt.Errorf("the last event: %s %s", last.Type, last.Raw)
	}
	read, err := client.ReadJob(ctx, job.ID)
	if err != nil {
		return fmt.Errorf("ReadJob: %w", err)
	}
	if read.State != "completed" || read.Cursor != int64(len(events)) {
		return fmt.Errorf("ReadJob: %s at cursor %d, %d events tailed", read.State, read.Cursor, len(events))
	}
	again, err := client.SubmitJob(ctx, submission)
	if err != nil {
		return fmt.Errorf("submitting again: %w", err)
	}
	if again.ID != job.ID {
		return fmt.Errorf("the same key and request again got job %s, the first %s", again.ID, job.ID)
	}
	return nil
}

// liveSession: a run at revision 0 advances the session to 1, the stale revision
// conflicts, the history holds both messages, and a deleted session is not found.
func liveSession(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	created, err := client.CreateSession(ctx, agenticdriver.SessionCreate{Provider: "mock", Model: "demo", Mode: "history"})
	if err != nil {
		return err
	}
	if created.Session.Revision != 0 {
		return fmt.Errorf("created at revision %d", created.Session.Revision)
	}
	id := created.Session.ID
	req := demoRequest("Hello")
	req.Session = &agenticdriver.SessionBinding{ID: id, Revision: 0}
	result, err := client.Run(ctx, req)
	switch {
	case err != nil:
		return fmt.Errorf("the run: %w", err)
	case result.Text != "Hello" || result.Session == nil || result.Session.Revision != 1:
		return fmt.Errorf("the run: text %q, session %+v", result.Text, result.Session)
	}
	if _, err := client.Run(ctx, req); expectCode(err, "SESSION_REVISION_CONFLICT") != nil {
		return fmt.Errorf("revision 0 again: %w", expectCode(err, "SESSION_REVISION_CONFLICT"))
	}
	read, err := client.ReadSession(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("ReadSession: %w", err)
	case read.Session.Revision != 1 || len(read.History) != 2:
		return fmt.Errorf("ReadSession: revision %d, %d messages", read.Session.Revision, len(read.History))
	}
	deleted, err := client.DeleteSession(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("DeleteSession: %w", err)
	case !deleted.Deleted || deleted.ID != id:
		return fmt.Errorf("DeleteSession %+v", deleted)
	}
	if _, err := client.ReadSession(ctx, id); expectCode(err, "SESSION_NOT_FOUND") != nil {
		return fmt.Errorf("reading the deleted session: %w", expectCode(err, "SESSION_NOT_FOUND"))
	}
	return nil
}

// retrievalDocument is the retrieval scenario's Markdown document: the same in every
// driver, mode and transport (a repeated ingest is unchanged).
var retrievalDocument = agenticdriver.IngestRequest{Corpus: "default", Document: agenticdriver.IngestDocument{
	Type: "text", Source: agenticdriver.ContextSource{ID: "conformance-lighthouse", Revision: "r1"}, MediaType: "text/markdown",
	Text: "# Lighthouse keeping\n\nThe lamp is lit at dusk and trimmed every four hours.\n\n## Fog\n\nIn fog the keeper sounds the horn every thirty seconds.\n",
}}

func liveRetrieval(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	receipt, err := client.IngestDocument(ctx, retrievalDocument)
	switch {
	case err != nil:
		return fmt.Errorf("IngestDocument: %w", err)
	case receipt.Ingestion.Format != "markdown" || receipt.Chunks < 1:
		return fmt.Errorf("ingest receipt %+v", receipt)
	}
	scope := agenticdriver.RetrievalOptions{Corpus: "default", Query: "horn", SourceIDs: []string{"conformance-lighthouse"}}
	found, err := client.SearchRetrieval(ctx, agenticdriver.RetrievalSearch{Corpus: scope.Corpus, Query: scope.Query, SourceIDs: scope.SourceIDs})
	if err != nil {
		return fmt.Errorf("SearchRetrieval: %w", err)
	}
	if !slices.ContainsFunc(found.Hits, func(hit agenticdriver.RetrievalHit) bool { return strings.Contains(hit.Text, "horn") }) {
		return fmt.Errorf("search found %+v", found.Hits)
	}
	// A vector index as 1.0 defines it (what installed clients require), ranked as the additive field says.
	if index := found.Index; index.Metric != "cosine" || index.ProviderID != "builtin" || index.Ranking != "bm25" {
		return fmt.Errorf("search index %+v", index)
	}
	req := demoRequest("When is the horn sounded?")
	req.Retrieval = &scope
	result, err := client.Run(ctx, req)
	if err != nil {
		return fmt.Errorf("the grounded run: %w", err)
	}
	if result.Retrieval == nil || len(result.Retrieval.Hits) == 0 {
		return errors.New("the run retrieved nothing")
	}
	cited, err := agenticdriver.CheckCitations(result)
	if err != nil {
		return fmt.Errorf("CheckCitations: %w", err)
	}
	var hits, ids []string
	for _, hit := range result.Retrieval.Hits {
		hits = append(hits, hit.ChunkID)
	}
	for _, source := range cited {
		ids = append(ids, source.ID)
	}
	if !slices.Equal(ids, hits) {
		return fmt.Errorf("the answer cites %v, the hits are %v", ids, hits)
	}
	return nil
}

// liveCancelled reads the live host's count of cancelled runs from the peer.
func (h *harness) liveCancelled(ctx context.Context) (int, error) {
	return h.readCount(ctx, h.referenceURL+"/live-metrics", "cancelled")
}

func expectTLSFailure(ctx context.Context, h *harness, baseURL string) error {
	client, err := h.client(baseURL, h.token)
	if err != nil {
		return err
	}
	if _, err := client.Protocol(ctx); err == nil {
		return fmt.Errorf("a call to %s succeeded", baseURL)
	}
	return nil
}
