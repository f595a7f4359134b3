package agenticdriver

import (
	"context"
	"io"
	"iter"
	"regexp"
	"strings"
)

// CodeInvalidOperatorRequest is a malformed operator request, refused before it is sent
// (the host's code).
const CodeInvalidOperatorRequest = "INVALID_OPERATOR_REQUEST"

// OperatorClient calls the /v1/operator/... endpoints with a token that has the operator
// grant: every subject's runs (one by one with their steps), the live update feed,
// pending approvals, jobs, usage totals and the approval audit log. Any other token gets
// FORBIDDEN. Requests are checked before sending, answers like every other answer
// (INVALID_RESPONSE).
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

// Runs lists the runs this replica is serving now and one page of finished runs, newest
// first, filtered by State, Subject, Provider and Search (POST /v1/operator/runs); pass
// NextBefore as Before for the next page.
func (o *OperatorClient) Runs(ctx context.Context, req OperatorRunsRequest) (*OperatorRunList, error) {
	return operatorCall[OperatorRunList](ctx, o.client, "v1/operator/runs", req, operatorRunsRequestRule, operatorRunListRule)
}

var lowercaseUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Run reads one run, with its steps, tools, tokens and timing when this replica served
// it (GET /v1/operator/runs/{id}); the answer must be about that run.
func (o *OperatorClient) Run(ctx context.Context, runID string) (*OperatorRunDetail, error) {
	if !lowercaseUUID.MatchString(runID) {
		return nil, newError(CodeInvalidOperatorRequest, "the run id must be a lowercase UUID")
	}
	var out OperatorRunDetail
	if err := o.client.getJSON(ctx, "v1/operator/runs/"+runID, nil, nil, operatorRunDetailRule, &out); err != nil {
		return nil, exchangeError(ctx, err)
	}
	if out.Run.RunID != runID {
		return nil, newError(CodeInvalidResponse, "the host answered with run %s for run %s", out.Run.RunID, runID)
	}
	return &out, nil
}

// Updates follows the live update feed (GET /v1/operator/updates): a "snapshot" update,
// then each change, until the host ends the subscription (call Updates again for a new
// snapshot), ctx is done or the loop is left (which closes the connection). Each update
// is validated; one of a type this client does not know is passed on as it is. An error
// is yielded once as (OperatorUpdate{}, err).
func (o *OperatorClient) Updates(ctx context.Context) iter.Seq2[OperatorUpdate, error] {
	return func(yield func(OperatorUpdate, error) bool) {
		if err := o.updates(ctx, yield); err != nil {
			yield(OperatorUpdate{}, err)
		}
	}
}

func (o *OperatorClient) updates(ctx context.Context, yield func(OperatorUpdate, error) bool) error {
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := o.client.call(streamCtx, "v1/operator/updates", nil, nil, "text/event-stream")
	if err != nil {
		return exchangeError(ctx, err)
	}
	defer resp.Body.Close()
	if !strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") {
		return newError(CodeInvalidResponse, "the host did not answer with an event stream")
	}
	frames := newSSEReader(resp.Body)
	for {
		frame, err := frames.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return exchangeError(ctx, err)
		}
		value, err := parseJSON(frame)
		if err != nil {
			return newError(CodeInvalidResponse, "update: %v", err)
		}
		if err := operatorUpdateRule(value, "update"); err != nil {
			return newError(CodeInvalidResponse, "%v", err)
		}
		var update OperatorUpdate
		if err := decodeExact(frame, &update); err != nil {
			return newError(CodeInvalidResponse, "update: %v", err)
		}
		if !yield(update, nil) {
			return nil
		}
	}
}

// Approvals lists pending approvals of every subject, oldest first (POST /v1/operator/approvals).
func (o *OperatorClient) Approvals(ctx context.Context, req OperatorListRequest) (*OperatorApprovalList, error) {
	return operatorCall[OperatorApprovalList](ctx, o.client, "v1/operator/approvals", req, operatorListRequestRule, operatorApprovalListRule)
}

// DecideApproval decides any subject's pending approval (POST
// /v1/operator/approvals/decisions); the receipt must answer exactly this decision.
func (o *OperatorClient) DecideApproval(ctx context.Context, d ApprovalDecision) (*ApprovalResolution, error) {
	return o.client.decide(ctx, "v1/operator/approvals/decisions", d)
}

// Jobs lists durable jobs of every subject, most recently updated first (POST /v1/operator/jobs).
func (o *OperatorClient) Jobs(ctx context.Context, req OperatorJobsRequest) (*OperatorJobList, error) {
	return operatorCall[OperatorJobList](ctx, o.client, "v1/operator/jobs", req, operatorJobsRequestRule, operatorJobListRule)
}

// Usage returns usage totals, optionally grouped (POST /v1/operator/usage).
func (o *OperatorClient) Usage(ctx context.Context, req OperatorUsageRequest) (*OperatorUsage, error) {
	return operatorCall[OperatorUsage](ctx, o.client, "v1/operator/usage", req, operatorUsageRequestRule, operatorUsageRule)
}

// Audit returns one page of the approval audit log, newest first (POST /v1/operator/audit);
// pass NextBefore as Before for the next page.
func (o *OperatorClient) Audit(ctx context.Context, req OperatorAuditRequest) (*OperatorAuditPage, error) {
	return operatorCall[OperatorAuditPage](ctx, o.client, "v1/operator/audit", req, operatorAuditRequestRule, operatorAuditPageRule)
}

func operatorCall[T any](ctx context.Context, c *Client, endpoint string, req any, requestRule, answerRule rule) (*T, error) {
	body, err := checkedBody(req, func(v any) error { return requestRule(v, "request") }, CodeInvalidOperatorRequest, "operator request")
	if err != nil {
		return nil, err
	}
	var out T
	if err := c.getJSON(ctx, endpoint, nil, body, answerRule, &out); err != nil {
		return nil, exchangeError(ctx, err)
	}
	return &out, nil
}
