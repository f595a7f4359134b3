package agenticdriver

import "context"

// OperatorClient calls the /v1/operator/... endpoints with a token that has the operator
// grant: every subject's runs, pending approvals, jobs, usage totals and the approval
// audit log. Any other token gets FORBIDDEN. Requests are checked before sending, answers
// like every other answer (INVALID_RESPONSE).
type OperatorClient struct {
	client *Client
}

// NewOperator makes an operator client; it takes the same options as New.
func NewOperator(baseURL, token string, opts ...Option) (*OperatorClient, error) {
	c, err := New(baseURL, token, opts...)
	if err != nil {
		return nil, err
	}
	return &OperatorClient{client: c}, nil
}

// Runs lists the runs this replica is serving now and the most recently finished ones
// (POST /v1/operator/runs).
func (o *OperatorClient) Runs(ctx context.Context, req OperatorRunsRequest) (*OperatorRunList, error) {
	return operatorCall[OperatorRunList](ctx, o.client, opOperatorListRuns, req)
}

// Approvals lists pending approvals of every subject, oldest first (POST /v1/operator/approvals).
func (o *OperatorClient) Approvals(ctx context.Context, req OperatorListRequest) (*OperatorApprovalList, error) {
	return operatorCall[OperatorApprovalList](ctx, o.client, opOperatorListApprovals, req)
}

// DecideApproval decides any subject's pending approval (POST
// /v1/operator/approvals/decisions); the receipt must answer exactly this decision.
func (o *OperatorClient) DecideApproval(ctx context.Context, d ApprovalDecision) (*ApprovalResolution, error) {
	return o.client.decide(ctx, opOperatorDecideApproval, d)
}

// Jobs lists durable jobs of every subject, most recently updated first (POST /v1/operator/jobs).
func (o *OperatorClient) Jobs(ctx context.Context, req OperatorJobsRequest) (*OperatorJobList, error) {
	return operatorCall[OperatorJobList](ctx, o.client, opOperatorListJobs, req)
}

// Usage returns usage totals, optionally grouped (POST /v1/operator/usage).
func (o *OperatorClient) Usage(ctx context.Context, req OperatorUsageRequest) (*OperatorUsage, error) {
	return operatorCall[OperatorUsage](ctx, o.client, opOperatorUsage, req)
}

// Audit returns one page of the approval audit log, newest first (POST /v1/operator/audit);
// pass NextBefore as Before for the next page.
func (o *OperatorClient) Audit(ctx context.Context, req OperatorAuditRequest) (*OperatorAuditPage, error) {
	return operatorCall[OperatorAuditPage](ctx, o.client, opOperatorAudit, req)
}

func operatorCall[T any](ctx context.Context, c *Client, op operation, req any) (*T, error) {
	var out T
	if err := c.post(ctx, op, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
