package agenticdriver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestReceiptsMustMatchTheSubmission(t *testing.T) {
	decision := ApprovalDecision{ApprovalID: "a1", RunID: "r1", Call: ToolCall{ID: "c1", Name: "guarded", Arguments: map[string]json.RawMessage{}}, Decision: DecisionDeny}
	id := ToolExecutionIdentity{ExecutionID: "e1", RunID: "r1", CallID: "c1"}
	cases := []struct {
		name, body, code string
		call             func(*Client) error
	}{
		{"approval ok", `{"approvalId":"a1","runId":"r1","callId":"c1","outcome":"denied","decidedAt":"2026-09-20T12:00:00Z"}`, "",
			func(c *Client) error { _, err := c.DecideApproval(t.Context(), decision); return err }},
		{"approval outcome", `{"approvalId":"a1","runId":"r1","callId":"c1","outcome":"approved","decidedAt":"2026-09-20T12:00:00Z"}`, CodeInvalidResponse,
			func(c *Client) error { _, err := c.DecideApproval(t.Context(), decision); return err }},
		{"progress ok", `{"executionId":"e1","runId":"r1","callId":"c1","status":"progress"}`, "",
			func(c *Client) error { _, err := c.ReportToolProgress(t.Context(), id); return err }},
		{"result status", `{"executionId":"e1","runId":"r1","callId":"c1","status":"progress"}`, CodeInvalidResponse,
			func(c *Client) error {
				_, err := c.CompleteTool(t.Context(), ToolExecutionResult{ToolExecutionIdentity: id, Output: json.RawMessage("null")})
				return err
			}},
		{"result identity", `{"executionId":"e2","runId":"r1","callId":"c1","status":"accepted"}`, CodeInvalidResponse,
			func(c *Client) error {
				_, err := c.CompleteTool(t.Context(), ToolExecutionResult{ToolExecutionIdentity: id, Error: "APPLICATION_TOOL_FAILED"})
				return err
			}},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, c.body) }))
		err := c.call(newTestClient(t, srv.URL))
		srv.Close()
		if (c.code == "" && err != nil) || (c.code != "" && !isCode(err, c.code)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
