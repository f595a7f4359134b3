package agenticdriver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

const (
	testJobID    = "00000000-0000-4000-8000-000000000001"
	testJobRunID = "00000000-0000-4000-8000-000000000002"
	testSession  = "12345678-1234-4234-8234-123456789abc"
)

// jobJSON is a job's state with the given fields replaced (a nil value removes one).
func jobJSON(changes map[string]any) map[string]any {
	job := map[string]any{
		"id": testJobID, "runId": testJobRunID, "provider": "mock", "model": "demo", "state": "completed",
		"cursor": 4, "cancelRequested": false, "createdAt": "2026-09-21T12:00:00.000Z",
		"updatedAt": "2026-09-21T12:00:01.000Z", "expiresAt": "2026-09-22T12:00:00.000Z",
	}
	for k, v := range changes {
		if v == nil {
			delete(job, k)
		} else {
			job[k] = v
		}
	}
	return job
}

// jobEvent is event number seq of the test job's run.
func jobEvent(seq int, typ string, fields map[string]any) map[string]any {
	ev := map[string]any{"type": typ, "runId": testJobRunID, "sequence": seq, "timestamp": "2026-09-21T12:00:00.000Z"}
	for k, v := range fields {
		ev[k] = v
	}
	return ev
}

func jobResult(model string) map[string]any {
	return map[string]any{"result": map[string]any{"runId": testJobRunID, "provider": "mock", "model": model, "text": "Hello",
		"usage": map[string]any{}, "steps": 1, "finishReason": "stop"}}
}

// completedLog is the four events of a completed job.
func completedLog() []map[string]any {
	return []map[string]any{
		jobEvent(1, "run.started", map[string]any{"provider": "mock", "model": "demo"}),
		jobEvent(2, "step.started", map[string]any{"step": 1}),
		jobEvent(3, "text.delta", map[string]any{"text": "Hello"}),
		jobEvent(4, "run.completed", jobResult("demo")),
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// answer serves body as the JSON answer of every request and counts the requests.
func answer(t *testing.T, body string) (*Client, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		writeJSON(w, 200, body)
	}))
	t.Cleanup(srv.Close)
	return newTestClient(t, srv.URL), &hits
}

func TestJobInfoInvariants(t *testing.T) {
	cases := []struct {
		name    string
		changes map[string]any
		ok      bool
	}{
		{"completed", nil, true},
		{"queued", map[string]any{"state": "queued", "cursor": 0, "expiresAt": nil}, true},
		{"running", map[string]any{"state": "running", "cursor": 3, "expiresAt": nil}, true},
		{"queued with events", map[string]any{"state": "queued", "cursor": 1, "expiresAt": nil}, false},
		{"running with expiry", map[string]any{"state": "running", "cursor": 3}, false},
		{"finished without expiry", map[string]any{"expiresAt": nil}, false},
		{"finished with one event", map[string]any{"state": "cancelled", "cursor": 1}, false},
		{"expiry not after update", map[string]any{"expiresAt": "2026-09-21T12:00:01.000Z"}, false},
		{"update before creation", map[string]any{"updatedAt": "2026-09-21T11:59:59.999Z"}, false},
		{"another job", map[string]any{"id": "00000000-0000-4000-8000-000000000009"}, false},
		{"cased key is not the id", map[string]any{"id": nil, "ID": testJobID}, false},
	}
	for _, c := range cases {
		client, _ := answer(t, mustJSON(t, jobJSON(c.changes)))
		info, err := client.ReadJob(t.Context(), testJobID)
		switch {
		case c.ok && (err != nil || info.ID != testJobID):
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && !isCode(err, CodeInvalidResponse):
			t.Errorf("%s: got %v, want INVALID_RESPONSE", c.name, err)
		}
	}
}

func TestSubmitJobChecksTheRequestAndTheAnswer(t *testing.T) {
	submit := JobSubmit{Key: "nightly-1", Request: demo()}
	client, hits := answer(t, mustJSON(t, jobJSON(map[string]any{"state": "queued", "cursor": 0, "expiresAt": nil})))
	info, err := client.SubmitJob(t.Context(), submit)
	if err != nil || info.State != JobQueued || info.RunID != testJobRunID {
		t.Fatalf("SubmitJob: %+v, %v", info, err)
	}
	client, _ = answer(t, mustJSON(t, jobJSON(map[string]any{"model": "other"})))
	if _, err := client.SubmitJob(t.Context(), submit); !isCode(err, CodeInvalidResponse) {
		t.Errorf("another model: %v", err)
	}
	before := hits.Load()
	client, hits = answer(t, "{}")
	for _, bad := range []JobSubmit{{Key: "bad key", Request: demo()}, {Key: "k", Request: RunRequest{Provider: "mock"}}} {
		if _, err := client.SubmitJob(t.Context(), bad); !isCode(err, CodeInvalidJob) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := client.ReadJob(t.Context(), "NOT-A-UUID"); !isCode(err, CodeInvalidJob) {
		t.Errorf("bad id: %v", err)
	}
	if hits.Load() != 0 || before != 1 {
		t.Errorf("invalid submissions reached the host (%d requests)", hits.Load())
	}
}

func TestJobEventPageRules(t *testing.T) {
	type page struct {
		job    map[string]any
		events []map[string]any
		next   int
		more   bool
	}
	full := func() page { return page{jobJSON(nil), completedLog(), 4, false} }
	with := func(f func(*page)) page { p := full(); f(&p); return p }
	req := JobEventsRequest{ID: testJobID}
	cases := []struct {
		name string
		req  JobEventsRequest
		page page
		ok   bool
	}{
		{"whole completed log", req, full(), true},
		{"middle page", JobEventsRequest{ID: testJobID, After: 1, Limit: 2}, with(func(p *page) { p.events, p.next, p.more = p.events[1:3], 3, true }), true},
		{"empty page at the cursor", JobEventsRequest{ID: testJobID, After: 4}, with(func(p *page) { p.events = nil }), true},
		{"running job so far", req, with(func(p *page) {
			p.job = jobJSON(map[string]any{"state": "running", "cursor": 3, "expiresAt": nil})
			p.events, p.next = p.events[:3], 3
		}), true},
		{"interrupted with uncertain outcome", req, with(func(p *page) {
			p.job = jobJSON(map[string]any{"state": "interrupted"})
			p.events[3] = jobEvent(4, "run.failed", map[string]any{"error": map[string]any{"code": "JOB_INTERRUPTED", "message": "m", "retryable": false, "outcome": "uncertain"}})
		}), true},
		{"interrupted without uncertain outcome", req, with(func(p *page) {
			p.job = jobJSON(map[string]any{"state": "interrupted"})
			p.events[3] = jobEvent(4, "run.failed", map[string]any{"error": map[string]any{"code": "JOB_INTERRUPTED", "message": "m", "retryable": false}})
		}), false},
		{"cancelled job ends with run.failed", req, with(func(p *page) {
			p.job = jobJSON(map[string]any{"state": "cancelled"})
			p.events[3] = jobEvent(4, "run.failed", map[string]any{"error": map[string]any{"code": "X", "message": "m", "retryable": false}})
		}), false},
		{"failed job ends with run.completed", req, with(func(p *page) { p.job = jobJSON(map[string]any{"state": "failed"}) }), false},
		{"another job", req, with(func(p *page) { p.job = jobJSON(map[string]any{"id": "00000000-0000-4000-8000-000000000009"}) }), false},
		{"more events than the limit", JobEventsRequest{ID: testJobID, Limit: 3}, full(), false},
		{"another run", req, with(func(p *page) { p.events[2]["runId"] = "00000000-0000-4000-8000-000000000003" }), false},
		{"gap", req, with(func(p *page) { p.events[2]["sequence"] = 5 }), false},
		{"not from after+1", JobEventsRequest{ID: testJobID, After: 1}, with(func(p *page) { p.events = p.events[2:] }), false},
		{"beyond the cursor", req, with(func(p *page) {
			p.job = jobJSON(map[string]any{"state": "running", "cursor": 2, "expiresAt": nil})
			p.events, p.next = p.events[:3], 3
		}), false},
		{"run.started again", req, with(func(p *page) {
			p.events[1] = jobEvent(2, "run.started", map[string]any{"provider": "mock", "model": "demo"})
		}), false},
		{"first event not run.started", req, with(func(p *page) { p.events[0] = jobEvent(1, "step.started", map[string]any{"step": 1}) }), false},
		{"run.started for another model", req, with(func(p *page) { p.events[0]["model"] = "other" }), false},
		{"approval event", req, with(func(p *page) {
			p.events[2] = jobEvent(3, "approval.resolved", map[string]any{"resolution": map[string]any{"approvalId": "a", "runId": testJobRunID, "callId": "c", "outcome": "approved", "decidedAt": "2026-09-21T12:00:00.000Z"}})
		}), false},
		{"unknown optional event", req, with(func(p *page) { p.events[2] = jobEvent(3, "future.event", map[string]any{"optional": true}) }), false},
		{"terminal before the cursor", req, with(func(p *page) { p.events[2] = jobEvent(3, "run.completed", jobResult("demo")) }), false},
		{"terminal in a running job", req, with(func(p *page) { p.job = jobJSON(map[string]any{"state": "running", "expiresAt": nil}) }), false},
		{"finished job without a terminal event", req, with(func(p *page) { p.events[3] = jobEvent(4, "text.delta", map[string]any{"text": "x"}) }), false},
		{"result for another model", req, with(func(p *page) { p.events[3] = jobEvent(4, "run.completed", jobResult("other")) }), false},
		{"result with a session", req, with(func(p *page) {
			r := jobResult("demo")
			r["result"].(map[string]any)["session"] = map[string]any{"id": testSession, "revision": 1, "provider": "mock", "model": "demo", "mode": "history", "state": "ready",
				"createdAt": "2026-09-21T00:00:00.000Z", "updatedAt": "2026-09-21T00:00:00.000Z", "expiresAt": "2026-09-21T01:00:00.000Z"}
			p.events[3] = jobEvent(4, "run.completed", r)
		}), false},
		{"nextCursor not the last sequence", req, with(func(p *page) { p.next = 3 }), false},
		{"empty page moves nextCursor", req, with(func(p *page) { p.events = nil }), false},
		{"hasMore at the cursor", req, with(func(p *page) { p.more = true }), false},
		{"no hasMore before the cursor", JobEventsRequest{ID: testJobID, Limit: 2}, with(func(p *page) { p.events, p.next = p.events[:2], 2 }), false},
	}
	for _, c := range cases {
		events := c.page.events
		if events == nil {
			events = []map[string]any{}
		}
		body := mustJSON(t, map[string]any{"job": c.page.job, "events": events, "nextCursor": c.page.next, "hasMore": c.page.more})
		client, _ := answer(t, body)
		got, err := client.JobEvents(t.Context(), c.req)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.ok && (len(got.Events) != len(c.page.events) || (len(got.Events) > 0 && !strings.Contains(string(got.Events[0].Raw), `"sequence"`))):
			t.Errorf("%s: decoded %d events", c.name, len(got.Events))
		case !c.ok && !isCode(err, CodeInvalidResponse):
			t.Errorf("%s: got %v, want INVALID_RESPONSE", c.name, err)
		}
	}
}

func snapshotJSON(changes map[string]any, history []map[string]any, extra map[string]any) string {
	session := map[string]any{"id": testSession, "revision": 0, "provider": "mock", "model": "demo", "mode": "history", "state": "ready",
		"createdAt": "2026-09-21T00:00:00.000Z", "updatedAt": "2026-09-21T00:00:00.000Z", "expiresAt": "2026-09-21T01:00:00.000Z"}
	for k, v := range changes {
		if v == nil {
			delete(session, k)
		} else {
			session[k] = v
		}
	}
	if history == nil {
		history = []map[string]any{}
	}
	body := map[string]any{"session": session, "history": history}
	for k, v := range extra {
		body[k] = v
	}
	data, _ := json.Marshal(body)
	return string(data)
}

func TestSessionReceipts(t *testing.T) {
	hello := []map[string]any{{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}}
	create := SessionCreate{Provider: "mock", Model: "demo", Mode: "history", Instructions: "be brief",
		History: []HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}}
	instructions := map[string]any{"instructions": "be brief"}
	cases := []struct {
		name, body string
		ok         bool
	}{
		{"echo", snapshotJSON(nil, hello, instructions), true},
		{"other model", snapshotJSON(map[string]any{"model": "other"}, hello, instructions), false},
		{"other mode", snapshotJSON(map[string]any{"mode": "native"}, hello, instructions), false},
		{"revision 1", snapshotJSON(map[string]any{"revision": 1}, hello, instructions), false},
		{"interrupted", snapshotJSON(map[string]any{"state": "interrupted"}, hello, instructions), false},
		{"instructions dropped", snapshotJSON(nil, hello, nil), false},
		{"history changed", snapshotJSON(nil, []map[string]any{{"role": "user", "content": "hi"}, {"role": "assistant", "content": "bye"}}, instructions), false},
		{"history dropped", snapshotJSON(nil, nil, instructions), false},
	}
	for _, c := range cases {
		client, _ := answer(t, c.body)
		snapshot, err := client.CreateSession(t.Context(), create)
		switch {
		case c.ok && (err != nil || snapshot.Session.ID != testSession || len(snapshot.History) != 2):
			t.Errorf("create %s: %+v %v", c.name, snapshot, err)
		case !c.ok && !isCode(err, CodeInvalidResponse):
			t.Errorf("create %s: got %v, want INVALID_RESPONSE", c.name, err)
		}
	}

	id := testSession
	client, _ := answer(t, snapshotJSON(map[string]any{"id": "12345678-1234-4234-8234-123456789def"}, nil, nil))
	if _, err := client.ReadSession(t.Context(), id); !isCode(err, CodeInvalidResponse) {
		t.Errorf("read of another session: %v", err)
	}
	client, _ = answer(t, snapshotJSON(map[string]any{"state": "running", "expiresAt": nil}, nil, nil))
	if s, err := client.ReadSession(t.Context(), id); err != nil || s.Session.State != "running" {
		t.Errorf("read of a running session: %v", err)
	}
	for body, ok := range map[string]bool{
		fmt.Sprintf(`{"id":%q,"deleted":true}`, testSession):           true,
		fmt.Sprintf(`{"id":%q,"deleted":false}`, testSession):          false,
		fmt.Sprintf(`{"id":%q,"Deleted":true}`, testSession):           false,
		`{"id":"12345678-1234-4234-8234-123456789def","deleted":true}`: false,
	} {
		client, _ := answer(t, body)
		_, err := client.DeleteSession(t.Context(), id)
		if (ok && err != nil) || (!ok && !isCode(err, CodeInvalidResponse)) {
			t.Errorf("delete answered %s: %v", body, err)
		}
	}
	// A schema-valid receipt for another session breaks a rule of protocol/rules.json, which the error names (as in every client).
	other, _ := answer(t, `{"id":"12345678-1234-4234-8234-123456789def","deleted":true}`)
	if _, err := other.DeleteSession(t.Context(), id); !isCode(err, CodeInvalidResponse) || !strings.Contains(err.Error(), "[sessionDeleted.id]") {
		t.Errorf("delete of another session: %v", err)
	}
	client, hits := answer(t, "{}")
	if _, err := client.CreateSession(t.Context(), SessionCreate{Provider: "mock", Model: "demo", Mode: "forever"}); !isCode(err, CodeInvalidSession) {
		t.Errorf("bad mode: %v", err)
	}
	if _, err := client.DeleteSession(t.Context(), "x"); !isCode(err, CodeInvalidSession) {
		t.Errorf("bad id: %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("invalid session requests reached the host")
	}
}

func TestListsAreCheckedAndTheirRequestsBeforeSending(t *testing.T) {
	newer := jobJSON(map[string]any{"updatedAt": "2026-09-21T12:00:02.000Z"})
	older := jobJSON(map[string]any{"id": "00000000-0000-4000-8000-000000000005"})
	cases := []struct {
		name string
		jobs []map[string]any
		req  JobListRequest
		ok   bool
	}{
		{"newest first", []map[string]any{newer, older}, JobListRequest{}, true},
		{"oldest first", []map[string]any{older, newer}, JobListRequest{}, false},
		{"a job twice", []map[string]any{newer, newer}, JobListRequest{}, false},
		{"over the limit", []map[string]any{newer, older}, JobListRequest{Limit: 1}, false},
		{"another state", []map[string]any{newer}, JobListRequest{State: JobRunning}, false},
		{"a job's own rule", []map[string]any{jobJSON(map[string]any{"expiresAt": nil})}, JobListRequest{}, false},
	}
	for _, c := range cases {
		client, _ := answer(t, mustJSON(t, map[string]any{"jobs": c.jobs}))
		jobs, err := client.ListJobs(t.Context(), c.req)
		switch {
		case c.ok && (err != nil || len(jobs) != 2 || jobs[0].UpdatedAt != "2026-09-21T12:00:02.000Z"):
			t.Errorf("%s: %+v %v", c.name, jobs, err)
		case !c.ok && !isCode(err, CodeInvalidResponse):
			t.Errorf("%s: got %v, want INVALID_RESPONSE", c.name, err)
		}
	}

	session := func(changes map[string]any) map[string]any {
		s := map[string]any{"id": testSession, "revision": 2, "provider": "mock", "model": "demo", "mode": "history", "state": "ready",
			"createdAt": "2026-09-21T12:00:00.000Z", "updatedAt": "2026-09-21T12:00:01.000Z", "expiresAt": "2026-09-22T12:00:00.000Z"}
		for k, v := range changes {
			s[k] = v
		}
		return s
	}
	client, _ := answer(t, mustJSON(t, map[string]any{"sessions": []any{session(nil)}}))
	if sessions, err := client.ListSessions(t.Context(), SessionListRequest{Limit: 5}); err != nil || len(sessions) != 1 || sessions[0].Revision != 2 {
		t.Errorf("list sessions: %+v %v", sessions, err)
	}
	client, _ = answer(t, mustJSON(t, map[string]any{"sessions": []any{session(map[string]any{"state": "running"})}}))
	if _, err := client.ListSessions(t.Context(), SessionListRequest{}); !isCode(err, CodeInvalidResponse) {
		t.Errorf("a running session with an expiry: %v", err)
	}

	client, hits := answer(t, "{}")
	if _, err := client.ListJobs(t.Context(), JobListRequest{Limit: 101}); !isCode(err, CodeInvalidJob) {
		t.Errorf("limit 101: %v", err)
	}
	if _, err := client.ListJobs(t.Context(), JobListRequest{State: "sleeping"}); !isCode(err, CodeInvalidJob) {
		t.Errorf("state sleeping: %v", err)
	}
	if _, err := client.ListSessions(t.Context(), SessionListRequest{Limit: 101}); !isCode(err, CodeInvalidSession) {
		t.Errorf("session limit 101: %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("%d malformed requests were sent", hits.Load())
	}
}
