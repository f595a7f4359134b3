package agenticdriver

import (
	"context"
	"strings"
)

// CreateSession creates a conversation session (POST /v1/sessions/create) and returns
// its snapshot, checked against the request: the same provider, model, mode,
// instructions and history, revision 0 and state ready. A malformed request is refused
// with INVALID_SESSION before anything is sent.
func (c *Client) CreateSession(ctx context.Context, req SessionCreate) (*SessionSnapshot, error) {
	body, err := checkedBody(req, func(v any) error { return sessionCreateRule(v, "session") }, CodeInvalidSession, "session request")
	if err != nil {
		return nil, err
	}
	var snapshot SessionSnapshot
	if err := c.getJSON(ctx, "v1/sessions/create", nil, body, sessionSnapshotRule, &snapshot); err != nil {
		return nil, exchangeError(ctx, err)
	}
	if err := checkSessionCreated(&snapshot, &req); err != nil {
		return nil, newError(CodeInvalidResponse, "%v", err)
	}
	return &snapshot, nil
}

// ReadSession returns a session's snapshot (POST /v1/sessions/read). It does not extend
// the session's retention.
func (c *Client) ReadSession(ctx context.Context, id string) (*SessionSnapshot, error) {
	body, err := checkedBody(SessionIdentity{ID: id}, func(v any) error { return sessionIdentityRule(v, "session") }, CodeInvalidSession, "session identity")
	if err != nil {
		return nil, err
	}
	var snapshot SessionSnapshot
	if err := c.getJSON(ctx, "v1/sessions/read", nil, body, sessionSnapshotRule, &snapshot); err != nil {
		return nil, exchangeError(ctx, err)
	}
	if err := checkSessionSnapshot(&snapshot, id); err != nil {
		return nil, newError(CodeInvalidResponse, "%v", err)
	}
	return &snapshot, nil
}

// DeleteSession deletes a session (POST /v1/sessions/delete); a turn still running on it
// ends with run.cancelled SESSION_DELETED.
func (c *Client) DeleteSession(ctx context.Context, id string) (*SessionDeleteResult, error) {
	body, err := checkedBody(SessionIdentity{ID: id}, func(v any) error { return sessionIdentityRule(v, "session") }, CodeInvalidSession, "session identity")
	if err != nil {
		return nil, err
	}
	var result SessionDeleteResult
	if err := c.getJSON(ctx, "v1/sessions/delete", nil, body, sessionDeleteResultRule, &result); err != nil {
		return nil, exchangeError(ctx, err)
	}
	switch {
	case !strings.EqualFold(result.ID, id):
		return nil, reconcileError("the delete receipt names session " + result.ID)
	case !result.Deleted:
		return nil, reconcileError("the delete receipt does not say deleted")
	}
	return &result, nil
}
