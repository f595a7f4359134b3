package agenticdriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Approvals and application-owned tools against the real host (livehost_test.go), over
// HTTP and verified HTTPS, through the one-call answers and StreamWithTools.

const lookupScript = `{"mockScript":{"steps":[{"actions":[{"toolCall":{"name":"application_lookup","arguments":{"query":"Lisbon"}}}]},{"actions":[{"echoToolResults":true}]}]}}`

func lookupRequest(requiresApproval bool) RunRequest {
	tool := ApplicationTool{
		Name: "application_lookup", Description: "Look up the forecast for a place",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"forecast":{"type":"string"}},"required":["forecast"]}`),
	}
	req := RunRequest{Provider: "mock", Model: "demo", Input: lookupScript, Tools: []string{"application_lookup"}}
	if requiresApproval {
		tool.RequiresApproval = &requiresApproval
		req.Approvals = &ApprovalOptions{Mode: "interactive", IdlePolicy: "pause"}
	}
	req.ApplicationTools = []ApplicationTool{tool}
	return req
}

// forecast is the application-owned function: it reports progress after its work and
// returns the forecast. queries records every place it was asked about.
func forecast(queries *[]string) ToolFunction {
	return func(ctx context.Context, task *ToolContext) (any, error) {
		var in struct {
			Query string `json:"query"`
		}
		if err := task.DecodeArguments(&in); err != nil {
			return nil, err
		}
		*queries = append(*queries, in.Query)
		if err := task.Progress(ctx); err != nil {
			return nil, fmt.Errorf("progress: %w", err)
		}
		return map[string]string{"forecast": "sunny in " + in.Query}, nil
	}
}

// milestones are the event types without the incidental progress, usage and step events.
func milestones(events []Event) []string {
	var types []string
	for _, ev := range events {
		if ev.Type != EventRunProgress && ev.Type != EventUsageReported && ev.Type != EventStepStarted {
			types = append(types, ev.Type)
		}
	}
	return types
}

func TestLiveApprovedFunctionReportsProgressCompletesAndRefusesAStaleResult(t *testing.T) {
	forEachLiveHost(t, func(t *testing.T, client *Client) {
		ctx := testContext(t)
		var queries []string
		var events []Event
		var requested Event
		var resolutions []*ApprovalResolution
		var stale []error
		err := each(client.StreamWithTools(ctx, lookupRequest(true), ToolFunctions{"application_lookup": forecast(&queries)}), func(ev Event) error {
			events = append(events, ev)
			switch ev.Type {
			case EventApprovalRequested:
				pending := client.Approval(ev)
				// The answer echoes the proposal as it arrived, whatever happens to the event.
				ev.Approval.ApprovalID = "another"
				ev.Approval.Call.Arguments["query"] = json.RawMessage(`"elsewhere"`)
				resolution, err := pending.Approve(ctx)
				if err != nil {
					return err
				}
				resolutions = append(resolutions, resolution)
				_, err = pending.Approve(ctx)
				stale = append(stale, err)
			case EventToolExecutionRequested:
				requested = ev
				ev.Execution.Call.Arguments["query"] = json.RawMessage(`"elsewhere"`) // the function still gets Lisbon
			case EventToolCompleted:
				ticket := client.Execution(requested)
				_, err := ticket.Complete(ctx, map[string]string{"forecast": "again"})
				stale = append(stale, err)
				_, err = ticket.Progress(ctx)
				stale = append(stale, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{EventRunStarted, EventToolCalled, EventApprovalRequested, EventApprovalResolved,
			EventToolExecutionRequested, EventToolCompleted, EventTextDelta, EventRunCompleted}
		if got := milestones(events); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		if !slices.Equal(queries, []string{"Lisbon"}) {
			t.Fatalf("the function ran for %v", queries)
		}
		if len(resolutions) != 1 || resolutions[0].Outcome != "approved" {
			t.Fatalf("resolutions %+v", resolutions)
		}
		for i, code := range []string{"APPROVAL_NOT_FOUND", "TOOL_EXECUTION_NOT_FOUND", "TOOL_EXECUTION_NOT_FOUND"} {
			if !isCode(stale[i], code) {
				t.Errorf("stale answer %d: %v, want %s", i, stale[i], code)
			}
		}
		if text := events[len(events)-1].Result.Text; text != `[{"forecast":"sunny in Lisbon"}]` {
			t.Fatalf("run text %s", text)
		}
	})
}

func TestLiveRefusedApprovalNeverRunsTheFunction(t *testing.T) {
	cases := []struct{ decision, outcome, code string }{
		{DecisionDeny, "denied", "APPROVAL_DENIED"},
		{DecisionCancel, "cancelled", "CANCELLED"},
	}
	forEachLiveHost(t, func(t *testing.T, client *Client) {
		for _, c := range cases {
			ctx := testContext(t)
			var queries []string
			var types []string
			var resolution *ApprovalResolution
			err := each(client.StreamWithTools(ctx, lookupRequest(true), ToolFunctions{"application_lookup": forecast(&queries)}), func(ev Event) error {
				types = append(types, ev.Type)
				if ev.Type != EventApprovalRequested {
					return nil
				}
				var err error
				resolution, err = client.Approval(ev).Decide(ctx, c.decision)
				return err
			})
			expectCode(t, err, c.code)
			if len(queries) != 0 || slices.Contains(types, EventToolExecutionRequested) {
				t.Fatalf("%s: the function ran (%v, events %v)", c.decision, queries, types)
			}
			if resolution == nil || resolution.Outcome != c.outcome {
				t.Fatalf("%s: resolution %+v", c.decision, resolution)
			}
		}
	})
}

func TestLiveFunctionErrorIsReportedAsTheToolsFailure(t *testing.T) {
	forEachLiveHost(t, func(t *testing.T, client *Client) {
		broken := func(context.Context, *ToolContext) (any, error) {
			return nil, errors.New("the forecast service is down")
		}
		var types []string
		err := each(client.StreamWithTools(testContext(t), lookupRequest(false), ToolFunctions{"application_lookup": broken}), func(ev Event) error {
			types = append(types, ev.Type)
			return nil
		})
		de := expectCode(t, err, "APPLICATION_TOOL_FAILED")
		if de.Outcome != OutcomeUncertain || strings.Contains(de.Message, "service is down") {
			t.Fatalf("failure %+v", de)
		}
		if slices.Contains(types, EventToolCompleted) {
			t.Fatal("a failed function completed the tool")
		}
	})
}

func TestLiveUnregisteredExecutionIsLeftToTheCallback(t *testing.T) {
	forEachLiveHost(t, func(t *testing.T, client *Client) {
		ctx := testContext(t)
		var receipts []string
		var outputs []string
		err := each(client.StreamWithTools(ctx, lookupRequest(false), nil), func(ev Event) error {
			switch ev.Type {
			case EventToolExecutionRequested:
				ticket := client.Execution(ev)
				for _, report := range []func() (*ToolExecutionReceipt, error){
					func() (*ToolExecutionReceipt, error) { return ticket.Progress(ctx) },
					func() (*ToolExecutionReceipt, error) {
						return ticket.Complete(ctx, json.RawMessage(`{"forecast":"by hand"}`))
					},
				} {
					receipt, err := report()
					if err != nil {
						return err
					}
					receipts = append(receipts, receipt.Status)
				}
			case EventToolCompleted:
				outputs = append(outputs, string(ev.Output))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(receipts, []string{"progress", "accepted"}) || !slices.Equal(outputs, []string{`{"forecast":"by hand"}`}) {
			t.Fatalf("receipts %v, outputs %v", receipts, outputs)
		}
	})
}

// The client refuses a malformed submission with the code the host answers for the very
// same body.
func TestLiveMalformedSubmissionsGetTheHostsCode(t *testing.T) {
	id := ToolExecutionIdentity{ExecutionID: "e1", RunID: "r1", CallID: "c1"}
	decision := func(mutate func(*ApprovalDecision)) ApprovalDecision {
		d := ApprovalDecision{ApprovalID: "a1", RunID: "r1", Decision: DecisionApprove,
			Call: ToolCall{ID: "c1", Name: "guarded", Arguments: map[string]json.RawMessage{"text": json.RawMessage(`"hi"`)}}}
		mutate(&d)
		return d
	}
	cases := []struct {
		name, endpoint string
		body           any
	}{
		{name: "empty approvalId", endpoint: "v1/approvals/decisions", body: decision(func(d *ApprovalDecision) { d.ApprovalID = "" })},
		{name: "unknown decision", endpoint: "v1/approvals/decisions", body: decision(func(d *ApprovalDecision) { d.Decision = "maybe" })},
		{name: "tool name", endpoint: "v1/approvals/decisions", body: decision(func(d *ApprovalDecision) { d.Call.Name = "not a name" })},
		{name: "__proto__ argument", endpoint: "v1/approvals/decisions", body: decision(func(d *ApprovalDecision) {
			d.Call.Arguments["nested"] = json.RawMessage(`{"list":[{"__proto__":{"admin":true}}]}`)
		})},
		{name: "arguments nested too deep", endpoint: "v1/approvals/decisions", body: decision(func(d *ApprovalDecision) {
			d.Call.Arguments["deep"] = json.RawMessage(strings.Repeat("[", 65) + strings.Repeat("]", 65))
		})},
		{name: "long callId", endpoint: "v1/tool-executions/progress", body: ToolExecutionIdentity{ExecutionID: "e1", RunID: "r1", CallID: strings.Repeat("c", 257)}},
		{name: "output and error", endpoint: "v1/tool-executions/results", body: ToolExecutionResult{ToolExecutionIdentity: id, Output: json.RawMessage(`1`), Error: applicationToolFailed}},
		{name: "free-form error", endpoint: "v1/tool-executions/results", body: ToolExecutionResult{ToolExecutionIdentity: id, Error: "it broke"}},
		{name: "__proto__ output", endpoint: "v1/tool-executions/results", body: ToolExecutionResult{ToolExecutionIdentity: id, Output: json.RawMessage(`{"__proto__":{}}`)}},
	}
	client, ctx := liveClient(t, "http"), testContext(t)
	for _, c := range cases {
		var err error
		switch body := c.body.(type) {
		case ApprovalDecision:
			_, err = client.DecideApproval(ctx, body)
		case ToolExecutionIdentity:
			_, err = client.ReportToolProgress(ctx, body)
		case ToolExecutionResult:
			_, err = client.CompleteTool(ctx, body)
		}
		var host *DriverError
		resp, postErr := client.call(ctx, c.endpoint, nil, c.body, "application/json")
		if resp != nil {
			resp.Body.Close()
		}
		if !errors.As(postErr, &host) || !strings.HasPrefix(host.Code, "INVALID_") {
			t.Fatalf("%s: the host answered %v", c.name, postErr)
		}
		if !isCode(err, host.Code) {
			t.Errorf("%s: the client refused with %v, the host with %s", c.name, err, host.Code)
		}
	}
}
