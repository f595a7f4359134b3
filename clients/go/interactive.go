package agenticdriver

import (
	"context"
)

var decisionOutcomes = map[string]string{
	DecisionApprove: "approved",
	DecisionDeny:    "denied",
	DecisionCancel:  "cancelled",
}

// DecideApproval approves, denies or cancels one pending approval and returns the
// host's resolution, checked against the decision.
func (c *Client) DecideApproval(ctx context.Context, d ApprovalDecision) (*ApprovalResolution, error) {
	var r ApprovalResolution
	if err := c.getJSON(ctx, "v1/approvals/decisions", nil, &d, approvalResolutionRule, &r); err != nil {
		return nil, exchangeError(ctx, err)
	}
	switch {
	case r.ApprovalID != d.ApprovalID || r.RunID != d.RunID || r.CallID != d.Call.ID:
		return nil, reconcileError("the approval receipt names another approval")
	case r.Outcome != decisionOutcomes[d.Decision]:
		return nil, reconcileError("the approval receipt outcome " + r.Outcome + " does not match the decision " + d.Decision)
	}
	return &r, nil
}

// ReportToolProgress reports real progress on a dispatched application tool, which
// resets the run's idle timer.
func (c *Client) ReportToolProgress(ctx context.Context, id ToolExecutionIdentity) (*ToolExecutionReceipt, error) {
	return c.toolExecutionCall(ctx, "v1/tool-executions/progress", &id, id, "progress")
}

// CompleteTool delivers the one result of a dispatched application tool.
func (c *Client) CompleteTool(ctx context.Context, result ToolExecutionResult) (*ToolExecutionReceipt, error) {
	if (result.Output == nil) == (result.Error == "") {
		return nil, newError("INVALID_TOOL_EXECUTION", "a tool result carries exactly one of Output and Error")
	}
	return c.toolExecutionCall(ctx, "v1/tool-executions/results", &result, result.ToolExecutionIdentity, "accepted")
}

func (c *Client) toolExecutionCall(ctx context.Context, endpoint string, body any, id ToolExecutionIdentity, status string) (*ToolExecutionReceipt, error) {
	var receipt ToolExecutionReceipt
	if err := c.getJSON(ctx, endpoint, nil, body, toolExecutionReceiptRule, &receipt); err != nil {
		return nil, exchangeError(ctx, err)
	}
	if receipt.ToolExecutionIdentity != id || receipt.Status != status {
		return nil, reconcileError("the tool-execution receipt does not match the submission")
	}
	return &receipt, nil
}

// reconcileError reports a receipt that does not match what was sent: the effect on the
// host is unknown, so the caller must reconcile rather than retry.
func reconcileError(detail string) error {
	return newError(CodeInvalidResponse, "%s; reconcile, do not retry", detail)
}
