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
func (c *Client) ReadSession(ctx context.Context, id SessionIdentity) (*SessionSnapshot, error) {
	body, err := checkedBody(id, func(v any) error { return sessionIdentityRule(v, "session") }, CodeInvalidSession, "session identity")
	if err != nil {
		return nil, err
	}
	var snapshot SessionSnapshot
	if err := c.getJSON(ctx, "v1/sessions/read", nil, body, sessionSnapshotRule, &snapshot); err != nil {
		return nil, exchangeError(ctx, err)
	}
	if err := checkSessionSnapshot(&snapshot, id.ID); err != nil {
		return nil, newError(CodeInvalidResponse, "%v", err)
	}
	return &snapshot, nil
}

// ListSessions returns the subject's sessions on providers this token may use (POST
// /v1/sessions/list), most recently used first: at most req.Limit (0: the default, 20).
// The answer is checked: within the limit, each session once, newest first, each
// session's own invariants. A malformed request is refused with INVALID_SESSION.
func (c *Client) ListSessions(ctx context.Context, req SessionListRequest) ([]SessionInfo, error) {
	body, err := checkedBody(req, func(v any) error { return sessionListRequestRule(v, "sessions") }, CodeInvalidSession, "session list request")
	if err != nil {
		return nil, err
	}
	var list SessionList
	if err := c.getJSON(ctx, "v1/sessions/list", nil, body, sessionListRule, &list); err != nil {
		return nil, exchangeError(ctx, err)
	}
	if err := checkSessionList(list.Sessions, req.Limit); err != nil {
		return nil, newError(CodeInvalidResponse, "%v", err)
	}
	return list.Sessions, nil
}

// DeleteSession deletes a session (POST /v1/sessions/delete); a turn still running on it
// ends with run.cancelled SESSION_DELETED.
func (c *Client) DeleteSession(ctx context.Context, id SessionIdentity) (*SessionDeleteResult, error) {
	body, err := checkedBody(id, func(v any) error { return sessionIdentityRule(v, "session") }, CodeInvalidSession, "session identity")
	if err != nil {
		return nil, err
	}
	var result SessionDeleteResult
	if err := c.getJSON(ctx, "v1/sessions/delete", nil, body, sessionDeleteResultRule, &result); err != nil {
		return nil, exchangeError(ctx, err)
	}
	switch {
	case !strings.EqualFold(result.ID, id.ID):
		return nil, reconcileError("the delete receipt names session " + result.ID)
	case !result.Deleted:
		return nil, reconcileError("the delete receipt does not say deleted")
	}
	return &result, nil
}
