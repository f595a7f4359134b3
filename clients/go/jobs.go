package agenticdriver

import (
	"context"
	"encoding/json"
)

// Job states.
const (
	JobQueued      = "queued"
	JobRunning     = "running"
	JobCompleted   = "completed"
	JobFailed      = "failed"
	JobCancelled   = "cancelled"
	JobInterrupted = "interrupted"
)

// JobTerminal reports whether a job state is final.
func JobTerminal(state string) bool {
	switch state {
	case JobCompleted, JobFailed, JobCancelled, JobInterrupted:
		return true
	}
	return false
}

// SubmitJob submits a durable job (POST /v1/jobs/submit). Submitting the same key with
// the same request again returns the same job, so a lost answer is recovered by
// submitting again. The answer must name the requested provider and model. A malformed
// submission is refused with INVALID_JOB before anything is sent.
func (c *Client) SubmitJob(ctx context.Context, req JobSubmit) (*JobInfo, error) {
	return c.jobCall(ctx, opSubmitJob, req)
}

// ReadJob returns a job's current state (POST /v1/jobs/read).
func (c *Client) ReadJob(ctx context.Context, id string) (*JobInfo, error) {
	return c.jobCall(ctx, opReadJob, JobIdentity{ID: id})
}

// ListJobs returns the subject's jobs this token may read (POST /v1/jobs/list), most
// recently updated first: at most req.Limit (0: the default, 20), only in req.State when
// it is set. The answer is checked by its rules (jobList: within the limit, each job once,
// newest first, each job's own). A malformed request is refused with INVALID_JOB before anything is sent.
func (c *Client) ListJobs(ctx context.Context, req JobListRequest) ([]JobInfo, error) {
	var list JobList
	if err := c.post(ctx, opListJobs, req, &list); err != nil {
		return nil, err
	}
	return list.Jobs, nil
}

// CancelJob asks the host to cancel a job (POST /v1/jobs/cancel) and returns its state
// afterwards: a queued job is cancelled at once, a running one has CancelRequested set
// and ends with its own terminal event, a finished one is returned unchanged.
func (c *Client) CancelJob(ctx context.Context, id string) (*JobInfo, error) {
	return c.jobCall(ctx, opCancelJob, JobIdentity{ID: id})
}

// jobCall posts one job operation; the answer is checked against the request by the
// operation's rules (generated/rules.json).
func (c *Client) jobCall(ctx context.Context, op operation, req any) (*JobInfo, error) {
	var info JobInfo
	if err := c.post(ctx, op, req, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// jobEventPageWire keeps each event's bytes, so Event.Raw holds it exactly as received.
type jobEventPageWire struct {
	Job        JobInfo           `json:"job"`
	Events     []json.RawMessage `json:"events"`
	NextCursor int64             `json:"nextCursor"`
	HasMore    bool              `json:"hasMore"`
}

// JobEvents returns one page of a job's committed events after req.After (at most
// req.Limit, default 100), validated as the continuation of a run that has already
// delivered events 1..After: the job's run id, contiguous sequences, no event beyond
// the job's cursor, a terminal event only as the last event of a finished job and
// consistent with its state. HasMore means more events are committed now, not that the
// job is still running; continue with After = NextCursor.
func (c *Client) JobEvents(ctx context.Context, req JobEventsRequest) (*JobEventPage, error) {
	var wire jobEventPageWire
	if err := c.post(ctx, opJobEvents, req, &wire); err != nil {
		return nil, err
	}
	page := &JobEventPage{Job: wire.Job, Events: make([]Event, len(wire.Events)), NextCursor: wire.NextCursor, HasMore: wire.HasMore}
	for i, raw := range wire.Events {
		if err := decodeExact(raw, &page.Events[i]); err != nil {
			return nil, newError(CodeInvalidResponse, "events[%d]: %v", i, err)
		}
		page.Events[i].Raw = raw
	}
	return page, nil
}
