package agenticdriver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strconv"
	"time"
)

// Defaults of TailOptions.
const (
	DefaultTailAttempts       = 5
	DefaultTailInitialBackoff = 200 * time.Millisecond
	DefaultTailMaxBackoff     = 5 * time.Second
)

// TailOptions controls TailJob and FollowRun. Zero values take the defaults.
type TailOptions struct {
	// After is the last sequence the caller already has; the tail starts after it.
	After int64
	// MaxAttempts is how many connection attempts in a row may fail (no event
	// received) before TailJob gives up with JOB_STREAM_LOST (FollowRun: RUN_STREAM_LOST).
	MaxAttempts int
	// InitialBackoff is the wait before the first reconnection; it doubles after each
	// further failure, up to MaxBackoff.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
}

func (o TailOptions) withDefaults() TailOptions {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultTailAttempts
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = DefaultTailInitialBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultTailMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.InitialBackoff)
	return o
}

// TailJob follows a job's events live (GET /v1/jobs/{id}/stream) from opts.After to its
// terminal event, then ends. It reads the job first (ReadJob) and checks every event
// against it: the job's run, contiguous sequences from After+1 (each frame's SSE id is
// its sequence), run.started exactly at 1, no approval or application-tool events, a
// terminal event only last. A dropped connection is resumed by itself with
// Last-Event-ID set to the last sequence delivered, after a doubling backoff, so no
// event is delivered twice or skipped; after opts.MaxAttempts attempts in a row that
// delivered nothing it gives up with JOB_STREAM_LOST (errors.Unwrap gives the last
// failure). A rule violation, a non-retryable host error or the caller's cancellation
// ends it at once. Errors are yielded once as (Event{}, err). A job that had already
// finished at sequence After yields nothing.
//
// Unlike Stream, leaving the loop early never cancels the job; CancelJob does.
func (c *Client) TailJob(ctx context.Context, id string, opts TailOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := c.tailJob(ctx, id, opts.withDefaults(), func(ev Event) bool { return yield(ev, nil) }); err != nil {
			yield(Event{}, err)
		}
	}
}

func (c *Client) tailJob(ctx context.Context, id string, opts TailOptions, deliver func(Event) bool) error {
	if opts.After < 0 {
		return newError(CodeInvalidArgument, "After must not be negative")
	}
	job, err := c.ReadJob(ctx, id)
	if err != nil {
		return err
	}
	if opts.After > job.Cursor {
		return newError(CodeInvalidArgument, "After %d is beyond the job's cursor %d", opts.After, job.Cursor)
	}
	if JobTerminal(job.State) && opts.After == job.Cursor {
		return nil
	}
	jobValue, err := jsonValueOf(job)
	if err != nil {
		return err
	}
	t := &logTail{what: "job", rules: "jobEvent", record: jobValue, last: opts.After}
	return c.follow(ctx, pathOf(opStreamJob, id), t, opts, CodeJobStreamLost, deliver)
}

// follow reads a committed-event stream into deliver across its connections, resuming a
// dropped one with Last-Event-ID after a doubling backoff; lost is the code it gives up with.
func (c *Client) follow(ctx context.Context, path string, t *logTail, opts TailOptions, lost string, deliver func(Event) bool) error {
	backoff := opts.InitialBackoff
	for failures := 0; ; {
		before := t.last
		err := c.tailOnce(ctx, path, t, deliver)
		if err == nil || t.done || t.stopped {
			return err
		}
		if !reconnectable(err) {
			return err
		}
		if t.last > before {
			// The connection delivered events before it broke: a fresh budget.
			failures, backoff = 0, opts.InitialBackoff
		} else if failures++; failures >= opts.MaxAttempts {
			return &DriverError{Code: lost, Retryable: true, cause: err,
				Message: "the " + t.what + " stream failed " + strconv.Itoa(failures) + " times in a row after sequence " + strconv.FormatInt(t.last, 10) + ": " + err.Error()}
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return exchangeError(ctx, ctx.Err())
		case <-timer.C:
		}
		backoff = min(backoff*2, opts.MaxBackoff)
	}
}

// reconnectable reports whether a failed attempt may be retried: the connection broke
// or the host said to try again. Rule violations and the caller's cancellation are final.
func reconnectable(err error) bool {
	var de *DriverError
	if !errors.As(err, &de) {
		return false
	}
	switch de.Code {
	case CodeHostUnreachable, CodeTimeout, CodeIncompleteStream:
		return true
	case CodeCancelled, CodeInvalidStream, CodeUnsupportedEvent, CodeInvalidResponse, CodeResponseTooLarge:
		return false
	}
	return de.Retryable
}

// logTail is the state of one TailJob or FollowRun across its connections.
type logTail struct {
	what    string // "job" or "run": the rules' name for the record, and the messages'
	rules   string // the stream rule set each event must pass (jobEvent, runLogEvent)
	record  any    // the job or run read first, as generic JSON: what the rules read
	last    int64  // the last sequence delivered
	done    bool   // the terminal event was delivered
	stopped bool   // the consumer left the loop
	// refusesInteractive: a background run followed on a host that did not advertise
	// interactive-jobs may not ask for approvals or application-tool results.
	refusesInteractive bool
}

// tailOnce reads one connection of the stream into deliver. It returns nil when
// the terminal event was delivered or the consumer stopped.
func (c *Client) tailOnce(ctx context.Context, path string, t *logTail, deliver func(Event) bool) error {
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	header := http.Header{}
	header.Set("Last-Event-ID", strconv.FormatInt(t.last, 10))
	body, frames, err := c.openStream(ctx, streamCtx, path, nil, header)
	if err != nil {
		return err
	}
	defer body.Close()
	for {
		frame, err := frames.next()
		if err == io.EOF {
			return newError(CodeIncompleteStream, "the %s stream ended before the terminal event", t.what)
		}
		if err != nil {
			return exchangeError(ctx, err)
		}
		frameID, hasID := frames.lastID()
		ev, err := t.accept(frame, frameID, hasID)
		if err != nil {
			return err
		}
		t.last = ev.Sequence
		t.done = ev.Terminal()
		if !deliver(*ev) {
			t.stopped = true
			return nil
		}
		if t.done {
			return nil
		}
	}
}

// accept validates one frame of the stream. Every event type must be known (an
// unknown one is refused even when optional: a log is replayed as it was stored).
func (t *logTail) accept(frame []byte, frameID string, hasID bool) (*Event, error) {
	value, err := parseJSON(frame)
	if err != nil {
		return nil, streamError("event: %v", err)
	}
	if err := eventEnvelopeRule(value, "event"); err != nil {
		return nil, streamError("%v", err)
	}
	typ := value.(map[string]any)["type"].(string)
	check, known := eventRules[typ]
	if !known {
		return nil, newError(CodeUnsupportedEvent, "event type %q is not a %s event", typ, t.what)
	}
	if err := check(value, "event"); err != nil {
		return nil, streamError("%v", err)
	}
	if t.refusesInteractive && (typ == EventApprovalRequested || typ == EventApprovalResolved || typ == EventToolExecutionRequested) {
		return nil, newError(CodeUnsupportedEvent, "the host sent %s on a background run, but did not advertise interactive-jobs", typ)
	}
	ev := &Event{}
	if err := decodeExact(frame, ev); err != nil {
		return nil, streamError("event %s: %v", typ, err)
	}
	ev.Raw = frame
	if hasID && frameID != strconv.FormatInt(ev.Sequence, 10) {
		return nil, streamError("the frame id %q is not the event's sequence %d", frameID, ev.Sequence)
	}
	scope := map[string]any{"event": value, t.what: t.record, "sequence": json.Number(strconv.FormatInt(t.last+1, 10))}
	if broken := evaluateRules(t.rules, scope); broken != nil {
		return nil, streamError("%s event: %v", typ, broken)
	}
	return ev, nil
}
