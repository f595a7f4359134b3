//! Wire types. Request types are strict (unknown fields are rejected when one is
//! deserialized); response types ignore unknown fields. Keys match case-sensitively.
//!
//! The plain structs and string enums (`RunRequest`, `RunResult`, `Provider`, `Role`, ...)
//! are generated from `protocol/schemas` into `generated/types.rs` and re-exported here
//! under the same names. This file holds the types Rust models its own way (the
//! attachment union `ContextInput`, `Event` with its `EventPayload`, `ToolExecutionResult`
//! with its present-`null` output) and the hand-written methods of the generated types.
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::error::ErrorOutcome;
pub use crate::generated::types::*;

/// A JSON object.
pub type JsonObject = Map<String, Value>;

// ---------------------------------------------------------------------------
// Run request

impl RunRequest {
    pub fn new(provider: impl Into<String>, model: impl Into<String>, input: impl Into<String>) -> Self {
        RunRequest { provider: provider.into(), model: model.into(), input: input.into(), ..Default::default() }
    }
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

/// The document of an [`IngestRequest`]: Markdown or plain text, a PDF, or an email thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum IngestDocument {
    Text {
        source: ContextSource,
        /// `text/plain` or `text/markdown`.
        #[serde(rename = "mediaType")]
        media_type: String,
        text: String,
    },
    Pdf {
        source: ContextSource,
        /// `application/pdf`.
        #[serde(rename = "mediaType")]
        media_type: String,
        /// Base64 bytes.
        data: String,
    },
    Email {
        source: ContextSource,
        #[serde(rename = "threadId")]
        thread_id: String,
        messages: Vec<EmailMessage>,
    },
}

impl IngestDocument {
    /// The source (id and revision) the document is indexed as.
    pub fn source(&self) -> &ContextSource {
        match self {
            IngestDocument::Text { source, .. } | IngestDocument::Pdf { source, .. } | IngestDocument::Email { source, .. } => source,
        }
    }
}

/// One message of an email-thread [`IngestDocument`]; an empty `text` is a message without text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmailMessage {
    pub id: String,
    pub text: String,
}

// ---------------------------------------------------------------------------
// Events

impl From<ErrorInfo> for crate::error::DriverError {
    fn from(e: ErrorInfo) -> Self {
        crate::error::DriverError { code: e.code, message: e.message, retryable: e.retryable, outcome: e.outcome, status: None }
    }
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
// Approval decisions and application tool executions

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
