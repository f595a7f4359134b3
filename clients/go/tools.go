package agenticdriver

import (
	"context"
	"encoding/json"
)

// ToolFunc runs one application tool in the calling application. It returns the tool's
// output (encoded as JSON; a json.RawMessage is sent as is), or an error, which is
// reported to the host as the tool's failure (the run then fails with
// APPLICATION_TOOL_FAILED). The error text itself never leaves the process.
type ToolFunc func(ctx context.Context, task *ToolTask) (any, error)

// ToolTask is the execution a ToolFunc is asked to perform.
type ToolTask struct {
	// Execution is a private copy of the dispatched execution; Execution.ExecutionID is
	// unique per dispatch and suits as an idempotency key for the function's effect.
	Execution ToolExecution
	pending   *PendingExecution
}

// DecodeArguments decodes the call's arguments, already validated by the host against
// the tool's input schema, into v (e.g. a pointer to a struct).
func (t *ToolTask) DecodeArguments(v any) error {
	data, err := json.Marshal(t.Execution.Call.Arguments)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Progress reports real work to the host, which resets the run's idle timer. Call it
// after work was done, never on a timer.
func (t *ToolTask) Progress(ctx context.Context) error {
	_, err := t.pending.Progress(ctx)
	return err
}

// StreamWithTools is Stream that also runs application functions: after fn has seen a
// tool.execution.requested event whose tool has a function in functions, the function
// runs and its output (or its failure) is delivered before the next event is read.
// Nothing that is not registered under the exact tool name is ever run; executions of
// other tools are left to fn. Every name in functions must be declared in
// req.ApplicationTools (INVALID_ARGUMENT otherwise, before anything is sent). fn may be
// nil when the events themselves are of no interest. A failed delivery of a result ends
// the stream with that error.
func (c *Client) StreamWithTools(ctx context.Context, req RunRequest, functions map[string]ToolFunc, fn func(Event) error) error {
	if err := checkToolFuncs(functions, &req); err != nil {
		return err
	}
	return c.Stream(ctx, req, func(ev Event) error {
		var pending *PendingExecution
		if ev.Type == EventToolExecutionRequested {
			// Copied before fn can touch the event.
			pending = c.Execution(ev)
		}
		if fn != nil {
			if err := fn(ev); err != nil {
				return err
			}
		}
		if pending == nil {
			return nil
		}
		if run, registered := functions[pending.execution.Call.Name]; registered {
			return pending.run(ctx, run)
		}
		return nil
	})
}

func checkToolFuncs(functions map[string]ToolFunc, req *RunRequest) error {
	declared := map[string]bool{}
	for _, tool := range req.ApplicationTools {
		declared[tool.Name] = true
	}
	for name, run := range functions {
		switch {
		case !declared[name]:
			return newError(CodeInvalidArgument, "%q is not an application tool the request declares", name)
		case run == nil:
			return newError(CodeInvalidArgument, "the function registered for %q is nil", name)
		}
	}
	return nil
}

// run executes one registered function and delivers its output or its failure.
func (x *PendingExecution) run(ctx context.Context, run ToolFunc) error {
	output, err := run(ctx, &ToolTask{Execution: x.Execution(), pending: x})
	if err != nil {
		_, err = x.Fail(ctx)
		return err
	}
	_, err = x.Complete(ctx, output)
	return err
}
