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

// RunRequest is the body of POST /v1/runs. Optional fields are omitted when zero; a
// non-nil empty Tools slice is sent as [] (it selects no tools, unlike an absent list).
type RunRequest struct {
	Provider             string            `json:"provider"`
	Model                string            `json:"model"`
	Input                string            `json:"input"`
	Attachments          []ContextInput    `json:"attachments,omitzero"`
	Retrieval            *RetrievalOptions `json:"retrieval,omitzero"`
	OutputArtifact       *OutputArtifact   `json:"outputArtifact,omitzero"`
	IdempotencyKey       string            `json:"idempotencyKey,omitzero"`
	Retry                *RetryPolicy      `json:"retry,omitzero"`
	Instructions         string            `json:"instructions,omitzero"`
	History              []HistoryMessage  `json:"history,omitzero"`
	Session              *SessionBinding   `json:"session,omitzero"`
	Approvals            *ApprovalOptions  `json:"approvals,omitzero"`
	ApplicationTools     []ApplicationTool `json:"applicationTools,omitzero"`
	Tools                []string          `json:"tools,omitzero"`
	RequiredCapabilities []string          `json:"requiredCapabilities,omitzero"`
	MaxSteps             int               `json:"maxSteps,omitzero"`
	MaxOutputTokens      int               `json:"maxOutputTokens,omitzero"`
	IdleTimeoutMs        int64             `json:"idleTimeoutMs,omitzero"`
	OutputSchema         json.RawMessage   `json:"outputSchema,omitzero"`
	Metadata             map[string]string `json:"metadata,omitzero"`
}

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

type ContextSource struct {
	ID       string          `json:"id"`
	Revision string          `json:"revision"`
	Title    string          `json:"title,omitzero"`
	URI      string          `json:"uri,omitzero"`
	Location *SourceLocation `json:"location,omitzero"`
}

type SourceLocation struct {
	DocumentID string `json:"documentId,omitzero"`
	Page       int    `json:"page,omitzero"`
	PageEnd    int    `json:"pageEnd,omitzero"`
	StartLine  int    `json:"startLine,omitzero"`
	EndLine    int    `json:"endLine,omitzero"`
	Section    string `json:"section,omitzero"`
	ThreadID   string `json:"threadId,omitzero"`
	MessageID  string `json:"messageId,omitzero"`
}

type RetrievalOptions struct {
	Corpus          string   `json:"corpus"`
	SourceIDs       []string `json:"sourceIds,omitzero"`
	Query           string   `json:"query,omitzero"`
	Limit           int      `json:"limit,omitzero"`
	MaxContextBytes int      `json:"maxContextBytes,omitzero"`
	MinScore        *float64 `json:"minScore,omitzero"`
}

type OutputArtifact struct {
	Name      string `json:"name"`
	MediaType string `json:"mediaType"`
}

type RetryPolicy struct {
	MaxAttempts int  `json:"maxAttempts"`
	BaseDelayMs *int `json:"baseDelayMs,omitzero"`
	MaxDelayMs  *int `json:"maxDelayMs,omitzero"`
}

type HistoryMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// SessionBinding continues a stored session at an exact revision.
type SessionBinding struct {
	ID       string `json:"id"`
	Revision int64  `json:"revision"`
}

// ApprovalOptions opts a streamed run into interactive approvals.
type ApprovalOptions struct {
	Mode           string `json:"mode"`
	IdlePolicy     string `json:"idlePolicy"`
	ExpiresAfterMs int64  `json:"expiresAfterMs,omitzero"`
}

// ApplicationTool declares a function the application executes itself (streaming only).
type ApplicationTool struct {
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	InputSchema      json.RawMessage `json:"inputSchema"`
	OutputSchema     json.RawMessage `json:"outputSchema,omitzero"`
	RequiresApproval *bool           `json:"requiresApproval,omitzero"`
}

// RunResult is the outcome of a completed run.
type RunResult struct {
	RunID        string            `json:"runId"`
	Provider     string            `json:"provider"`
	Model        string            `json:"model"`
	Text         string            `json:"text"`
	Output       json.RawMessage   `json:"output,omitzero"`
	Usage        Usage             `json:"usage"`
	Steps        int               `json:"steps"`
	FinishReason string            `json:"finishReason"`
	Session      *SessionInfo      `json:"session,omitzero"`
	Sources      []ContextManifest `json:"sources,omitzero"`
	Artifacts    []DraftArtifact   `json:"artifacts,omitzero"`
	Retrieval    *RetrievalResult  `json:"retrieval,omitzero"`
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

type DraftArtifact struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	MediaType string   `json:"mediaType"`
	Status    string   `json:"status"`
	Content   string   `json:"content"`
	SHA256    string   `json:"sha256"`
	SourceIDs []string `json:"sourceIds"`
}

type RetrievalResult struct {
	Corpus    string         `json:"corpus"`
	Index     RetrievalIndex `json:"index"`
	Hits      []RetrievalHit `json:"hits"`
	Truncated bool           `json:"truncated"`
}

type RetrievalIndex struct {
	ProviderID string `json:"providerId"`
	Vendor     string `json:"vendor"`
	AccountID  string `json:"accountId,omitzero"`
	AuthMode   string `json:"authMode"`
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
	Metric     string `json:"metric"`
	Version    string `json:"version"`
}

type RetrievalHit struct {
	ChunkID        string             `json:"chunkId"`
	Source         ContextSource      `json:"source"`
	Text           string             `json:"text"`
	Score          float64            `json:"score"`
	DocumentSHA256 string             `json:"documentSha256"`
	Ingestion      *IngestionManifest `json:"ingestion,omitzero"`
}

type IngestionManifest struct {
	Format             string             `json:"format"`
	InputSHA256        string             `json:"inputSha256"`
	InputBytes         int64              `json:"inputBytes"`
	Extractor          ExtractorIdentity  `json:"extractor"`
	OCRExtractor       *ExtractorIdentity `json:"ocrExtractor,omitzero"`
	Chunker            Chunker            `json:"chunker"`
	ExtractedTextBytes int64              `json:"extractedTextBytes"`
	IndexedTextBytes   int64              `json:"indexedTextBytes"`
	Chunks             int                `json:"chunks"`
	Pages              *PageCoverage      `json:"pages,omitzero"`
	Messages           *MessageCoverage   `json:"messages,omitzero"`
}

type ExtractorIdentity struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

type Chunker struct {
	ID       string `json:"id"`
	MaxBytes int    `json:"maxBytes"`
}

type PageCoverage struct {
	Total int   `json:"total"`
	OCR   []int `json:"ocr"`
	Empty []int `json:"empty"`
}

type MessageCoverage struct {
	Total int `json:"total"`
	Empty int `json:"empty"`
}

type SessionInfo struct {
	ID        string `json:"id"`
	Revision  int64  `json:"revision"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	Mode      string `json:"mode"`
	State     string `json:"state"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
	ExpiresAt string `json:"expiresAt,omitzero"`
}

// ToolCall is a model's request to run a tool; Arguments is a JSON object.
type ToolCall struct {
	ID        string                     `json:"id"`
	Name      string                     `json:"name"`
	Arguments map[string]json.RawMessage `json:"arguments"`
}

type ApprovalRequest struct {
	ApprovalID  string   `json:"approvalId"`
	RunID       string   `json:"runId"`
	Call        ToolCall `json:"call"`
	RequestedAt string   `json:"requestedAt"`
	ExpiresAt   string   `json:"expiresAt,omitzero"`
	IdlePolicy  string   `json:"idlePolicy"`
}

type ApprovalResolution struct {
	ApprovalID string `json:"approvalId"`
	RunID      string `json:"runId"`
	CallID     string `json:"callId"`
	Outcome    string `json:"outcome"`
	DecidedAt  string `json:"decidedAt"`
}

// ToolExecution asks the application to run one of its declared tools.
type ToolExecution struct {
	ExecutionID string   `json:"executionId"`
	RunID       string   `json:"runId"`
	Call        ToolCall `json:"call"`
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

// ProtocolInfo is the answer of GET /v1/protocol.
type ProtocolInfo struct {
	Protocol          string   `json:"protocol"`
	Version           string   `json:"version"`
	SupportedVersions []string `json:"supportedVersions"`
	Features          []string `json:"features"`
}

// Provider is one provider instance the token may use.
type Provider struct {
	ID              string              `json:"id"`
	Name            string              `json:"name"`
	Vendor          string              `json:"vendor"`
	AuthMode        string              `json:"authMode"`
	Capabilities    map[string]bool     `json:"capabilities"`
	Models          []string            `json:"models,omitzero"`
	UsageStatID     string              `json:"usageStatId,omitzero"`
	InputMediaTypes map[string][]string `json:"inputMediaTypes,omitzero"`
	Health          *ProviderHealth     `json:"health,omitzero"`
	ModelCatalog    *ModelCatalog       `json:"modelCatalog,omitzero"`
}

type ProviderHealth struct {
	Status    string `json:"status"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	CheckedAt string `json:"checkedAt"`
}

type ModelCatalog struct {
	Source   string   `json:"source"`
	Models   []string `json:"models"`
	Complete bool     `json:"complete"`
}

// Approval decisions.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	DecisionCancel  = "cancel"
)

// ApprovalDecision answers one approval.requested event (POST /v1/approvals/decisions).
type ApprovalDecision struct {
	ApprovalID string   `json:"approvalId"`
	RunID      string   `json:"runId"`
	Call       ToolCall `json:"call"`
	Decision   string   `json:"decision"`
}

// Decide builds the decision for this approval request.
func (a ApprovalRequest) Decide(decision string) ApprovalDecision {
	return ApprovalDecision{ApprovalID: a.ApprovalID, RunID: a.RunID, Call: a.Call, Decision: decision}
}

// ToolExecutionIdentity names one dispatched application-tool execution.
type ToolExecutionIdentity struct {
	ExecutionID string `json:"executionId"`
	RunID       string `json:"runId"`
	CallID      string `json:"callId"`
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
