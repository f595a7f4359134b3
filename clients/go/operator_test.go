package agenticdriver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func operatorRecorder(t *testing.T, status int, body string) (*OperatorClient, *[]seenRequest) {
	seen := &[]seenRequest{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(seen, r)
		writeJSON(w, status, body)
	}))
	t.Cleanup(srv.Close)
	o, err := NewOperator(srv.URL, testToken)
	if err != nil {
		t.Fatal(err)
	}
	return o, seen
}

const (
	operatorRun = `{"runId":"00000000-0000-4000-8000-000000000002","subject":"alice","provider":"mock","model":"demo","state":"running","startedAt":"2026-09-21T12:00:00.000Z","steps":1,"usage":{}}`
	usageTotals = `{"runs":1,"completed":1,"failed":0,"cancelled":0,"interrupted":0,"incompleteRuns":0,"inputTokens":3,"outputTokens":2,"cachedInputTokens":0,"reasoningTokens":0,"durationMs":12,"costUsd":0,"apiEquivalentCostUsd":0}`
)

func TestOperatorCalls(t *testing.T) {
	finished := 5
	cases := []struct {
		name, path, sent, good, bad string
		call                        func(*OperatorClient) error
	}{
		{"runs", "/v1/operator/runs", `{"before":"opaque-cursor","finished":5,"provider":"mock","search":"quota","state":"failed","subject":"alice"}`,
			`{"active":[` + operatorRun + `],"finished":[],"nextBefore":"next-cursor"}`, `{"active":[{"runId":"x"}],"finished":[]}`,
			func(o *OperatorClient) error {
				list, err := o.Runs(t.Context(), OperatorRunsRequest{Finished: &finished, Before: "opaque-cursor", State: "failed", Subject: "alice", Provider: "mock", Search: "quota"})
				if err == nil && list.NextBefore != "next-cursor" {
					return fmt.Errorf("next page: %q", list.NextBefore)
				}
				return err
			}},
		{"approvals", "/v1/operator/approvals", `{"limit":10}`, `{"approvals":[]}`, `{"approvals":[{"subject":"alice"}]}`,
			func(o *OperatorClient) error {
				_, err := o.Approvals(t.Context(), OperatorListRequest{Limit: 10})
				return err
			}},
		{"jobs", "/v1/operator/jobs", `{"state":"running"}`, `{"jobs":[]}`, `{"jobs":{}}`,
			func(o *OperatorClient) error {
				_, err := o.Jobs(t.Context(), OperatorJobsRequest{State: "running"})
				return err
			}},
		{"usage", "/v1/operator/usage", `{"by":"subject"}`, `{"totals":[` + usageTotals + `]}`, `{"totals":[{"runs":-1}]}`,
			func(o *OperatorClient) error {
				_, err := o.Usage(t.Context(), OperatorUsageRequest{By: "subject"})
				return err
			}},
		{"limits", "/v1/operator/limits", `{"subject":"alice"}`,
			`{"limits":[{"scope":"subject","name":"alice","requestsPerMinute":60,"budgets":[{"unit":"usd","period":"day","limit":5,"used":1.25,"reserved":0.5,"remaining":3.25,"resetsAt":"2026-09-21T12:00:00.000Z"}]}]}`,
			`{"limits":[{"scope":"subject","budgets":[{"unit":"usd","period":"day","limit":5,"used":-1,"reserved":0,"remaining":5,"resetsAt":"2026-09-21T12:00:00.000Z"}]}]}`,
			func(o *OperatorClient) error {
				answer, err := o.Limits(t.Context(), OperatorLimitsRequest{Subject: "alice"})
				if err == nil && (answer.Limits[0].RequestsPerMinute != 60 || answer.Limits[0].Budgets[0].Remaining != 3.25) {
					return fmt.Errorf("limits read back: %+v", answer.Limits)
				}
				return err
			}},
		{"audit", "/v1/operator/audit", `{"limit":2}`, `{"records":[{"id":7,"kind":"approval.resolved","at":"2026-09-21T12:00:00.000Z","subject":"alice","operator":"ops"}],"nextBefore":7}`,
			`{"records":[{"id":0,"kind":"approval.resolved","at":"2026-09-21T12:00:00.000Z","subject":"alice"}]}`,
			func(o *OperatorClient) error {
				_, err := o.Audit(t.Context(), OperatorAuditRequest{Limit: 2})
				return err
			}},
	}
	for _, c := range cases {
		o, seen := operatorRecorder(t, 200, c.good)
		if err := c.call(o); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := (*seen)[0]
		if got.path != c.path || got.auth != "Bearer "+testToken || toJSON(got.body) != c.sent {
			t.Errorf("%s sent %+v", c.name, got)
		}
		o, _ = operatorRecorder(t, 200, c.bad)
		if err := c.call(o); !isCode(err, CodeInvalidResponse) {
			t.Errorf("%s with a malformed answer: %v", c.name, err)
		}
		o, _ = operatorRecorder(t, 403, `{"error":{"code":"FORBIDDEN","message":"no operator grant","retryable":false}}`)
		if err := c.call(o); !isCode(err, "FORBIDDEN") {
			t.Errorf("%s without the grant: %v", c.name, err)
		}
	}

	o, seen := operatorRecorder(t, 200, `{"runs":[]}`)
	tooMany := 101
	longSubject := strings.Repeat("s", 257)
	for name, err := range map[string]error{
		"runs":      func() error { _, err := o.Runs(t.Context(), OperatorRunsRequest{Finished: &tooMany}); return err }(),
		"run":       func() error { _, err := o.Run(t.Context(), "../runs"); return err }(),
		"state":     func() error { _, err := o.Runs(t.Context(), OperatorRunsRequest{State: "asleep"}); return err }(),
		"jobs":      func() error { _, err := o.Jobs(t.Context(), OperatorJobsRequest{State: "asleep"}); return err }(),
		"usage":     func() error { _, err := o.Usage(t.Context(), OperatorUsageRequest{By: "week"}); return err }(),
		"limits":    func() error { _, err := o.Limits(t.Context(), OperatorLimitsRequest{Subject: longSubject}); return err }(),
		"approvals": func() error { _, err := o.Approvals(t.Context(), OperatorListRequest{Limit: 101}); return err }(),
	} {
		if !isCode(err, CodeInvalidOperatorRequest) {
			t.Errorf("malformed %s request: %v", name, err)
		}
	}
	if len(*seen) != 0 {
		t.Errorf("%d malformed requests were sent", len(*seen))
	}
}

func TestOperatorDecisionChecksTheReceipt(t *testing.T) {
	d := ApprovalDecision{ApprovalID: "appr-1", RunID: "00000000-0000-4000-8000-000000000002", Call: ToolCall{ID: "call-1", Name: "guarded", Arguments: map[string]json.RawMessage{"text": json.RawMessage(`"hi"`)}}, Decision: "deny"}
	receipt := `{"approvalId":"appr-1","runId":"00000000-0000-4000-8000-000000000002","callId":"call-1","outcome":"%s","decidedAt":"2026-09-21T12:00:00.000Z"}`
	o, seen := operatorRecorder(t, 200, fmt.Sprintf(receipt, "denied"))
	if r, err := o.DecideApproval(t.Context(), d); err != nil || r.Outcome != "denied" || (*seen)[0].path != "/v1/operator/approvals/decisions" {
		t.Fatalf("decide: %+v %v %+v", r, err, *seen)
	}
	o, _ = operatorRecorder(t, 200, fmt.Sprintf(receipt, "approved"))
	if _, err := o.DecideApproval(t.Context(), d); !isCode(err, CodeInvalidResponse) {
		t.Errorf("a receipt with another outcome: %v", err)
	}
}

func TestOperatorRunPage(t *testing.T) {
	step := `{"step":1,"startedAt":"2026-09-21T12:00:00.000Z","durationMs":40,"usage":{"inputTokens":3},"tools":[{"callId":"call-1","name":"guarded","calledAt":"2026-09-21T12:00:00.000Z","approval":{"requestedAt":"2026-09-21T12:00:00.000Z","outcome":"approved"}}]}`
	o, seen := operatorRecorder(t, 200, `{"run":`+operatorRun+`,"steps":[`+step+`]}`)
	detail, err := o.Run(t.Context(), tapRun)
	if err != nil || len(detail.Steps) != 1 || detail.Steps[0].Tools[0].Approval.Outcome != "approved" || detail.Run.RunID != tapRun {
		t.Fatalf("run page: %+v %v", detail, err)
	}
	if got := (*seen)[0]; got.path != "/v1/operator/runs/"+tapRun || got.auth != "Bearer "+testToken || got.body != nil {
		t.Errorf("sent %+v", got)
	}
	other := strings.Replace(operatorRun, tapRun, "00000000-0000-4000-8000-000000000009", 1)
	o, _ = operatorRecorder(t, 200, `{"run":`+other+`}`)
	if _, err := o.Run(t.Context(), tapRun); !isCode(err, CodeInvalidResponse) {
		t.Errorf("another run's page: %v", err)
	}
	o, _ = operatorRecorder(t, 200, `{"run":`+operatorRun+`,"steps":[{"step":0}]}`)
	if _, err := o.Run(t.Context(), tapRun); !isCode(err, CodeInvalidResponse) {
		t.Errorf("a malformed step: %v", err)
	}
	o, _ = operatorRecorder(t, 404, `{"error":{"code":"RUN_NOT_FOUND","message":"no such run","retryable":false}}`)
	if _, err := o.Run(t.Context(), tapRun); !isCode(err, "RUN_NOT_FOUND") {
		t.Errorf("an unknown run: %v", err)
	}
}

// feedServer streams body as the update feed; with hold it then keeps the connection open
// until the client leaves, and closes left when it does.
func feedServer(t *testing.T, contentType, body string, hold bool) (*OperatorClient, chan struct{}) {
	left := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/operator/updates" || r.Method != http.MethodGet || r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("AgenticDriver-Version", "1.0")
		fmt.Fprint(w, body)
		w.(http.Flusher).Flush()
		if hold {
			<-r.Context().Done()
			close(left)
		}
	}))
	t.Cleanup(srv.Close)
	o, err := NewOperator(srv.URL, testToken)
	if err != nil {
		t.Fatal(err)
	}
	return o, left
}

func TestOperatorUpdates(t *testing.T) {
	updates := []string{
		`{"type":"snapshot","at":"2026-09-21T12:00:00.000Z","active":[` + operatorRun + `],"pendingApprovals":0}`,
		`{"type":"run","at":"2026-09-21T12:00:00.000Z","run":` + strings.Replace(operatorRun, `"usage":{}`, `"usage":{},"waiting":{"kind":"approval","since":"2026-09-21T12:00:00.000Z","tool":"guarded"}`, 1) + `}`,
		`{"type":"a-kind-added-later","at":"2026-09-21T12:00:00.000Z"}`,
	}
	frames := ""
	for _, update := range updates {
		frames += "data: " + update + "\n\n"
	}
	o, _ := feedServer(t, "text/event-stream", frames, false)
	var got []OperatorUpdate
	for update, err := range o.Updates(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, update)
	}
	if len(got) != 3 || got[0].Type != "snapshot" || got[0].PendingApprovals == nil || *got[0].PendingApprovals != 0 || len(got[0].Active) != 1 ||
		got[1].Run.Waiting.Kind != "approval" || got[2].Type != "a-kind-added-later" {
		t.Fatalf("updates: %+v", got)
	}

	for name, body := range map[string]string{
		"a malformed update": "data: " + updates[0] + "\n\ndata: {\"type\":\"run\",\"at\":\"yesterday\"}\n\n",
		"not JSON":           "data: {not json\n\n",
	} {
		o, _ := feedServer(t, "text/event-stream", body, false)
		var last error
		for _, err := range o.Updates(t.Context()) {
			last = err
		}
		if !isCode(last, CodeInvalidResponse) {
			t.Errorf("%s: %v", name, last)
		}
	}
	o, _ = feedServer(t, "application/json", frames, false)
	for _, err := range o.Updates(t.Context()) {
		if !isCode(err, CodeInvalidResponse) {
			t.Errorf("not an event stream: %v", err)
		}
	}
}

func TestLeavingTheUpdateFeedClosesTheConnection(t *testing.T) {
	o, left := feedServer(t, "text/event-stream", `data: {"type":"snapshot","at":"2026-09-21T12:00:00.000Z","active":[]}`+"\n\n", true)
	for update, err := range o.Updates(t.Context()) {
		if err != nil || update.Type != "snapshot" {
			t.Fatalf("%+v %v", update, err)
		}
		break
	}
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection stayed open after the loop was left")
	}
}

// operatorStream answers every request with the SSE body of events.
func operatorStream(t *testing.T, events ...string) (*OperatorClient, *[]seenRequest) {
	seen := &[]seenRequest{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(seen, r)
		w.Header().Set("AgenticDriver-Version", "1.0")
		w.Header().Set("Content-Type", "text/event-stream")
		for _, event := range events {
			fmt.Fprintf(w, "data: %s\n\n", event)
		}
	}))
	t.Cleanup(srv.Close)
	o, err := NewOperator(srv.URL, testToken)
	if err != nil {
		t.Fatal(err)
	}
	return o, seen
}

const tapRun = "00000000-0000-4000-8000-000000000002"

func tapEvent(typ string, sequence int, payload string) string {
	return fmt.Sprintf(`{"type":%q,"runId":%q,"sequence":%d,"timestamp":"2026-09-21T12:00:00.000Z",%s}`, typ, tapRun, sequence, payload)
}

var tapCompleted = tapEvent("run.completed", 7, `"result":{"runId":"`+tapRun+`","provider":"mock","model":"demo","text":"hi","usage":{},"steps":1,"finishReason":"stop"}`)

func collect(events func(func(Event, error) bool)) (sequences []int64, err error) {
	for ev, e := range events {
		if e != nil {
			return sequences, e
		}
		sequences = append(sequences, ev.Sequence)
	}
	return sequences, nil
}

func TestOperatorWatchRunFollowsOneRunToItsTerminalEvent(t *testing.T) {
	delta5, delta6 := tapEvent("text.delta", 5, `"text":"h"`), tapEvent("text.delta", 6, `"text":"i"`)
	o, seen := operatorStream(t, delta5, delta6, tapCompleted, tapEvent("text.delta", 8, `"text":"late"`))
	sequences, err := collect(o.WatchRun(t.Context(), tapRun))
	if err != nil || fmt.Sprint(sequences) != "[5 6 7]" {
		t.Fatalf("watched %v, %v", sequences, err)
	}
	if got := (*seen)[0]; got.method != http.MethodGet || got.path != "/v1/operator/runs/"+tapRun+"/events" {
		t.Fatalf("sent %+v", got)
	}
	// Dropped for falling behind: the watch ends without a terminal event and without an error.
	o, _ = operatorStream(t, delta5, delta6)
	if sequences, err := collect(o.WatchRun(t.Context(), tapRun)); err != nil || len(sequences) != 2 {
		t.Fatalf("a dropped watch: %v, %v", sequences, err)
	}
	for _, bad := range [][]string{{delta6, delta5}, {strings.Replace(delta5, tapRun, "another-run", 1)}, {`{"type":"text.delta"}`}} {
		o, _ = operatorStream(t, bad...)
		if _, err := collect(o.WatchRun(t.Context(), tapRun)); !isCode(err, CodeInvalidResponse) {
			t.Errorf("%v: %v, want INVALID_RESPONSE", bad, err)
		}
	}
	o, seen = operatorStream(t)
	if _, err := collect(o.WatchRun(t.Context(), "RUN-1")); !isCode(err, CodeInvalidOperatorRequest) || len(*seen) != 0 {
		t.Fatalf("a malformed run id: %v after %d requests", err, len(*seen))
	}
}

func TestOperatorTailJobResumesAfterASequence(t *testing.T) {
	const job = "00000000-0000-4000-8000-000000000009"
	o, seen := operatorStream(t, tapEvent("text.delta", 6, `"text":"i"`), tapCompleted)
	if sequences, err := collect(o.TailJob(t.Context(), job, 5)); err != nil || fmt.Sprint(sequences) != "[6 7]" {
		t.Fatalf("tailed %v, %v", sequences, err)
	}
	if got := (*seen)[0]; got.path != "/v1/operator/jobs/"+job+"/stream" || got.header.Get("Last-Event-ID") != "5" {
		t.Fatalf("sent %+v", got)
	}
	if _, err := collect(o.TailJob(t.Context(), job, 7)); !isCode(err, CodeInvalidResponse) {
		t.Fatalf("an event at or before after: %v", err)
	}
	if _, err := collect(o.TailJob(t.Context(), "not-a-job", 0)); !isCode(err, CodeInvalidJob) {
		t.Fatalf("a malformed job id: %v", err)
	}
	if _, err := collect(o.TailJob(t.Context(), job, -1)); !isCode(err, CodeInvalidJobCursor) {
		t.Fatalf("a negative after: %v", err)
	}
}
