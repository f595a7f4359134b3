package agenticdriver

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
)

// Run modes and the run state only a background run that waits for a person has.
const (
	RunAttached   = "attached"
	RunBackground = "background"
	RunWaiting    = "waiting"
)

// ReadRun reads back any run of the token's subject by its run id (POST /v1/runs/read),
// attached or background: its state and cursor, and once it finished its Result or Error
// and Usage. The answer must name the run asked for and agree with itself (runInfo rules).
// A malformed id is refused with INVALID_RUN_READ before anything is sent; a run of
// another subject, or one whose retention ended, is RUN_NOT_FOUND.
func (c *Client) ReadRun(ctx context.Context, runID string) (*RunInfo, error) {
	var info RunInfo
	if err := c.post(ctx, opReadRun, RunReadRequest{RunID: runID}, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// runEventPageWire keeps each event's bytes, so Event.Raw holds it exactly as received.
type runEventPageWire struct {
	Run        RunInfo           `json:"run"`
	Events     []json.RawMessage `json:"events"`
	NextCursor int64             `json:"nextCursor"`
	HasMore    bool              `json:"hasMore"`
}

// RunEvents returns one page of a run's committed events after req.After (at most
// req.Limit, default 100), checked as JobEvents' pages are: the run's id, contiguous
// sequences, nothing beyond the run's cursor, a terminal event only last in a finished
// run. Continue with After = NextCursor while HasMore.
func (c *Client) RunEvents(ctx context.Context, req RunEventsRequest) (*RunEventPage, error) {
	var wire runEventPageWire
	if err := c.post(ctx, opRunEvents, req, &wire); err != nil {
		return nil, err
	}
	page := &RunEventPage{Run: wire.Run, Events: make([]Event, len(wire.Events)), NextCursor: wire.NextCursor, HasMore: wire.HasMore}
	for i, raw := range wire.Events {
		if err := decodeExact(raw, &page.Events[i]); err != nil {
			return nil, newError(CodeInvalidResponse, "events[%d]: %v", i, err)
		}
		page.Events[i].Raw = raw
	}
	return page, nil
}

// FollowRun follows any run's committed events live (GET /v1/runs/{id}/stream), on any
// replica, from opts.After to its terminal event, then ends — as TailJob does for a job:
// it reads the run first (ReadRun), checks every event against it (the run's id,
// contiguous sequences, run.started exactly at 1), resumes a dropped connection with
// Last-Event-ID after a doubling backoff, and gives up with RUN_STREAM_LOST after
// opts.MaxAttempts attempts in a row that delivered nothing. Errors are yielded once as
// (Event{}, err). Leaving the loop early closes the stream; the run goes on (an attached
// run lives as long as the connection that started it).
func (c *Client) FollowRun(ctx context.Context, runID string, opts TailOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := c.followRun(ctx, runID, opts.withDefaults(), func(ev Event) bool { return yield(ev, nil) }); err != nil {
			yield(Event{}, err)
		}
	}
}

func (c *Client) followRun(ctx context.Context, runID string, opts TailOptions, deliver func(Event) bool) error {
	if opts.After < 0 {
		return newError(CodeInvalidRunCursor, "After must not be negative")
	}
	run, err := c.ReadRun(ctx, runID)
	if err != nil {
		return err
	}
	if opts.After > run.Cursor {
		return newError(CodeInvalidRunCursor, "After %d is beyond the run's cursor %d", opts.After, run.Cursor)
	}
	if JobTerminal(run.State) && opts.After == run.Cursor {
		return nil
	}
	runValue, err := jsonValueOf(run)
	if err != nil {
		return err
	}
	t := &logTail{what: "run", rules: "runLogEvent", record: runValue, last: opts.After}
	if run.Mode == RunBackground {
		interactive, err := c.interactiveJobs(ctx)
		if err != nil {
			return err
		}
		t.refusesInteractive = !interactive
	}
	return c.follow(ctx, pathOf(opStreamRun, run.RunID), t, opts, CodeRunStreamLost, deliver)
}

// interactiveJobs reports whether the host advertises interactive-jobs: only then may a
// followed background run ask for approvals and application-tool results, answered with
// Approval(ev) and Execution(ev) exactly as on a stream.
func (c *Client) interactiveJobs(ctx context.Context) (bool, error) {
	info, err := c.Protocol(ctx)
	if err != nil {
		return false, err
	}
	return slices.Contains(info.Features, "interactive-jobs"), nil
}

// WaitRun is a background run's result(): it waits for any run of the token's subject to
// end and returns its result, or its *DriverError (as Run does). A finished run is
// answered from its record; a running one is followed (FollowRun) from its cursor to its
// terminal event. It decides nothing itself: a run waiting for a person waits until a
// handle (Approval(ev) on FollowRun's events, or the console) answers. opts.After is ignored.
func (c *Client) WaitRun(ctx context.Context, runID string, opts TailOptions) (*RunResult, error) {
	run, err := c.ReadRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if !JobTerminal(run.State) {
		opts.After = run.Cursor
		for ev, err := range c.FollowRun(ctx, runID, opts) {
			if err != nil {
				return nil, err
			}
			switch ev.Type {
			case EventRunCompleted:
				return ev.Result, nil
			case EventRunFailed, EventRunCancelled:
				return nil, ev.Error
			}
		}
		// A journal cut off without a terminal event: the record says how it ended.
		if run, err = c.ReadRun(ctx, runID); err != nil {
			return nil, err
		}
	}
	switch {
	case run.Result != nil:
		return run.Result, nil
	case run.Error != nil:
		return nil, run.Error
	}
	return nil, newError(CodeIncompleteStream, "the run ended %s without a result or an error", run.State)
}
