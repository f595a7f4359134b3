package agenticdriver

import (
	"encoding/json"
	"unicode/utf8"
)

// Bodies of approval decisions and tool-execution reports, checked before they are sent.
// The host parses them strictly; checking here turns a malformed submission into the
// same typed error the host would answer (INVALID_APPROVAL / INVALID_TOOL_EXECUTION)
// without spending a request, so a corrected retry is still possible.

// The shapes are approvalDecisionRule, toolExecutionIdentityRule and
// toolExecutionResultRule of wire_generated.go.

const applicationToolFailed = "APPLICATION_TOOL_FAILED"

// maxPlainJSONDepth is how deep the host follows arguments and outputs when it checks
// that they survive its JSON parsing unchanged; anything deeper it refuses.
const maxPlainJSONDepth = 64

func decisionBody(d ApprovalDecision) (json.RawMessage, error) {
	if !utf8.ValidString(d.ApprovalID + d.RunID + d.Call.ID + d.Call.Name + d.Decision) {
		return nil, newError(CodeInvalidApproval, "the approval decision is not valid UTF-8")
	}
	return checkedBody(d, func(v any) error {
		if err := approvalDecisionRule(v, "decision"); err != nil {
			return err
		}
		arguments := v.(map[string]any)["call"].(map[string]any)["arguments"]
		return plainJSON(arguments, "decision.call.arguments", 0)
	}, CodeInvalidApproval, "approval decision")
}

func progressBody(id ToolExecutionIdentity) (json.RawMessage, error) {
	if !validIdentityText(id) {
		return nil, newError(CodeInvalidToolExecution, "the tool execution identity is not valid UTF-8")
	}
	return checkedBody(id, func(v any) error { return toolExecutionIdentityRule(v, "identity") }, CodeInvalidToolExecution, "tool execution identity")
}

func resultBody(r ToolExecutionResult) (json.RawMessage, error) {
	if !validIdentityText(r.ToolExecutionIdentity) || !utf8.ValidString(r.Error) {
		return nil, newError(CodeInvalidToolExecution, "the tool execution result is not valid UTF-8")
	}
	return checkedBody(r, func(v any) error {
		if err := toolExecutionResultRule(v, "result"); err != nil {
			return err
		}
		output, hasOutput := v.(map[string]any)["output"]
		if !hasOutput {
			return nil
		}
		return plainJSON(output, "result.output", 0)
	}, CodeInvalidToolExecution, "tool execution result")
}

func validIdentityText(id ToolExecutionIdentity) bool {
	return utf8.ValidString(id.ExecutionID + id.RunID + id.CallID)
}

// checkedBody encodes a submission and checks the exact bytes that would be sent.
// parseJSON also refuses invalid UTF-8 hidden in a json.RawMessage.
func checkedBody(body any, check func(any) error, code, what string) (json.RawMessage, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, newError(code, "the %s is not representable as JSON: %v", what, err)
	}
	value, err := parseJSON(data)
	if err == nil {
		err = check(value)
	}
	if err != nil {
		return nil, newError(code, "the %s is invalid: %v", what, err)
	}
	return data, nil
}

// plainJSON refuses what the host's JSON parsing would not keep as sent: a "__proto__"
// key, or nesting deeper than maxPlainJSONDepth.
func plainJSON(v any, path string, depth int) error {
	if depth > maxPlainJSONDepth {
		return violation(path, "is nested more than %d levels deep", maxPlainJSONDepth)
	}
	switch v := v.(type) {
	case map[string]any:
		for key, child := range v {
			if key == "__proto__" {
				return violation(path, "has a __proto__ key")
			}
			if err := plainJSON(child, path+"."+key, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range v {
			if err := plainJSON(child, path+"[]", depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
