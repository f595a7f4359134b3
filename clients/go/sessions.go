package agenticdriver

import "context"

// CreateSession creates a conversation session (POST /v1/sessions/create) and returns
// its snapshot, checked against the request: the same provider, model, mode,
// instructions and history, revision 0 and state ready. A malformed request is refused
// with INVALID_SESSION before anything is sent.
func (c *Client) CreateSession(ctx context.Context, req SessionCreate) (*SessionSnapshot, error) {
	var snapshot SessionSnapshot
	if err := c.post(ctx, opCreateSession, req, &snapshot); err != nil {
		return nil, err
	}
	return &snapshot, nil
}

// ReadSession returns a session's snapshot (POST /v1/sessions/read). It does not extend
// the session's retention.
func (c *Client) ReadSession(ctx context.Context, id string) (*SessionSnapshot, error) {
	var snapshot SessionSnapshot
	if err := c.post(ctx, opReadSession, SessionIdentity{ID: id}, &snapshot); err != nil {
		return nil, err
	}
	return &snapshot, nil
}

// ListSessions returns the subject's sessions on providers this token may use (POST
// /v1/sessions/list), most recently used first: at most req.Limit (0: the default, 20).
// The answer is checked: within the limit, each session once, newest first, each
// session's own invariants. A malformed request is refused with INVALID_SESSION.
func (c *Client) ListSessions(ctx context.Context, req SessionListRequest) ([]SessionInfo, error) {
	var list SessionList
	if err := c.post(ctx, opListSessions, req, &list); err != nil {
		return nil, err
	}
	return list.Sessions, nil
}

// DeleteSession deletes a session (POST /v1/sessions/delete); a turn still running on it
// ends with run.cancelled SESSION_DELETED.
func (c *Client) DeleteSession(ctx context.Context, id string) (*SessionDeleteResult, error) {
	var result SessionDeleteResult
	if err := c.post(ctx, opDeleteSession, SessionIdentity{ID: id}, &result); err != nil {
		return nil, err
	}
	return &result, nil
}
