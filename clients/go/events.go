package agenticdriver

// eventValidator applies the run stream rules to each frame in order: envelope,
// sequence and run identity, unknown and unnegotiated types, payload shape, and the
// cross-checks against the request.
type eventValidator struct {
	req          *RunRequest
	runID        string
	sequence     int64
	appTools     map[string]bool
	selected     map[string]bool
	executionIDs map[string]bool
	executedCall map[string]bool
	approvals    map[string]string // approvalId → call id of each requested approval
}

func newEventValidator(req *RunRequest) *eventValidator {
	v := &eventValidator{req: req, appTools: map[string]bool{}, selected: map[string]bool{},
		executionIDs: map[string]bool{}, executedCall: map[string]bool{}, approvals: map[string]string{}}
	for _, t := range req.ApplicationTools {
		v.appTools[t.Name] = true
	}
	for _, name := range req.Tools {
		v.selected[name] = true
	}
	return v
}

func streamError(format string, args ...any) *DriverError {
	return newError(CodeInvalidStream, format, args...)
}

// accept validates one frame. It returns the event and whether to deliver it (unknown
// optional events are skipped), or a *DriverError.
func (v *eventValidator) accept(frame []byte) (*Event, bool, error) {
	value, err := parseJSON(frame)
	if err != nil {
		return nil, false, streamError("event: %v", err)
	}
	if err := eventEnvelopeRule(value, "event"); err != nil {
		return nil, false, streamError("%v", err)
	}
	fields := value.(map[string]any)
	typ := fields["type"].(string)
	if err := v.checkOrder(fields, typ); err != nil {
		return nil, false, err
	}
	check, known := eventRules[typ]
	if !known {
		if fields["optional"] == true {
			return nil, false, nil
		}
		return nil, false, newError(CodeUnsupportedEvent, "event type %q is not supported", typ)
	}
	if err := v.checkNegotiated(typ); err != nil {
		return nil, false, err
	}
	if err := check(value, "event"); err != nil {
		return nil, false, streamError("%v", err)
	}
	ev := &Event{}
	if err := decodeExact(frame, ev); err != nil {
		return nil, false, streamError("event %s: %v", typ, err)
	}
	ev.Raw = frame
	if err := v.crossCheck(ev); err != nil {
		return nil, false, err
	}
	return ev, true, nil
}

func (v *eventValidator) checkOrder(fields map[string]any, typ string) error {
	seq, _ := numberValue(fields["sequence"])
	runID := fields["runId"].(string)
	if int64(seq) != v.sequence+1 {
		return streamError("event sequence %v does not follow %d", fields["sequence"], v.sequence)
	}
	if v.sequence == 0 {
		if typ != EventRunStarted {
			return streamError("the first event is %q, not run.started", typ)
		}
		v.runID = runID
	} else if typ == EventRunStarted {
		return streamError("run.started repeated")
	} else if runID != v.runID {
		return streamError("event runId %q differs from the run %q", runID, v.runID)
	}
	v.sequence++
	return nil
}

func (v *eventValidator) checkNegotiated(typ string) error {
	switch {
	case (typ == EventApprovalRequested || typ == EventApprovalResolved) && v.req.Approvals == nil:
		return newError(CodeUnsupportedEvent, "%s arrived but the request did not negotiate approvals", typ)
	case typ == EventToolExecutionRequested && len(v.req.ApplicationTools) == 0:
		return newError(CodeUnsupportedEvent, "%s arrived but the request declared no application tools", typ)
	}
	return nil
}

func (v *eventValidator) crossCheck(ev *Event) error {
	switch ev.Type {
	case EventRunStarted:
		if ev.Provider != v.req.Provider || ev.Model != v.req.Model {
			return streamError("run.started names %s/%s, not the requested %s/%s", ev.Provider, ev.Model, v.req.Provider, v.req.Model)
		}
	case EventApprovalRequested:
		if ev.Approval.RunID != v.runID {
			return streamError("approval.requested belongs to run %q", ev.Approval.RunID)
		}
		if ev.Approval.IdlePolicy != v.req.Approvals.IdlePolicy {
			return streamError("approval.requested idlePolicy %q differs from the requested %q", ev.Approval.IdlePolicy, v.req.Approvals.IdlePolicy)
		}
		v.approvals[ev.Approval.ApprovalID] = ev.Approval.Call.ID
	case EventApprovalResolved:
		if ev.Resolution.RunID != v.runID {
			return streamError("approval.resolved belongs to run %q", ev.Resolution.RunID)
		}
		if callID, ok := v.approvals[ev.Resolution.ApprovalID]; !ok || callID != ev.Resolution.CallID {
			return streamError("approval.resolved answers no requested approval of call %q", ev.Resolution.CallID)
		}
	case EventToolExecutionRequested:
		return v.checkExecution(ev.Execution)
	case EventRunCompleted:
		if err := checkResult(ev.Result, v.req, v.runID); err != nil {
			return streamError("run.completed: %v", err)
		}
	}
	return nil
}

func (v *eventValidator) checkExecution(x *ToolExecution) error {
	switch {
	case x.RunID != v.runID:
		return streamError("tool.execution.requested belongs to run %q", x.RunID)
	case !v.appTools[x.Call.Name] || !v.selected[x.Call.Name]:
		return streamError("tool %q is not a declared and selected application tool", x.Call.Name)
	case v.executionIDs[x.ExecutionID]:
		return streamError("duplicate executionId %q", x.ExecutionID)
	case v.executedCall[x.Call.ID]:
		return streamError("duplicate tool call id %q", x.Call.ID)
	case len(v.executionIDs) >= maxToolExecutionsPerRun:
		return streamError("more than %d tool executions in one run", maxToolExecutionsPerRun)
	}
	v.executionIDs[x.ExecutionID] = true
	v.executedCall[x.Call.ID] = true
	return nil
}

// terminalError converts a run.failed or run.cancelled event into its error.
func terminalError(ev *Event) error {
	if ev.Type == EventRunCompleted {
		return nil
	}
	e := *ev.Error
	return &e
}
