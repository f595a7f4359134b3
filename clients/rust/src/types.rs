//! Wire types. Request types are strict (unknown fields are rejected when one is
//! deserialized); response types ignore unknown fields. Keys match case-sensitively.
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub use crate::error::ErrorOutcome;

/// A JSON object.
pub type JsonObject = Map<String, Value>;

// ---------------------------------------------------------------------------
// Run request

/// `POST /v1/runs` body. Build with [`RunRequest::new`] and set optional fields directly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunRequest {
    pub provider: String,
    pub model: String,
    pub input: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachments: Option<Vec<ContextInput>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<RetrievalOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_artifact: Option<OutputArtifactRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<HistoryMessage>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionBinding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approvals: Option<ApprovalOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub application_tools: Option<Vec<ApplicationToolDefinition>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_capabilities: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Host-side inactivity limit; absent or 0 means none (there is no default deadline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<BTreeMap<String, String>>,
}

impl RunRequest {
    pub fn new(provider: impl Into<String>, model: impl Into<String>, input: impl Into<String>) -> Self {
        RunRequest { provider: provider.into(), model: model.into(), input: input.into(), ..Default::default() }
    }
}

/// A context source's identity (request side, strict).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextSource {
    pub id: String,
    pub revision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourceLocation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_end: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

/// An attachment: inline text, image or PDF, or a reference the host resolves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum ContextInput {
    Text {
        source: ContextSource,
        #[serde(rename = "mediaType")]
        media_type: String,
        text: String,
    },
    Image {
        source: ContextSource,
        #[serde(rename = "mediaType")]
        media_type: String,
        /// Base64 bytes.
        data: String,
    },
    Pdf {
        source: ContextSource,
        #[serde(rename = "mediaType")]
        media_type: String,
        data: String,
    },
    Reference {
        id: String,
        revision: String,
        #[serde(rename = "mediaType")]
        media_type: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputArtifactRequest {
    pub name: String,
    pub media_type: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetrievalOptions {
    pub corpus: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ids: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_context_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_score: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_delay_ms: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_delay_ms: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryMessage {
    pub role: Role,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// Continue a stored conversation session at an exact revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionBinding {
    pub id: String,
    pub revision: u64,
}

/// Opt into interactive approvals (streaming runs only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalOptions {
    pub mode: ApprovalMode,
    pub idle_policy: IdlePolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_after_ms: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    Interactive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdlePolicy {
    Pause,
    Continue,
}

/// A function the application executes itself (streaming runs only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplicationToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: JsonObject,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires_approval: Option<bool>,
}

// ---------------------------------------------------------------------------
// Run result

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    pub run_id: String,
    pub provider: String,
    pub model: String,
    /// The final step's visible text (`text.delta` events span all steps).
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    pub usage: Usage,
    pub steps: u32,
    pub finish_reason: FinishReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<ContextManifest>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<DraftArtifact>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<RetrievalResult>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FinishReason {
    Stop,
    Length,
}

/// Usage counters; a field is absent when it is unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// An estimate, never a charge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_equivalent_cost_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub id: String,
    pub revision: u64,
    pub provider: String,
    pub model: String,
    pub mode: SessionMode,
    pub state: SessionState,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionMode {
    History,
    Native,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionState {
    Ready,
    Running,
    Interrupted,
}

/// What one context source contributed to a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextManifest {
    pub id: String,
    pub revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    pub media_type: String,
    pub bytes: u64,
    pub sha256: String,
    pub origin: ContextOrigin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextOrigin {
    Inline,
    Reference,
    Retrieval,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftArtifact {
    pub name: String,
    pub media_type: String,
    pub id: String,
    /// Always `"draft"`: the application decides whether to accept it.
    pub status: String,
    pub content: String,
    pub sha256: String,
    pub source_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetrievalResult {
    pub corpus: String,
    pub index: RetrievalIndex,
    pub hits: Vec<RetrievalHit>,
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetrievalIndex {
    pub provider_id: String,
    pub vendor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    pub auth_mode: String,
    pub model: String,
    pub dimensions: u32,
    pub metric: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetrievalHit {
    pub chunk_id: String,
    pub source: ContextSource,
    pub text: String,
    pub score: f64,
    pub document_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingestion: Option<IngestionManifest>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestionManifest {
    pub format: String,
    pub input_sha256: String,
    pub input_bytes: u64,
    pub extractor: ExtractorIdentity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocr_extractor: Option<ExtractorIdentity>,
    pub chunker: ChunkerIdentity,
    pub extracted_text_bytes: u64,
    pub indexed_text_bytes: u64,
    pub chunks: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<PageCoverage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<MessageCoverage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractorIdentity {
    pub id: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChunkerIdentity {
    pub id: String,
    pub max_bytes: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageCoverage {
    pub total: u32,
    pub ocr: Vec<u32>,
    pub empty: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageCoverage {
    pub total: u32,
    pub empty: u32,
}

// ---------------------------------------------------------------------------
// Events

/// The wire error object of `run.failed` / `run.cancelled` and of HTTP error envelopes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    pub code: String,
    pub message: String,
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ErrorOutcome>,
}

impl From<ErrorInfo> for crate::error::DriverError {
    fn from(e: ErrorInfo) -> Self {
        crate::error::DriverError { code: e.code, message: e.message, retryable: e.retryable, outcome: e.outcome, status: None }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: JsonObject,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub approval_id: String,
    pub run_id: String,
    pub call: ToolCall,
    pub requested_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    pub idle_policy: IdlePolicy,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResolution {
    pub approval_id: String,
    pub run_id: String,
    pub call_id: String,
    pub outcome: ApprovalOutcome,
    pub decided_at: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalOutcome {
    Approved,
    Denied,
    Cancelled,
    Expired,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    pub execution_id: String,
    pub run_id: String,
    pub call: ToolCall,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProgressPhase {
    Model,
    Tool,
    Context,
}

/// One validated event of a run stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub run_id: String,
    pub sequence: u64,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
    #[serde(flatten)]
    pub payload: EventPayload,
}

impl Event {
    /// The wire `type`.
    pub fn kind(&self) -> &'static str {
        self.payload.kind()
    }

    /// `run.completed`, `run.failed` or `run.cancelled`.
    pub fn is_terminal(&self) -> bool {
        matches!(self.payload, EventPayload::RunCompleted { .. } | EventPayload::RunFailed { .. } | EventPayload::RunCancelled { .. })
    }
}

/// The payload of each of the 13 known event types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum EventPayload {
    #[serde(rename = "run.started")]
    RunStarted { provider: String, model: String },
    #[serde(rename = "step.started")]
    StepStarted { step: u32 },
    #[serde(rename = "text.delta")]
    TextDelta { text: String },
    #[serde(rename = "run.progress")]
    RunProgress { phase: ProgressPhase },
    #[serde(rename = "approval.requested")]
    ApprovalRequested { approval: ApprovalRequest },
    #[serde(rename = "approval.resolved")]
    ApprovalResolved { resolution: ApprovalResolution },
    #[serde(rename = "tool.execution.requested")]
    ToolExecutionRequested { execution: ToolExecution },
    #[serde(rename = "tool.called")]
    ToolCalled { call: ToolCall },
    #[serde(rename = "tool.completed")]
    ToolCompleted {
        #[serde(rename = "callId")]
        call_id: String,
        output: Value,
    },
    #[serde(rename = "usage.reported")]
    UsageReported { step: u32, usage: Usage },
    #[serde(rename = "run.completed")]
    RunCompleted { result: Box<RunResult> },
    #[serde(rename = "run.failed")]
    RunFailed { error: ErrorInfo },
    #[serde(rename = "run.cancelled")]
    RunCancelled { error: ErrorInfo },
}

impl EventPayload {
    pub fn kind(&self) -> &'static str {
        match self {
            EventPayload::RunStarted { .. } => "run.started",
            EventPayload::StepStarted { .. } => "step.started",
            EventPayload::TextDelta { .. } => "text.delta",
            EventPayload::RunProgress { .. } => "run.progress",
            EventPayload::ApprovalRequested { .. } => "approval.requested",
            EventPayload::ApprovalResolved { .. } => "approval.resolved",
            EventPayload::ToolExecutionRequested { .. } => "tool.execution.requested",
            EventPayload::ToolCalled { .. } => "tool.called",
            EventPayload::ToolCompleted { .. } => "tool.completed",
            EventPayload::UsageReported { .. } => "usage.reported",
            EventPayload::RunCompleted { .. } => "run.completed",
            EventPayload::RunFailed { .. } => "run.failed",
            EventPayload::RunCancelled { .. } => "run.cancelled",
        }
    }
}

// ---------------------------------------------------------------------------
// Discovery

/// `GET /v1/protocol`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProtocolInfo {
    pub protocol: String,
    pub version: String,
    pub supported_versions: Vec<String>,
    /// Open-ended: unknown feature names are kept.
    pub features: Vec<String>,
}

/// One provider instance the token may use (`GET /v1/providers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provider {
    pub id: String,
    pub name: String,
    pub vendor: String,
    pub auth_mode: AuthMode,
    pub capabilities: Capabilities,
    /// The host's model allowlist: absent = any explicit model, empty = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_stat_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_media_types: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<ProviderHealth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_catalog: Option<ModelCatalog>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMode {
    ApiKey,
    CliSession,
    None,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    pub tools: bool,
    pub text_streaming: bool,
    /// Further boolean capabilities (`safeRetries`, `images`, ...).
    #[serde(flatten)]
    pub other: BTreeMap<String, bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderHealth {
    pub status: HealthStatus,
    /// Open set of codes.
    pub code: String,
    pub message: String,
    pub checked_at: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    Ready,
    Unauthenticated,
    Unavailable,
    Unsupported,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCatalog {
    pub source: CatalogSource,
    pub models: Vec<String>,
    pub complete: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CatalogSource {
    Provider,
    Configured,
    Unavailable,
}

// ---------------------------------------------------------------------------
// Approval decisions and application tool executions

/// `POST /v1/approvals/decisions`: decides one pending approval, echoing its run and call.
/// Build it from the event with [`ApprovalRequest::decision`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalDecision {
    pub approval_id: String,
    pub run_id: String,
    pub call: DecidedCall,
    pub decision: ApprovalAction,
}

/// The call an approval decision is about (strict copy of the requested call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecidedCall {
    pub id: String,
    pub name: String,
    pub arguments: JsonObject,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalAction {
    Approve,
    Deny,
    Cancel,
}

impl ApprovalAction {
    /// The resolution outcome a decision must produce.
    pub fn outcome(self) -> ApprovalOutcome {
        match self {
            ApprovalAction::Approve => ApprovalOutcome::Approved,
            ApprovalAction::Deny => ApprovalOutcome::Denied,
            ApprovalAction::Cancel => ApprovalOutcome::Cancelled,
        }
    }
}

impl ApprovalRequest {
    /// The decision `action` on exactly this approval.
    pub fn decision(&self, action: ApprovalAction) -> ApprovalDecision {
        ApprovalDecision {
            approval_id: self.approval_id.clone(),
            run_id: self.run_id.clone(),
            call: DecidedCall { id: self.call.id.clone(), name: self.call.name.clone(), arguments: self.call.arguments.clone() },
            decision: action,
        }
    }
}

/// Names one dispatched application tool execution (`POST /v1/tool-executions/progress`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolExecutionIdentity {
    pub execution_id: String,
    pub run_id: String,
    pub call_id: String,
}

impl ToolExecution {
    pub fn identity(&self) -> ToolExecutionIdentity {
        ToolExecutionIdentity { execution_id: self.execution_id.clone(), run_id: self.run_id.clone(), call_id: self.call.id.clone() }
    }
}

/// The one result of an execution (`POST /v1/tool-executions/results`): exactly one of
/// `output` (any JSON, `null` included) or `error`. Use [`success`](Self::success) or
/// [`failure`](Self::failure).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolExecutionResult {
    pub execution_id: String,
    pub run_id: String,
    pub call_id: String,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolFailure>,
}

/// A present field, even when its value is `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToolFailure {
    #[serde(rename = "APPLICATION_TOOL_FAILED")]
    ApplicationToolFailed,
}

impl ToolExecutionResult {
    pub fn success(identity: ToolExecutionIdentity, output: Value) -> Self {
        let ToolExecutionIdentity { execution_id, run_id, call_id } = identity;
        ToolExecutionResult { execution_id, run_id, call_id, output: Some(output), error: None }
    }

    pub fn failure(identity: ToolExecutionIdentity) -> Self {
        let ToolExecutionIdentity { execution_id, run_id, call_id } = identity;
        ToolExecutionResult { execution_id, run_id, call_id, output: None, error: Some(ToolFailure::ApplicationToolFailed) }
    }
}

/// The host's receipt for tool progress or a tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionReceipt {
    pub execution_id: String,
    pub run_id: String,
    pub call_id: String,
    pub status: ReceiptStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReceiptStatus {
    Progress,
    Accepted,
}
