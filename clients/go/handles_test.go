package agenticdriver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// interactiveRunServer is a host whose background run asks for approval, then (once the
// decision reached it) dispatches an application tool, then (once the result reached it)
// completes: each part of the stream is written only after the client's answer arrived.
type interactiveRunServer struct {
	t         *testing.T
	features  []string
	decided   chan map[string]any
	completed chan map[string]any
	mu        sync.Mutex
	paths     []string
}

var (
	handleCall   = map[string]any{"id": "call-1", "name": "lookup", "arguments": map[string]any{"q": "x"}}
	handleTicket = map[string]any{"executionId": "e-1", "runId": testJobRunID, "call": map[string]any{"id": "call-2", "name": "lookup", "arguments": map[string]any{"q": "x"}}}
)

func (s *interactiveRunServer) start() *Client {
	s.decided, s.completed = make(chan map[string]any, 1), make(chan map[string]any, 1)
	background := runJSON(map[string]any{"mode": "background", "jobId": testJobID, "state": "running", "cursor": 1, "expiresAt": nil, "result": nil})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		var body map[string]any
		if data, _ := io.ReadAll(r.Body); len(data) > 0 {
			_ = json.Unmarshal(data, &body)
		}
		switch r.URL.Path {
		case "/v1/protocol":
			writeJSON(w, 200, mustJSON(s.t, map[string]any{"protocol": "agenticdriver", "version": "1.0", "supportedVersions": []string{"1.0"}, "features": s.features}))
		case "/v1/runs/read":
			writeJSON(w, 200, mustJSON(s.t, background))
		case "/v1/approvals/decisions":
			writeJSON(w, 200, mustJSON(s.t, map[string]any{"approvalId": body["approvalId"], "runId": body["runId"], "callId": "call-1", "outcome": "approved", "decidedAt": "2026-09-21T12:00:00.000Z"}))
			s.decided <- body
		case "/v1/tool-executions/results":
			writeJSON(w, 200, mustJSON(s.t, map[string]any{"executionId": body["executionId"], "runId": body["runId"], "callId": body["callId"], "status": "accepted"}))
			s.completed <- body
		case "/v1/runs/" + testJobRunID + "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("AgenticDriver-Version", "1.0")
			flusher := w.(http.Flusher)
			approval := map[string]any{"approvalId": "a-1", "runId": testJobRunID, "call": handleCall, "requestedAt": "2026-09-21T12:00:00.000Z", "idlePolicy": "pause"}
			fmt.Fprint(w, frames(jobEvent(2, "approval.requested", map[string]any{"approval": approval})))
			flusher.Flush()
			select {
			case <-s.decided:
			case <-r.Context().Done():
				return
			}
			resolution := map[string]any{"approvalId": "a-1", "runId": testJobRunID, "callId": "call-1", "outcome": "approved", "decidedAt": "2026-09-21T12:00:00.000Z"}
			fmt.Fprint(w, frames(jobEvent(3, "approval.resolved", map[string]any{"resolution": resolution}), jobEvent(4, "tool.execution.requested", map[string]any{"execution": handleTicket})))
			flusher.Flush()
			var delivered map[string]any
			select {
			case delivered = <-s.completed:
			case <-r.Context().Done():
				return
			}
			output, _ := json.Marshal(delivered["output"])
			result := jobResult("demo")
			result["result"].(map[string]any)["text"] = string(output)
			fmt.Fprint(w, frames(jobEvent(5, "run.completed", result)))
		default:
			writeJSON(w, 404, `{"error":{"code":"RUN_NOT_FOUND","message":"No such run.","retryable":false}}`)
		}
	}))
	s.t.Cleanup(srv.Close)
	return newTestClient(s.t, srv.URL)
}

// followWithHandles follows the run from 1, approving each approval and completing each
// ticket with {"found":42} through the handles made from the followed events.
func followWithHandles(t *testing.T, c *Client, runID string, opts TailOptions) ([]string, error) {
	ctx := testContext(t)
	var types []string
	for ev, err := range c.FollowRun(ctx, runID, opts) {
		if err != nil {
			return types, err
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case EventApprovalRequested:
			if resolution, err := c.Approval(ev).Approve(ctx); err != nil || resolution.Outcome != "approved" {
				t.Fatalf("Approve: %+v %v", resolution, err)
			}
		case EventToolExecutionRequested:
			if receipt, err := c.Execution(ev).Complete(ctx, map[string]any{"found": 42}); err != nil || receipt.Status != "accepted" {
				t.Fatalf("Complete: %+v %v", receipt, err)
			}
		}
	}
	return types, nil
}

func TestFollowRunHandlesOnABackgroundRunWithInteractiveJobs(t *testing.T) {
	s := &interactiveRunServer{t: t, features: []string{"durable-jobs", "run-records", "interactive-jobs"}}
	types, err := followWithHandles(t, s.start(), testJobRunID, TailOptions{After: 1})
	if err != nil || strings.Join(types, ",") != "approval.requested,approval.resolved,tool.execution.requested,run.completed" {
		t.Fatalf("followed %v: %v", types, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := "/v1/runs/read /v1/protocol /v1/runs/" + testJobRunID + "/stream /v1/approvals/decisions /v1/tool-executions/results"; strings.Join(s.paths, " ") != want {
		t.Fatalf("requests %v, want %s", s.paths, want)
	}
}

func TestFollowRunGivesNoHandleWithoutInteractiveJobs(t *testing.T) {
	s := &interactiveRunServer{t: t, features: []string{"durable-jobs", "run-records"}}
	types, err := followWithHandles(t, s.start(), testJobRunID, TailOptions{After: 1})
	if codeOf(err) != CodeUnsupportedEvent || len(types) != 0 {
		t.Fatalf("followed %v: %v, want UNSUPPORTED_EVENT before any event", types, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, path := range s.paths {
		if strings.Contains(path, "approvals") {
			t.Fatalf("a decision was sent: %v", s.paths)
		}
	}
}

func TestWaitRunAnswersAFinishedRunFromItsRecord(t *testing.T) {
	s := &recordServer{t: t, run: runJSON(nil)}
	if result, err := s.start().WaitRun(testContext(t), testJobRunID, TailOptions{}); err != nil || result.Text != "Hello" {
		t.Fatalf("WaitRun: %+v %v", result, err)
	}
	failed := runJSON(map[string]any{"state": "failed", "result": nil, "error": map[string]any{"code": "APPROVAL_DENIED", "message": "Denied.", "retryable": false}})
	s = &recordServer{t: t, run: failed}
	_, err := s.start().WaitRun(testContext(t), testJobRunID, TailOptions{})
	if de := expectCode(t, err, "APPROVAL_DENIED"); de.Retryable || len(s.lastIDs) != 0 {
		t.Fatalf("WaitRun: %+v with %d streams", de, len(s.lastIDs))
	}
}

func TestWaitRunFollowsARunningRunFromItsCursor(t *testing.T) {
	log := completedLog()
	failed := jobEvent(4, "run.failed", map[string]any{"error": map[string]any{"code": "PROVIDER_ERROR", "message": "Gone.", "retryable": true, "outcome": "uncertain"}})
	s := &recordServer{t: t, run: runningRun(2), connections: []func(http.ResponseWriter, string){serve(log[2], failed)}}
	_, err := s.start().WaitRun(testContext(t), testJobRunID, fastTail)
	if de := expectCode(t, err, "PROVIDER_ERROR"); !de.Retryable || de.Outcome != "uncertain" || fmt.Sprint(s.lastIDs) != "[2]" {
		t.Fatalf("WaitRun: %+v, Last-Event-ID %v", de, s.lastIDs)
	}
}

func TestLiveBackgroundRunIsAnsweredThroughHandlesAndWaitedFor(t *testing.T) {
	client, ctx := liveClient(t, "http"), testContext(t)
	script, _ := json.Marshal(map[string]any{"mockScript": map[string]any{"steps": []any{
		map[string]any{"actions": []any{map[string]any{"toolCall": map[string]any{"name": "guarded", "arguments": map[string]any{"n": 1}, "id": "g1"}}}},
		map[string]any{"actions": []any{map[string]any{"toolCall": map[string]any{"name": "application_lookup", "arguments": map[string]any{"q": "x"}, "id": "l1"}}}},
		map[string]any{"actions": []any{map[string]any{"echoToolResults": true}}},
	}}})
	job, err := client.SubmitJob(ctx, JobSubmit{Key: fmt.Sprintf("handles-%d", time.Now().UnixNano()), Request: RunRequest{
		Provider: "mock", Model: "demo", Input: string(script), Tools: []string{"guarded", "application_lookup"},
		ApplicationTools: []ApplicationTool{{Name: "application_lookup", Description: "Looks something up.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Approvals:        &ApprovalOptions{Mode: "interactive", IdlePolicy: "pause"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	types, err := followWithHandles(t, client, job.RunID, TailOptions{})
	if err != nil || !strings.Contains(strings.Join(types, ","), "approval.requested,approval.resolved") || types[len(types)-1] != "run.completed" {
		t.Fatalf("followed %v: %v", types, err)
	}
	result, err := client.WaitRun(ctx, job.RunID, TailOptions{})
	if err != nil || result.RunID != job.RunID || result.Text != `[{"found":42}]` {
		t.Fatalf("WaitRun: %+v %v", result, err)
	}
}
