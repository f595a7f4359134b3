package agenticdriver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func approvalEvent(seq int, arguments string) string {
	return fmt.Sprintf(`{"type":"approval.requested","runId":"r1","sequence":%d,"timestamp":"2026-09-20T12:00:00.000Z","approval":{"approvalId":"a1","runId":"r1","call":{"id":"c1","name":"lookup","arguments":%s},"requestedAt":"2026-09-20T12:00:00.000Z","idlePolicy":"pause"}}`, seq, arguments)
}

func executionEvent(seq int) string {
	return fmt.Sprintf(`{"type":"tool.execution.requested","runId":"r1","sequence":%d,"timestamp":"2026-09-20T12:00:00.000Z","execution":{"executionId":"e1","runId":"r1","call":{"id":"c1","name":"lookup","arguments":{"query":"x"}}}}`, seq)
}

func lookupDeclared(req RunRequest) RunRequest {
	req.Tools = []string{"lookup"}
	req.ApplicationTools = []ApplicationTool{{Name: "lookup", Description: "d", InputSchema: json.RawMessage(`{}`)}}
	return req
}

// countingServer answers every request with a stream of events and counts the requests.
func countingServer(t *testing.T, events ...string) (*httptest.Server, *atomic.Int32) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		writeSSE(w, events...)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestMalformedSubmissionsAreRefusedBeforeSending(t *testing.T) {
	srv, requests := countingServer(t)
	client := newTestClient(t, srv.URL)
	ctx := testContext(t)
	id := ToolExecutionIdentity{ExecutionID: "e1", RunID: "r1", CallID: "c1"}
	decide := func(mutate func(*ApprovalDecision)) func() error {
		return func() error {
			d := ApprovalDecision{ApprovalID: "a1", RunID: "r1", Decision: DecisionApprove,
				Call: ToolCall{ID: "c1", Name: "lookup", Arguments: map[string]json.RawMessage{}}}
			mutate(&d)
			_, err := client.DecideApproval(ctx, d)
			return err
		}
	}
	complete := func(r ToolExecutionResult) func() error {
		return func() error { _, err := client.CompleteTool(ctx, r); return err }
	}
	notAnApproval := client.Approval(Event{Type: EventToolExecutionRequested, Execution: &ToolExecution{}})
	notAnExecution := client.Execution(Event{Type: EventApprovalRequested, Approval: &ApprovalRequest{}})
	cases := []struct {
		name, code string
		send       func() error
	}{
		{"no arguments object", CodeInvalidApproval, decide(func(d *ApprovalDecision) { d.Call.Arguments = nil })},
		{"long runId", CodeInvalidApproval, decide(func(d *ApprovalDecision) { d.RunID = strings.Repeat("r", 257) })},
		{"invalid UTF-8 id", CodeInvalidApproval, decide(func(d *ApprovalDecision) { d.ApprovalID = "a\xff" })},
		{"broken raw argument", CodeInvalidApproval, decide(func(d *ApprovalDecision) { d.Call.Arguments["x"] = json.RawMessage(`{`) })},
		{"invalid UTF-8 argument", CodeInvalidApproval, decide(func(d *ApprovalDecision) { d.Call.Arguments["x"] = json.RawMessage("\"\xff\"") })},
		{"__proto__ argument", CodeInvalidApproval, decide(func(d *ApprovalDecision) { d.Call.Arguments["__proto__"] = json.RawMessage(`1`) })},
		{"empty executionId", CodeInvalidToolExecution, func() error {
			_, err := client.ReportToolProgress(ctx, ToolExecutionIdentity{RunID: "r1", CallID: "c1"})
			return err
		}},
		{"neither output nor error", CodeInvalidToolExecution, complete(ToolExecutionResult{ToolExecutionIdentity: id})},
		{"output nested too deep", CodeInvalidToolExecution, complete(ToolExecutionResult{ToolExecutionIdentity: id,
			Output: json.RawMessage(strings.Repeat(`{"a":`, 66) + "1" + strings.Repeat("}", 66))})},
		{"unencodable output", CodeInvalidToolExecution, func() error {
			_, err := client.Execution(Event{Type: EventToolExecutionRequested, Execution: &ToolExecution{ExecutionID: "e1", RunID: "r1", Call: ToolCall{ID: "c1"}}}).Complete(ctx, make(chan int))
			return err
		}},
		{"approval of another event", CodeInvalidArgument, func() error { _, err := notAnApproval.Approve(ctx); return err }},
		{"execution of another event", CodeInvalidArgument, func() error { _, err := notAnExecution.Fail(ctx); return err }},
		{"function for an undeclared tool", CodeInvalidArgument, func() error {
			return each(client.StreamWithTools(ctx, demo(), ToolFunctions{"lookup": func(context.Context, *ToolContext) (any, error) { return nil, nil }}), nil)
		}},
		{"nil function", CodeInvalidArgument, func() error {
			return each(client.StreamWithTools(ctx, lookupDeclared(demo()), ToolFunctions{"lookup": nil}), nil)
		}},
	}
	for _, c := range cases {
		if err := c.send(); !isCode(err, c.code) {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests were sent", n)
	}
}

func TestDeepButAllowedArgumentsAreSent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"approvalId":"a1","runId":"r1","callId":"c1","outcome":"approved","decidedAt":"2026-09-20T12:00:00Z"}`)
	}))
	defer srv.Close()
	// 64 levels below the arguments object is the deepest the host keeps.
	deep := json.RawMessage(strings.Repeat("[", 64) + strings.Repeat("]", 64))
	d := ApprovalDecision{ApprovalID: "a1", RunID: "r1", Decision: DecisionApprove,
		Call: ToolCall{ID: "c1", Name: "lookup", Arguments: map[string]json.RawMessage{"deep": deep}}}
	if _, err := newTestClient(t, srv.URL).DecideApproval(testContext(t), d); err != nil {
		t.Fatal(err)
	}
	d.Call.Arguments["deep"] = json.RawMessage("[" + string(deep) + "]")
	_, err := newTestClient(t, srv.URL).DecideApproval(testContext(t), d)
	expectCode(t, err, CodeInvalidApproval)
}

// approval.* and tool.execution.requested on a run that did not opt in end the stream,
// and a registered function never runs for them.
func TestUnnegotiatedInteractiveEventsAreRefused(t *testing.T) {
	cases := []struct {
		name  string
		req   RunRequest
		event string
	}{
		{"approval without approvals", lookupDeclared(demo()), approvalEvent(2, `{}`)},
		{"execution without application tools", demo(), executionEvent(2)},
	}
	for _, c := range cases {
		srv, _ := countingServer(t, startedEvent, c.event, completedEvent)
		client := newTestClient(t, srv.URL)
		err := each(client.Stream(testContext(t), c.req), func(Event) error { return nil })
		expectCode(t, err, CodeUnsupportedEvent)
		if len(c.req.ApplicationTools) > 0 {
			ran := false
			functions := ToolFunctions{"lookup": func(context.Context, *ToolContext) (any, error) { ran = true; return nil, nil }}
			err = each(client.StreamWithTools(testContext(t), c.req, functions), nil)
			expectCode(t, err, CodeUnsupportedEvent)
			if ran {
				t.Fatalf("%s: the function ran", c.name)
			}
		}
	}
}

// The handles send exactly the request the event carried when the handle was made.
func TestAnswersEchoThePrivateCopy(t *testing.T) {
	bodies := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies <- string(body)
		switch r.URL.Path {
		case "/v1/approvals/decisions":
			writeJSON(w, 200, `{"approvalId":"a1","runId":"r1","callId":"c1","outcome":"denied","decidedAt":"2026-09-20T12:00:00Z"}`)
		default:
			writeJSON(w, 200, `{"executionId":"e1","runId":"r1","callId":"c1","status":"accepted"}`)
		}
	}))
	defer srv.Close()
	client := newTestClient(t, srv.URL)
	ctx := testContext(t)
	approval := &ApprovalRequest{ApprovalID: "a1", RunID: "r1", Call: ToolCall{ID: "c1", Name: "lookup",
		Arguments: map[string]json.RawMessage{"to": json.RawMessage(`"ana@example.com"`)}}}
	pending := client.Approval(Event{Type: EventApprovalRequested, Approval: approval})
	approval.ApprovalID, approval.Call.Name = "a2", "other"
	approval.Call.Arguments["to"][1] = 'X'
	pending.Request().Call.Arguments["to"][1] = 'Y'
	if _, err := pending.Deny(ctx); err != nil {
		t.Fatal(err)
	}
	execution := &ToolExecution{ExecutionID: "e1", RunID: "r1", Call: ToolCall{ID: "c1", Name: "lookup"}}
	ticket := client.Execution(Event{Type: EventToolExecutionRequested, Execution: execution})
	execution.ExecutionID = "e2"
	if _, err := ticket.Fail(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"approvalId":"a1","runId":"r1","call":{"id":"c1","name":"lookup","arguments":{"to":"ana@example.com"}},"decision":"deny"}`,
		`{"executionId":"e1","runId":"r1","callId":"c1","error":"APPLICATION_TOOL_FAILED"}`,
	}
	for i := range want {
		if body := <-bodies; body != want[i] {
			t.Errorf("body %d: %s, want %s", i, body, want[i])
		}
	}
}
