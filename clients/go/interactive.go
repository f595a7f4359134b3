package agenticdriver

import (
	"context"
	"encoding/json"
)

// DecideApproval approves, denies or cancels one pending approval and returns the
// host's resolution, checked against the decision. A malformed decision is refused with
// INVALID_APPROVAL before anything is sent.
func (c *Client) DecideApproval(ctx context.Context, d ApprovalDecision) (*ApprovalResolution, error) {
	return c.decide(ctx, opDecideApproval, d)
}

// decide posts a decision and checks that the receipt answers exactly it.
func (c *Client) decide(ctx context.Context, op operation, d ApprovalDecision) (*ApprovalResolution, error) {
	body, err := decisionBody(d)
	if err != nil {
		return nil, err
	}
	var r ApprovalResolution
	if err := c.send(ctx, op, nil, body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReportToolProgress reports real progress on a dispatched application tool, which
// resets the run's idle timer.
func (c *Client) ReportToolProgress(ctx context.Context, id ToolExecutionIdentity) (*ToolExecutionReceipt, error) {
	body, err := progressBody(id)
	if err != nil {
		return nil, err
	}
	return c.toolExecutionCall(ctx, opReportToolProgress, body)
}

// CompleteTool delivers the one result of a dispatched application tool: exactly one of
// Output and Error.
func (c *Client) CompleteTool(ctx context.Context, result ToolExecutionResult) (*ToolExecutionReceipt, error) {
	body, err := resultBody(result)
	if err != nil {
		return nil, err
	}
	return c.toolExecutionCall(ctx, opCompleteTool, body)
}

func (c *Client) toolExecutionCall(ctx context.Context, op operation, body json.RawMessage) (*ToolExecutionReceipt, error) {
	var receipt ToolExecutionReceipt
	if err := c.send(ctx, op, nil, body, &receipt); err != nil {
		return nil, err
	}
	return &receipt, nil
}
