// Wire types Go models its own way, and the constants and helpers of the wire types.
// The plain wire structs are generated into types_generated.go (`npm run protocol`).

package agenticdriver

import "encoding/json"

// ProtocolVersion is the wire protocol version this client speaks.
const ProtocolVersion = "1.0"

// Event types of wire protocol 1.0.
const (
	EventRunStarted             = "run.started"
	EventStepStarted            = "step.started"
	EventTextDelta              = "text.delta"
	EventRunProgress            = "run.progress"
	EventApprovalRequested      = "approval.requested"
	EventApprovalResolved       = "approval.resolved"
	EventToolExecutionRequested = "tool.execution.requested"
	EventToolCalled             = "tool.called"
	EventToolCompleted          = "tool.completed"
	EventUsageReported          = "usage.reported"
	EventRunCompleted           = "run.completed"
	EventRunFailed              = "run.failed"
	EventRunCancelled           = "run.cancelled"
)

// ContextInput is one attachment: type "text" (Source, MediaType, Text), "image" or
// "pdf" (Source, MediaType, Data as base64) or "reference" (ID, Revision, MediaType).
type ContextInput struct {
	Type      string         `json:"type"`
	Source    *ContextSource `json:"source,omitzero"`
	ID        string         `json:"id,omitzero"`
	Revision  string         `json:"revision,omitzero"`
	MediaType string         `json:"mediaType"`
	Text      string         `json:"text,omitzero"`
	Data      string         `json:"data,omitzero"`
}

// IngestDocument is the document of an IngestRequest, by Type: "text" (Source, MediaType
// text/plain or text/markdown, Text), "pdf" (Source, MediaType application/pdf, Data in
// base64) or "email" (Source, ThreadID, Messages).
type IngestDocument struct {
	Type      string         `json:"type"`
	Source    ContextSource  `json:"source"`
	MediaType string         `json:"mediaType,omitzero"`
	Text      string         `json:"text,omitzero"`
	Data      string         `json:"data,omitzero"`
	ThreadID  string         `json:"threadId,omitzero"`
	Messages  []EmailMessage `json:"messages,omitzero"`
}

// EmailMessage is one message of an email-thread IngestDocument; an empty Text is a
// message without text.
type EmailMessage struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Usage counters are nil when the provider did not report them (0 is a real count).
type Usage struct {
	InputTokens          *int64   `json:"inputTokens,omitzero"`
	OutputTokens         *int64   `json:"outputTokens,omitzero"`
	CachedInputTokens    *int64   `json:"cachedInputTokens,omitzero"`
	ReasoningTokens      *int64   `json:"reasoningTokens,omitzero"`
	CostUSD              *float64 `json:"costUsd,omitzero"`
	APIEquivalentCostUSD *float64 `json:"apiEquivalentCostUsd,omitzero"`
}

type ContextManifest struct {
	ContextSource
	MediaType string `json:"mediaType"`
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
	Origin    string `json:"origin"`
	ExpiresAt string `json:"expiresAt,omitzero"`
}

// Event is one validated run event. Payload fields are set according to Type;
// Raw holds the event exactly as received.
type Event struct {
	Type      string `json:"type"`
	RunID     string `json:"runId"`
	Sequence  int64  `json:"sequence"`
	Timestamp string `json:"timestamp"`
	Optional  bool   `json:"optional,omitzero"`

	Provider   string              `json:"provider,omitzero"` // run.started
	Model      string              `json:"model,omitzero"`    // run.started
	Step       int                 `json:"step,omitzero"`     // step.started, usage.reported
	Text       string              `json:"text,omitzero"`     // text.delta
	Phase      string              `json:"phase,omitzero"`    // run.progress
	Call       *ToolCall           `json:"call,omitzero"`     // tool.called
	CallID     string              `json:"callId,omitzero"`   // tool.completed
	Output     json.RawMessage     `json:"output,omitzero"`   // tool.completed
	Usage      *Usage              `json:"usage,omitzero"`    // usage.reported
	Result     *RunResult          `json:"result,omitzero"`   // run.completed
	Error      *DriverError        `json:"error,omitzero"`    // run.failed, run.cancelled
	Approval   *ApprovalRequest    `json:"approval,omitzero"`
	Resolution *ApprovalResolution `json:"resolution,omitzero"`
	Execution  *ToolExecution      `json:"execution,omitzero"`

	Raw json.RawMessage `json:"-"`
}

// Terminal reports whether the event ends the run.
func (e Event) Terminal() bool {
	return e.Type == EventRunCompleted || e.Type == EventRunFailed || e.Type == EventRunCancelled
}

// Approval decisions.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	DecisionCancel  = "cancel"
)

// Decide builds the decision for this approval request.
func (a ApprovalRequest) Decide(decision string) ApprovalDecision {
	return ApprovalDecision{ApprovalID: a.ApprovalID, RunID: a.RunID, Call: a.Call, Decision: decision}
}

// Identity returns the identity to report progress or a result for this execution.
func (x ToolExecution) Identity() ToolExecutionIdentity {
	return ToolExecutionIdentity{ExecutionID: x.ExecutionID, RunID: x.RunID, CallID: x.Call.ID}
}

// ToolExecutionResult delivers an execution's output, or Error
// "APPLICATION_TOOL_FAILED" instead. A JSON null output is json.RawMessage("null").
type ToolExecutionResult struct {
	ToolExecutionIdentity
	Output json.RawMessage `json:"output,omitzero"`
	Error  string          `json:"error,omitzero"`
}

// ToolExecutionReceipt acknowledges progress ("progress") or a result ("accepted").
type ToolExecutionReceipt struct {
	ToolExecutionIdentity
	Status string `json:"status"`
}
