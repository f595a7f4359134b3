package agenticdriver

import (
	"bytes"
	"context"
	"encoding/json"
)

// One-call answers to the approval.requested and tool.execution.requested events of a
// stream. Each handle keeps a private deep copy of the event's request, so what is
// decided or reported is exactly what the host asked, whatever the application does to
// the event afterwards.

// PendingApproval answers one approval.requested event: call Approve, Deny or Cancel
// once. Each returns the host's checked receipt; what then happens to the run arrives as
// events (approval.resolved, then the tool's events or the run's terminal event).
type PendingApproval struct {
	client  *Client
	request ApprovalRequest
	err     error
}

// Approval returns the answers to an approval.requested event. For any other event
// every answer fails with INVALID_ARGUMENT.
func (c *Client) Approval(ev Event) *PendingApproval {
	if ev.Type != EventApprovalRequested || ev.Approval == nil {
		return &PendingApproval{err: newError(CodeInvalidArgument, "Approval needs an approval.requested event, not %q", ev.Type)}
	}
	request := *ev.Approval
	request.Call = copyCall(request.Call)
	return &PendingApproval{client: c, request: request}
}

// Request returns a copy of the approval request: the exact proposed call a person is
// asked to review, and when it was requested or expires.
func (a *PendingApproval) Request() ApprovalRequest {
	request := a.request
	request.Call = copyCall(request.Call)
	return request
}

// Approve lets the host run the exact reviewed call once.
func (a *PendingApproval) Approve(ctx context.Context) (*ApprovalResolution, error) {
	return a.Decide(ctx, DecisionApprove)
}

// Deny refuses the call; the host fails the run with APPROVAL_DENIED.
func (a *PendingApproval) Deny(ctx context.Context) (*ApprovalResolution, error) {
	return a.Decide(ctx, DecisionDeny)
}

// Cancel cancels the whole run; the host ends it with run.cancelled.
func (a *PendingApproval) Cancel(ctx context.Context) (*ApprovalResolution, error) {
	return a.Decide(ctx, DecisionCancel)
}

// Decide sends DecisionApprove, DecisionDeny or DecisionCancel for this approval.
func (a *PendingApproval) Decide(ctx context.Context, decision string) (*ApprovalResolution, error) {
	if a.err != nil {
		return nil, a.err
	}
	return a.client.DecideApproval(ctx, a.Request().Decide(decision))
}

// PendingExecution is the single-use ticket of one tool.execution.requested event:
// report Progress only after real work (it resets the run's idle timer), then deliver
// exactly one Complete or Fail. The host refuses a second result with
// TOOL_EXECUTION_NOT_FOUND.
type PendingExecution struct {
	client    *Client
	execution ToolExecution
	err       error
}

// Execution returns the ticket of a tool.execution.requested event. For any other event
// every call fails with INVALID_ARGUMENT.
func (c *Client) Execution(ev Event) *PendingExecution {
	if ev.Type != EventToolExecutionRequested || ev.Execution == nil {
		return &PendingExecution{err: newError(CodeInvalidArgument, "Execution needs a tool.execution.requested event, not %q", ev.Type)}
	}
	execution := *ev.Execution
	execution.Call = copyCall(execution.Call)
	return &PendingExecution{client: c, execution: execution}
}

// Execution returns a copy of the dispatched execution; its call's arguments were
// already validated by the host against the tool's input schema.
func (x *PendingExecution) Execution() ToolExecution {
	execution := x.execution
	execution.Call = copyCall(execution.Call)
	return execution
}

// Progress reports real work on the execution.
func (x *PendingExecution) Progress(ctx context.Context) (*ToolExecutionReceipt, error) {
	if x.err != nil {
		return nil, x.err
	}
	return x.client.ReportToolProgress(ctx, x.execution.Identity())
}

// Complete delivers output, encoded as JSON (a json.RawMessage is sent as is, nil as
// null); the host checks it against the tool's output schema.
func (x *PendingExecution) Complete(ctx context.Context, output any) (*ToolExecutionReceipt, error) {
	if x.err != nil {
		return nil, x.err
	}
	encoded, err := json.Marshal(output)
	if err != nil {
		return nil, newError(CodeInvalidToolExecution, "the tool output is not representable as JSON: %v", err)
	}
	return x.client.CompleteTool(ctx, ToolExecutionResult{ToolExecutionIdentity: x.execution.Identity(), Output: encoded})
}

// Fail reports that the tool failed; the host fails the run with APPLICATION_TOOL_FAILED
// and an uncertain outcome.
func (x *PendingExecution) Fail(ctx context.Context) (*ToolExecutionReceipt, error) {
	if x.err != nil {
		return nil, x.err
	}
	return x.client.CompleteTool(ctx, ToolExecutionResult{ToolExecutionIdentity: x.execution.Identity(), Error: applicationToolFailed})
}

// copyCall deep-copies a call, whose arguments are raw JSON values.
func copyCall(call ToolCall) ToolCall {
	if call.Arguments != nil {
		arguments := make(map[string]json.RawMessage, len(call.Arguments))
		for key, value := range call.Arguments {
			arguments[key] = bytes.Clone(value)
		}
		call.Arguments = arguments
	}
	return call
}
