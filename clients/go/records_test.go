package agenticdriver

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// runJSON is a run record of the test job's run id, read back, with the given fields
// replaced (a nil value removes one).
func runJSON(changes map[string]any) map[string]any {
	run := map[string]any{
		"runId": testJobRunID, "mode": "attached", "provider": "mock", "model": "demo", "state": "completed", "cursor": 4,
		"createdAt": "2026-09-21T12:00:00.000Z", "updatedAt": "2026-09-21T12:00:01.000Z", "expiresAt": "2026-09-22T12:00:00.000Z",
		"result": jobResult("demo")["result"],
	}
	for k, v := range changes {
		if v == nil {
			delete(run, k)
		} else {
			run[k] = v
		}
	}
	return run
}

func runningRun(cursor int) map[string]any {
	return runJSON(map[string]any{"state": "running", "cursor": cursor, "expiresAt": nil, "result": nil})
}

// recordServer answers POST /v1/runs/read with run, POST /v1/runs/events with page, and
// each GET of the run's stream with the next of connections (the last one repeats).
type recordServer struct {
	t           *testing.T
	run         map[string]any
	page        map[string]any
	connections []func(w http.ResponseWriter, lastEventID string)
	mu          sync.Mutex
	lastIDs     []string
}

func (s *recordServer) start() *Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/runs/read" && s.run != nil:
			writeJSON(w, 200, mustJSON(s.t, s.run))
		case r.Method == http.MethodPost && r.URL.Path == "/v1/runs/events":
			writeJSON(w, 200, mustJSON(s.t, s.page))
		case r.Method == http.MethodGet && r.URL.Path == "/v1/runs/"+testJobRunID+"/stream":
			s.mu.Lock()
			s.lastIDs = append(s.lastIDs, r.Header.Get("Last-Event-ID"))
			n := len(s.lastIDs)
			s.mu.Unlock()
			s.connections[min(n, len(s.connections))-1](w, r.Header.Get("Last-Event-ID"))
		default:
			writeJSON(w, 404, `{"error":{"code":"RUN_NOT_FOUND","message":"No such run.","retryable":false}}`)
		}
	}))
	s.t.Cleanup(srv.Close)
	return newTestClient(s.t, srv.URL)
}

func codeOf(err error) string {
	var de *DriverError
	if errors.As(err, &de) {
		return de.Code
	}
	return fmt.Sprint(err)
}

func TestReadRunChecksTheRecord(t *testing.T) {
	s := &recordServer{t: t, run: runJSON(nil)}
	info, err := s.start().ReadRun(testContext(t), testJobRunID)
	if err != nil || info.State != "completed" || info.Result == nil || info.Result.Text != "Hello" {
		t.Fatalf("ReadRun: %+v %v", info, err)
	}
	other := "00000000-0000-4000-8000-000000000009"
	broken := map[string]map[string]any{
		"another run":          runJSON(map[string]any{"runId": other}),
		"expiry while running": runJSON(map[string]any{"state": "running", "result": nil}),
		"result while failed":  runJSON(map[string]any{"state": "failed"}),
		"job id on attached":   runJSON(map[string]any{"jobId": testJobID}),
		"no job id background": runJSON(map[string]any{"mode": "background"}),
		"unknown state":        runJSON(map[string]any{"state": "paused"}),
	}
	for name, record := range broken {
		s := &recordServer{t: t, run: record}
		if _, err := s.start().ReadRun(testContext(t), testJobRunID); codeOf(err) != CodeInvalidResponse {
			t.Errorf("%s: got %v, want INVALID_RESPONSE", name, err)
		}
	}
}

func TestRunCallsAreCheckedBeforeSendingAndHostErrorsPassThrough(t *testing.T) {
	s := &recordServer{t: t}
	c := s.start()
	if _, err := c.ReadRun(testContext(t), "not-a-uuid"); codeOf(err) != CodeInvalidRunRead {
		t.Errorf("bad id: %v", err)
	}
	if _, err := c.ReadRun(testContext(t), testJobRunID); codeOf(err) != "RUN_NOT_FOUND" {
		t.Errorf("missing run: %v", err)
	}
	for _, err := range c.FollowRun(testContext(t), testJobRunID, TailOptions{After: -1}) {
		if codeOf(err) != CodeInvalidRunCursor {
			t.Errorf("negative after: %v", err)
		}
	}
}

func TestRunEventsChecksThePage(t *testing.T) {
	log := completedLog()
	good := map[string]any{"run": runJSON(nil), "events": log, "nextCursor": 4, "hasMore": false}
	s := &recordServer{t: t, page: good}
	page, err := s.start().RunEvents(testContext(t), RunEventsRequest{RunID: testJobRunID})
	if err != nil || len(page.Events) != 4 || string(page.Events[0].Raw) == "" {
		t.Fatalf("RunEvents: %+v %v", page, err)
	}
	gap := jobEvent(2, "step.started", map[string]any{"step": 1})
	gap["sequence"] = 3
	broken := map[string]map[string]any{
		"gap":                    {"run": runJSON(nil), "events": []any{log[0], gap, log[2], log[3]}, "nextCursor": 4, "hasMore": false},
		"beyond cursor":          {"run": runningRun(3), "events": log[:4], "nextCursor": 4, "hasMore": false},
		"terminal while running": {"run": runningRun(4), "events": log, "nextCursor": 4, "hasMore": false},
		"next cursor":            {"run": runJSON(nil), "events": log, "nextCursor": 3, "hasMore": false},
	}
	for name, value := range broken {
		s := &recordServer{t: t, page: value}
		if _, err := s.start().RunEvents(testContext(t), RunEventsRequest{RunID: testJobRunID}); codeOf(err) != CodeInvalidResponse {
			t.Errorf("%s: got %v, want INVALID_RESPONSE", name, err)
		}
	}
}

func collectFollow(t *testing.T, c *Client, opts TailOptions) ([]int64, error) {
	var seqs []int64
	for ev, err := range c.FollowRun(testContext(t), testJobRunID, opts) {
		if err != nil {
			return seqs, err
		}
		seqs = append(seqs, ev.Sequence)
	}
	return seqs, nil
}

func TestFollowRunResumesWithLastEventID(t *testing.T) {
	log := completedLog()
	s := &recordServer{t: t, run: runningRun(1), connections: []func(http.ResponseWriter, string){drop(log[0], log[1]), serve(log[2:]...)}}
	seqs, err := collectFollow(t, s.start(), fastTail)
	if err != nil || fmt.Sprint(seqs) != "[1 2 3 4]" || fmt.Sprint(s.lastIDs) != "[0 2]" {
		t.Fatalf("got %v %v, Last-Event-ID %v", seqs, err, s.lastIDs)
	}
}

func TestFollowRunGivesUpWithRunStreamLost(t *testing.T) {
	s := &recordServer{t: t, run: runningRun(1), connections: []func(http.ResponseWriter, string){drop()}}
	_, err := collectFollow(t, s.start(), fastTail)
	var de *DriverError
	if !errors.As(err, &de) || de.Code != CodeRunStreamLost || !de.Retryable || len(s.lastIDs) != 3 {
		t.Fatalf("got %v after %d connections", err, len(s.lastIDs))
	}
}

func TestFollowRunOfAFinishedRunReadToItsEndOpensNoStream(t *testing.T) {
	s := &recordServer{t: t, run: runJSON(nil)}
	seqs, err := collectFollow(t, s.start(), TailOptions{After: 4})
	if err != nil || len(seqs) != 0 || len(s.lastIDs) != 0 {
		t.Fatalf("got %v %v with %d connections", seqs, err, len(s.lastIDs))
	}
	if _, err := collectFollow(t, s.start(), TailOptions{After: 5}); codeOf(err) != CodeInvalidRunCursor {
		t.Errorf("after beyond the cursor: %v", err)
	}
}

func TestLiveAttachedRunIsReadBackPagedAndFollowed(t *testing.T) {
	client, ctx := liveClient(t, "http"), testContext(t)
	result, err := client.Run(ctx, RunRequest{Provider: "mock", Model: "demo", Input: "read me back"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := client.ReadRun(ctx, result.RunID)
	if err != nil || info.Mode != RunAttached || info.State != "completed" || info.Result == nil || info.Result.Text != result.Text {
		t.Fatalf("ReadRun: %+v %v", info, err)
	}
	var followed []Event
	for ev, err := range client.FollowRun(ctx, result.RunID, TailOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		followed = append(followed, ev)
	}
	if len(followed) == 0 || followed[len(followed)-1].Type != "run.completed" || int64(len(followed)) != info.Cursor {
		t.Fatalf("followed %d events, cursor %d", len(followed), info.Cursor)
	}
	page, err := client.RunEvents(ctx, RunEventsRequest{RunID: result.RunID, After: 2})
	if err != nil || len(page.Events) != len(followed)-2 || page.Events[0].Sequence != 3 || page.HasMore {
		t.Fatalf("RunEvents after 2: %+v %v", page, err)
	}
}
