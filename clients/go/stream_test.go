package agenticdriver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// heldOpenServer sends its events, then keeps the response open until the client
// goes away, and reports that on closed.
func heldOpenServer(t *testing.T, events ...string) (*httptest.Server, <-chan struct{}) {
	closed := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, events...)
		<-r.Context().Done()
		closed <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return srv, closed
}

func waitClosed(t *testing.T, closed <-chan struct{}) {
	t.Helper()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the connection close")
	}
}

func TestLeavingTheLoopClosesTheStream(t *testing.T) {
	srv, closed := heldOpenServer(t, startedEvent, deltaEvent)
	var seen []string
	for ev, err := range newTestClient(t, srv.URL).Stream(testContext(t), demo()) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, ev.Type)
		if ev.Type == EventTextDelta {
			break
		}
	}
	if strings.Join(seen, ",") != "run.started,text.delta" {
		t.Fatalf("events %v", seen)
	}
	waitClosed(t, closed)
}

func TestCancellingTheContextInterruptsAPendingRead(t *testing.T) {
	srv, closed := heldOpenServer(t, startedEvent)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := each(newTestClient(t, srv.URL).Stream(ctx, demo()), func(ev Event) error {
		time.AfterFunc(50*time.Millisecond, cancel) // while the client waits for the next frame
		return nil
	})
	if !errors.Is(err, context.Canceled) || !isCode(err, CodeCancelled) {
		t.Fatalf("got %v, want CANCELLED wrapping context.Canceled", err)
	}
	waitClosed(t, closed)
}

func TestFailureTerminalIsDeliveredAsAnEvent(t *testing.T) {
	failed := `{"type":"run.failed","runId":"r1","sequence":2,"timestamp":"2026-09-20T12:00:00+02:00","error":{"code":"IDLE_TIMEOUT","message":"idle","retryable":true,"outcome":"uncertain"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeSSE(w, startedEvent, failed) }))
	defer srv.Close()
	var events []Event
	for ev, err := range newTestClient(t, srv.URL).Stream(testContext(t), demo()) {
		if err != nil {
			t.Fatalf("a failed run is an event, not an error: %v", err)
		}
		events = append(events, ev)
	}
	last := events[len(events)-1]
	if len(events) != 2 || last.Type != EventRunFailed || string(last.Raw) != failed {
		t.Fatalf("events %+v", events)
	}
	if de := last.Error; de == nil || de.Code != "IDLE_TIMEOUT" || !de.Retryable || de.Outcome != OutcomeUncertain {
		t.Fatalf("error %#v", de)
	}
}

func TestFirstTerminalWins(t *testing.T) {
	srv, closed := heldOpenServer(t, startedEvent, deltaEvent, completedEvent, `{"not":"read"}`, "garbage")
	var types []string
	err := each(newTestClient(t, srv.URL).Stream(testContext(t), demo()), func(ev Event) error { types = append(types, ev.Type); return nil })
	if err != nil || len(types) != 3 {
		t.Fatalf("events %v, error %v", types, err)
	}
	waitClosed(t, closed)
}

func TestStreamRules(t *testing.T) {
	at := func(seq int, typ, payload string) string {
		return fmt.Sprintf(`{"type":%q,"runId":"r1","sequence":%d,"timestamp":"2026-09-20T12:00:00.000Z"%s}`, typ, seq, payload)
	}
	done := func(seq int) string {
		return at(seq, EventRunCompleted, `,"result":{"runId":"r1","provider":"mock","model":"demo","text":"","usage":{},"steps":1,"finishReason":"length"}`)
	}
	cases := []struct {
		name   string
		events []string
		code   string
	}{
		{"optional unknown skipped", []string{startedEvent, at(2, "future.thing", `,"optional":true`), done(3)}, ""},
		{"optional string is not optional", []string{startedEvent, at(2, "future.thing", `,"optional":"true"`), done(3)}, CodeInvalidStream},
		{"unknown required", []string{startedEvent, at(2, "future.thing", ""), done(3)}, CodeUnsupportedEvent},
		{"optional unknown with a gap", []string{startedEvent, at(3, "future.thing", `,"optional":true`)}, CodeInvalidStream},
		{"first event unknown", []string{at(1, "future.thing", `,"optional":true`)}, CodeInvalidStream},
		{"wrong started model", []string{strings.Replace(startedEvent, `"model":"demo"`, `"model":"x"`, 1)}, CodeInvalidStream},
		{"step zero", []string{startedEvent, at(2, EventStepStarted, `,"step":0`)}, CodeInvalidStream},
		{"fractional sequence", []string{startedEvent, strings.Replace(deltaEvent, `"sequence":2`, `"sequence":2.5`, 1)}, CodeInvalidStream},
		{"integral float sequence", []string{startedEvent, strings.Replace(deltaEvent, `"sequence":2`, `"sequence":2.0`, 1), done(3)}, ""},
		{"impossible date", []string{startedEvent, strings.Replace(deltaEvent, "2026-09-20", "2026-02-30", 1)}, CodeInvalidStream},
		{"tool completed needs output", []string{startedEvent, at(2, EventToolCompleted, `,"callId":"c"`)}, CodeInvalidStream},
		{"tool completed null output", []string{startedEvent, at(2, EventToolCompleted, `,"callId":"c","output":null`), done(3)}, ""},
		{"cancelled terminal", []string{startedEvent, at(2, EventRunCancelled, `,"error":{"code":"CANCELLED","message":"","retryable":false}`)}, "CANCELLED"},
		{"resolution of an unrequested approval", []string{startedEvent, at(2, EventApprovalResolved, `,"resolution":{"approvalId":"a","runId":"r1","callId":"c","outcome":"approved","decidedAt":"2026-09-20T12:00:00Z"}`)}, CodeInvalidStream},
		{"case variant key", []string{startedEvent, strings.Replace(deltaEvent, `"text"`, `"Text"`, 1)}, CodeInvalidStream},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeSSE(w, c.events...) }))
			defer srv.Close()
			req := demo()
			req.Approvals = &ApprovalOptions{Mode: "interactive", IdlePolicy: "pause"}
			err := each(newTestClient(t, srv.URL).Stream(testContext(t), req), func(Event) error { return nil })
			if c.code == "" && err != nil {
				t.Fatal(err)
			}
			if c.code != "" {
				expectCode(t, err, c.code)
			}
		})
	}
}

func TestStreamNeedsAnEventStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, resultJSON) }))
	defer srv.Close()
	err := each(newTestClient(t, srv.URL).Stream(testContext(t), demo()), func(Event) error { return nil })
	expectCode(t, err, CodeInvalidResponse)
}

// maxToolExecutionsPerRun is the limit of the toolExecution.limit rule (generated/rules.json).
const maxToolExecutionsPerRun = 2048

func TestToolExecutionLimitPerRun(t *testing.T) {
	events := []string{startedEvent}
	for i := 0; i <= maxToolExecutionsPerRun; i++ {
		events = append(events, fmt.Sprintf(`{"type":"tool.execution.requested","runId":"r1","sequence":%d,"timestamp":"2026-09-20T12:00:00Z","execution":{"executionId":"e%d","runId":"r1","call":{"id":"c%d","name":"lookup","arguments":{}}}}`, i+2, i, i))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeSSE(w, events...) }))
	defer srv.Close()
	req := demo()
	req.ApplicationTools = []ApplicationTool{{Name: "lookup", Description: "d", InputSchema: []byte(`{}`)}}
	req.Tools = []string{"lookup"}
	count := 0
	err := each(newTestClient(t, srv.URL).Stream(testContext(t), req), func(Event) error { count++; return nil })
	expectCode(t, err, CodeInvalidStream)
	if count != maxToolExecutionsPerRun+1 {
		t.Fatalf("delivered %d events before the limit", count)
	}
}
