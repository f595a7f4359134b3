package agenticdriver

import (
	"context"
	"io"
	"iter"
	"net/http"
	"regexp"
	"strconv"
)

// OperatorClient calls the /v1/operator/... endpoints with a token that has the operator
// grant: every subject's runs (one by one with their steps), the live update feed,
// pending approvals, jobs, usage totals, limits and the approval audit log. Any other token gets
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

// Close closes the client's idle connections, like Client.Close.
func (o *OperatorClient) Close() { o.client.Close() }

// Runs lists the runs this replica is serving now and one page of finished runs, newest
// first, filtered by State, Subject, Provider and Search (POST /v1/operator/runs); pass
// NextBefore as Before for the next page.
func (o *OperatorClient) Runs(ctx context.Context, req OperatorRunsRequest) (*OperatorRunList, error) {
	return operatorCall[OperatorRunList](ctx, o.client, opOperatorListRuns, req)
}

// Run reads one run, with its steps, tools, tokens and timing when this replica served
// it (GET /v1/operator/runs/{id}); the answer must be about that run.
func (o *OperatorClient) Run(ctx context.Context, runID string) (*OperatorRunDetail, error) {
	if !lowercaseUUID.MatchString(runID) {
		return nil, newError(CodeInvalidOperatorRequest, "the run id must be a lowercase UUID")
	}
	var out OperatorRunDetail
	if err := o.client.getJSON(ctx, pathOf(opOperatorReadRun, runID), nil, nil, opOperatorReadRun.response, &out); err != nil {
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
	body, frames, err := o.client.openStream(ctx, streamCtx, opOperatorUpdates.path, nil, nil)
	if err != nil {
		return err
	}
	defer body.Close()
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
		if err := opOperatorUpdates.response(value, "update"); err != nil {
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

// Limits returns every configured scope's rate limits and budgets (limit, used, reserved,
// remaining, reset time), or one subject's (POST /v1/operator/limits).
func (o *OperatorClient) Limits(ctx context.Context, req OperatorLimitsRequest) (*OperatorLimits, error) {
	return operatorCall[OperatorLimits](ctx, o.client, opOperatorLimits, req)
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

// WatchRun follows one active run's events (GET /v1/operator/runs/{id}/events): the recent
// ones first, then live, ending with its terminal event, or early without one when the host
// dropped this watcher for falling behind (the run is never slowed). Each event must be valid,
// of this run and in rising sequence (else INVALID_RESPONSE). Leaving the loop or cancelling
// ctx closes the connection; the run goes on.
func (o *OperatorClient) WatchRun(ctx context.Context, runID string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if !lowercaseUUID.MatchString(runID) {
			yield(Event{}, newError(CodeInvalidOperatorRequest, "the run id must be a lowercase UUID"))
			return
		}
		if err := o.client.tap(ctx, pathOf(opOperatorWatchRun, runID), runID, 0, func(ev Event) bool { return yield(ev, nil) }); err != nil {
			yield(Event{}, err)
		}
	}
}

// TailJob follows any subject's job (GET /v1/operator/jobs/{id}/stream): its committed
// events after sequence after, until its terminal event. Leaving the loop closes the
// connection; the job keeps running.
func (o *OperatorClient) TailJob(ctx context.Context, jobID string, after int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if _, err := requestBody(opReadJob, JobIdentity{ID: jobID}); err != nil {
			yield(Event{}, err)
			return
		}
		if after < 0 {
			yield(Event{}, newError(CodeInvalidJobCursor, "after must not be negative"))
			return
		}
		if err := o.client.tap(ctx, pathOf(opOperatorStreamJob, jobID), "", after, func(ev Event) bool { return yield(ev, nil) }); err != nil {
			yield(Event{}, err)
		}
	}
}

var lowercaseUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// tap reads an operator stream into deliver: valid events of one run (runID, or the first
// event's), in rising sequence after after, until a terminal event or the end of the body.
func (c *Client) tap(ctx context.Context, path, runID string, after int64, deliver func(Event) bool) error {
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	header := http.Header{}
	if after > 0 {
		header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	body, frames, err := c.openStream(ctx, streamCtx, path, nil, header)
	if err != nil {
		return err
	}
	defer body.Close()
	last := after
	for {
		frame, err := frames.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return exchangeError(ctx, err)
		}
		value, err := parseJSON(frame)
		if err == nil {
			err = runEventRule(value, "event")
		}
		ev := Event{Raw: frame}
		if err == nil {
			err = decodeExact(frame, &ev)
		}
		switch {
		case err != nil:
			return newError(CodeInvalidResponse, "an event is invalid: %v", err)
		case runID == "":
			runID = ev.RunID
		}
		if ev.RunID != runID {
			return newError(CodeInvalidResponse, "an event of run %s arrived on the stream of run %s", ev.RunID, runID)
		}
		if ev.Sequence <= last {
			return newError(CodeInvalidResponse, "event sequence %d does not follow %d", ev.Sequence, last)
		}
		last = ev.Sequence
		if !deliver(ev) || ev.Terminal() {
			return nil
		}
	}
}
