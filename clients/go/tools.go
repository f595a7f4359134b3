package agenticdriver

import (
	"context"
	"encoding/json"
	"iter"
)

// ToolFunction runs one application tool in the calling application. It returns the
// tool's output (encoded as JSON; a json.RawMessage is sent as is), or an error, which is
// reported to the host as the tool's failure (the run then fails with
// APPLICATION_TOOL_FAILED). The error text itself never leaves the process.
type ToolFunction func(ctx context.Context, tool *ToolContext) (any, error)

// ToolFunctions are application functions by tool name, for StreamWithTools.
type ToolFunctions map[string]ToolFunction

// ToolContext is what a ToolFunction sees of the execution it is asked to perform.
type ToolContext struct {
	// Execution is a private copy of the dispatched execution; Execution.ExecutionID is
	// unique per dispatch and suits as an idempotency key for the function's effect.
	Execution ToolExecution
	pending   *PendingExecution
}

// DecodeArguments decodes the call's arguments, already validated by the host against
// the tool's input schema, into v (e.g. a pointer to a struct).
func (t *ToolContext) DecodeArguments(v any) error {
	data, err := json.Marshal(t.Execution.Call.Arguments)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Progress reports real work to the host, which resets the run's idle timer. Call it
// after work was done, never on a timer.
func (t *ToolContext) Progress(ctx context.Context) error {
	_, err := t.pending.Progress(ctx)
	return err
}

// StreamWithTools is Stream that also runs application functions: after the loop body
// has seen a tool.execution.requested event whose tool has a function in functions, the
// function runs and its output (or its failure) is delivered before the next event is
// read. Nothing that is not registered under the exact tool name is ever run; executions
// of other tools are left to the loop body (client.Execution). Every name in functions
// must be declared in req.ApplicationTools (INVALID_ARGUMENT otherwise, yielded before
// anything is sent). A failed delivery of a result is yielded as the last error.
func (c *Client) StreamWithTools(ctx context.Context, req RunRequest, functions ToolFunctions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := checkToolFunctions(functions, &req); err != nil {
			yield(Event{}, err)
			return
		}
		for ev, err := range c.Stream(ctx, req) {
			if err != nil {
				yield(Event{}, err)
				return
			}
			var pending *PendingExecution
			if ev.Type == EventToolExecutionRequested {
				// Copied before the loop body can touch the event.
				pending = c.Execution(ev)
			}
			if !yield(ev, nil) {
				return
			}
			if pending == nil {
				continue
			}
			if run, registered := functions[pending.execution.Call.Name]; registered {
				if err := pending.run(ctx, run); err != nil {
					yield(Event{}, err)
					return
				}
			}
		}
	}
}

func checkToolFunctions(functions ToolFunctions, req *RunRequest) error {
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
func (x *PendingExecution) run(ctx context.Context, run ToolFunction) error {
	output, err := run(ctx, &ToolContext{Execution: x.Execution(), pending: x})
	if err != nil {
		_, err = x.Fail(ctx)
		return err
	}
	_, err = x.Complete(ctx, output)
	return err
}
