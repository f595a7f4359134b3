package agenticdriver

import (
	"context"
	"io"
	"strings"
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
	if err := c.getJSON(ctx, "v1/runs", nil, &req, runResultRule, &result); err != nil {
		return nil, exchangeError(ctx, err)
	}
	if err := checkResult(&result, &req, ""); err != nil {
		return nil, newError(CodeInvalidResponse, "%v", err)
	}
	return &result, nil
}

// Stream executes a run and calls fn with each validated event, in order, until the
// first terminal event. It returns nil after run.completed and the run's *DriverError
// after run.failed or run.cancelled (fn still sees that event). An error from fn, or
// cancelling ctx, stops reading and closes the connection, which cancels the run on
// the host; fn's error is returned unchanged.
func (c *Client) Stream(ctx context.Context, req RunRequest, fn func(Event) error) error {
	if fn == nil {
		return newError(CodeInvalidCallback, "Stream needs a callback")
	}
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := c.call(streamCtx, "v1/runs", nil, &req, "text/event-stream")
	if err != nil {
		return exchangeError(ctx, err)
	}
	defer resp.Body.Close()
	if !strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") {
		return newError(CodeInvalidResponse, "the host did not answer with an event stream")
	}
	frames := newSSEReader(resp.Body)
	events := newEventValidator(&req)
	for {
		frame, err := frames.next()
		if err == io.EOF {
			return newError(CodeIncompleteStream, "the event stream ended before a terminal event")
		}
		if err != nil {
			return exchangeError(ctx, err)
		}
		ev, deliver, err := events.accept(frame)
		if err != nil {
			return err
		}
		if !deliver {
			continue
		}
		if err := fn(*ev); err != nil {
			return err
		}
		if ev.Terminal() {
			return terminalError(ev)
		}
	}
}
