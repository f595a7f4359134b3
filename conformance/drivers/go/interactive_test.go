package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	agenticdriver "github.com/agenticdriver/agenticdriver/clients/go"
)

const (
	guardedScript = `{"mockScript":{"steps":[{"actions":[{"toolCall":{"name":"guarded","arguments":{"text":"hi"}}}]},{"actions":[{"echoToolResults":true}]}]}}`
	lookupScript  = `{"mockScript":{"steps":[{"actions":[{"toolCall":{"name":"application_lookup","arguments":{"query":"x"}}}]},{"actions":[{"echoToolResults":true}]}]}}`
)

func init() {
	liveScenarios = append(liveScenarios,
		liveScenario{name: "approval-approve", run: approvalScenario(agenticdriver.DecisionApprove, "approved", "")},
		liveScenario{name: "background-approval", run: liveBackgroundApproval},
		liveScenario{name: "approval-deny", run: approvalScenario(agenticdriver.DecisionDeny, "denied", "APPROVAL_DENIED")},
		liveScenario{name: "approval-cancel", run: approvalScenario(agenticdriver.DecisionCancel, "cancelled", "CANCELLED")},
		liveScenario{name: "approval-expire", run: approvalScenario("", "expired", "APPROVAL_EXPIRED")},
		liveScenario{name: "application-tool", run: applicationToolScenario(false)},
		liveScenario{name: "application-tool-approved", run: applicationToolScenario(true)},
	)
}

func pauseApprovals() *agenticdriver.ApprovalOptions {
	return &agenticdriver.ApprovalOptions{Mode: "interactive", IdlePolicy: "pause"}
}

// streamRecording streams req and records every event; onEvent may act on the host.
func streamRecording(ctx context.Context, client *agenticdriver.Client, req agenticdriver.RunRequest,
	onEvent func(agenticdriver.Event) error) ([]agenticdriver.Event, error) {
	var events []agenticdriver.Event
	err := each(client.Stream(ctx, req), func(ev agenticdriver.Event) error {
		events = append(events, ev)
		return onEvent(ev)
	})
	return events, err
}

func eventOf(events []agenticdriver.Event, typ string) *agenticdriver.Event {
	for i := range events {
		if events[i].Type == typ {
			return &events[i]
		}
	}
	return nil
}

// approvalScenario answers the guarded tool's approval with one call (no decision = let
// it expire) and checks the resolution, the terminal outcome and that a second decision
// is refused.
func approvalScenario(decision, outcome, failure string) func(context.Context, *harness) error {
	return func(ctx context.Context, h *harness) error {
		client, err := h.client(h.liveURL, h.token)
		if err != nil {
			return err
		}
		req := demoRequest(guardedScript)
		req.Tools = []string{"guarded"}
		req.Approvals = pauseApprovals()
		if decision == "" {
			req.Approvals.ExpiresAfterMs = 20
		}
		var pending *agenticdriver.PendingApproval
		events, err := streamRecording(ctx, client, req, func(ev agenticdriver.Event) error {
			if ev.Type != agenticdriver.EventApprovalRequested || decision == "" {
				return nil
			}
			pending = client.Approval(ev)
			receipt, err := pending.Decide(ctx, decision)
			if err != nil {
				return fmt.Errorf("decide: %w", err)
			}
			if receipt.Outcome != outcome || receipt.CallID != ev.Approval.Call.ID {
				return fmt.Errorf("receipt %+v", receipt)
			}
			return nil
		})
		if failure == "" && err != nil || failure != "" && expectCode(err, failure) != nil {
			return fmt.Errorf("stream ended with %v, want %q", err, failure)
		}
		if r := eventOf(events, agenticdriver.EventApprovalResolved); r == nil || r.Resolution.Outcome != outcome {
			return fmt.Errorf("approval.resolved missing or not %s", outcome)
		}
		if (eventOf(events, agenticdriver.EventToolCompleted) != nil) != (outcome == "approved") {
			return errors.New("tool.completed presence does not match the decision")
		}
		if outcome == "approved" {
			done := eventOf(events, agenticdriver.EventRunCompleted)
			if want := `[{"approved":true,"arguments":{"text":"hi"}}]`; done == nil || done.Result.Text != want {
				return fmt.Errorf("run.completed text is not %s", want)
			}
		}
		if pending != nil {
			if _, err := pending.Decide(ctx, decision); expectCode(err, "APPROVAL_NOT_FOUND") != nil {
				return fmt.Errorf("second decision: %v", err)
			}
		}
		return nil
	}
}

// liveBackgroundApproval: a job that waits for approval is followed, approved through the
// handle made from the followed event, and waited for.
func liveBackgroundApproval(ctx context.Context, h *harness) error {
	client, err := h.client(h.liveURL, h.token)
	if err != nil {
		return err
	}
	req := demoRequest(guardedScript)
	req.Tools = []string{"guarded"}
	req.Approvals = pauseApprovals()
	job, err := client.SubmitJob(ctx, agenticdriver.JobSubmit{Key: freshKey(), Request: req})
	if err != nil {
		return err
	}
	var events []agenticdriver.Event
	err = each(client.FollowRun(ctx, job.RunID, agenticdriver.TailOptions{}), func(ev agenticdriver.Event) error {
		events = append(events, ev)
		if ev.Type != agenticdriver.EventApprovalRequested {
			return nil
		}
		receipt, err := client.Approval(ev).Approve(ctx)
		if err != nil || receipt.Outcome != "approved" {
			return fmt.Errorf("approve: %+v %v", receipt, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("FollowRun: %w", err)
	}
	for i, ev := range events {
		if ev.Sequence != int64(i+1) {
			return fmt.Errorf("event %d has sequence %d", i, ev.Sequence)
		}
	}
	if r := eventOf(events, agenticdriver.EventApprovalResolved); r == nil || r.Resolution.Outcome != "approved" {
		return errors.New("approval.resolved missing or not approved")
	}
	if eventOf(events, agenticdriver.EventToolCompleted) == nil {
		return errors.New("no tool.completed")
	}
	want := `[{"approved":true,"arguments":{"text":"hi"}}]`
	if last := events[len(events)-1]; last.Type != agenticdriver.EventRunCompleted || last.Result.Text != want {
		return fmt.Errorf("the last event: %s %s", last.Type, last.Raw)
	}
	result, err := client.WaitRun(ctx, job.RunID, agenticdriver.TailOptions{})
	if err != nil || result.RunID != job.RunID || result.Text != want {
		return fmt.Errorf("WaitRun: %+v %v", result, err)
	}
	read, err := client.ReadRun(ctx, job.RunID)
	if err != nil || read.Mode != "background" || read.State != "completed" || read.Cursor != int64(len(events)) {
		return fmt.Errorf("ReadRun: %+v %v", read, err)
	}
	return nil
}

// applicationToolScenario runs application_lookup as a registered function (progress,
// then its output) and sees a second result refused.
func applicationToolScenario(withApproval bool) func(context.Context, *harness) error {
	return func(ctx context.Context, h *harness) error {
		client, err := h.client(h.liveURL, h.token)
		if err != nil {
			return err
		}
		tool := agenticdriver.ApplicationTool{
			Name: "application_lookup", Description: "Look something up",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`),
		}
		req := demoRequest(lookupScript)
		req.Tools = []string{"application_lookup"}
		if withApproval {
			approve := true
			tool.RequiresApproval = &approve
			req.Approvals = pauseApprovals()
		}
		req.ApplicationTools = []agenticdriver.ApplicationTool{tool}
		executions := 0
		lookup := func(ctx context.Context, task *agenticdriver.ToolContext) (any, error) {
			executions++
			if err := task.Progress(ctx); err != nil {
				return nil, err
			}
			return json.RawMessage(`{"answer":42}`), nil
		}
		var requested agenticdriver.Event
		var stale error
		functions := agenticdriver.ToolFunctions{"application_lookup": lookup}
		var events []agenticdriver.Event
		err = each(client.StreamWithTools(ctx, req, functions), func(ev agenticdriver.Event) error {
			events = append(events, ev)
			switch ev.Type {
			case agenticdriver.EventApprovalRequested:
				_, err := client.Approval(ev).Approve(ctx)
				return err
			case agenticdriver.EventToolExecutionRequested:
				requested = ev
			case agenticdriver.EventToolCompleted:
				_, stale = client.Execution(requested).Complete(ctx, json.RawMessage(`{"answer":42}`))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if executions != 1 {
			return fmt.Errorf("%d executions, want 1", executions)
		}
		if err := expectCode(stale, "TOOL_EXECUTION_NOT_FOUND"); err != nil {
			return fmt.Errorf("second result: %v", err)
		}
		if withApproval && eventOf(events, agenticdriver.EventApprovalResolved) == nil {
			return errors.New("no approval.resolved before the execution")
		}
		if done := eventOf(events, agenticdriver.EventRunCompleted); done == nil || done.Result.Text != `[{"answer":42}]` {
			return fmt.Errorf("run.completed text is not [{\"answer\":42}]")
		}
		return nil
	}
}
