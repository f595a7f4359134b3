package agenticdriver

import (
	"context"
	"io"
	"iter"
)

// Run executes a run and returns its buffered JSON result. A failed or cancelled run is
// returned as *DriverError. Approvals and application tools need Stream.
func (c *Client) Run(ctx context.Context, req RunRequest) (*RunResult, error) {
	if len(req.ApplicationTools) > 0 {
		return nil, newError(CodeToolStreamRequired, "application tools need Stream")
	}
	if req.Approvals != nil {
		return nil, newError(CodeApprovalStreamRequired, "interactive approvals need Stream")
	}
	var result RunResult
	if err := c.send(ctx, opRun, nil, &req, &result); err != nil {
		return nil, err
	}
	return &result, nil
}

// Stream executes a run and returns its validated events, in order, ending with the
// first terminal event. Like every AgenticDriver client it delivers run.failed and
// run.cancelled as events (their Error field holds the *DriverError); only Run returns
// them as errors. A failure of the exchange or of the stream's rules is yielded once as
// (Event{}, err) and ends the sequence. Leaving the loop early (break, return) or
// cancelling ctx closes the connection, which cancels the run on the host.
//
//	for ev, err := range client.Stream(ctx, req) {
//		if err != nil {
//			return err
//		}
//		...
//	}
func (c *Client) Stream(ctx context.Context, req RunRequest) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := c.stream(ctx, req, func(ev Event) bool { return yield(ev, nil) }); err != nil {
			yield(Event{}, err)
		}
	}
}

// stream reads the run's events into deliver until the terminal event (nil), until
// deliver returns false (nil), or until the first error.
func (c *Client) stream(ctx context.Context, req RunRequest, deliver func(Event) bool) error {
	events, err := newEventValidator(&req)
	if err != nil {
		return err
	}
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, frames, err := c.openStream(ctx, streamCtx, opRun.path, &req, nil)
	if err != nil {
		return err
	}
	defer body.Close()
	for {
		frame, err := frames.next()
		if err == io.EOF {
			return newError(CodeIncompleteStream, "the event stream ended before a terminal event")
		}
		if err != nil {
			return exchangeError(ctx, err)
		}
		ev, ok, err := events.accept(frame)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if !deliver(*ev) || ev.Terminal() {
			return nil
		}
	}
}
