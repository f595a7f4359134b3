package agenticdriver

// eventValidator applies the run stream rules to each frame in order: envelope,
// sequence and run identity, unknown and unnegotiated types, payload shape, and the
// rules of generated/rules.json (set runEvent) against the request. The envelope rules
// stay code, as in every client: they decide, before the payload is validated, whether
// an event is skipped, UNSUPPORTED_EVENT or INVALID_STREAM.
type eventValidator struct {
	req      *RunRequest
	request  any // req as generic JSON, what the rules read
	runID    string
	sequence int64
	// What the rules of later events need to know of earlier ones: {approvalId, callId}
	// of each requested approval, {executionId, callId} of each requested execution.
	approvals, executions []any
}

func newEventValidator(req *RunRequest) (*eventValidator, error) {
	request, err := jsonValueOf(req)
	if err != nil {
		return nil, newError(CodeInvalidRequest, "the run request is not representable as JSON: %v", err)
	}
	return &eventValidator{req: req, request: request}, nil
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
	scope := map[string]any{"event": value, "request": v.request, "runId": v.runID, "approvals": v.approvals, "executions": v.executions}
	if broken := evaluateRules("runEvent", scope); broken != nil {
		return nil, false, streamError("%s event: %v", typ, broken)
	}
	switch typ {
	case EventApprovalRequested:
		v.approvals = append(v.approvals, map[string]any{"approvalId": ev.Approval.ApprovalID, "callId": ev.Approval.Call.ID})
	case EventToolExecutionRequested:
		v.executions = append(v.executions, map[string]any{"executionId": ev.Execution.ExecutionID, "callId": ev.Execution.Call.ID})
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

// terminalError converts a run.failed or run.cancelled event into its error.
func terminalError(ev *Event) error {
	if ev.Type == EventRunCompleted {
		return nil
	}
	e := *ev.Error
	return &e
}
