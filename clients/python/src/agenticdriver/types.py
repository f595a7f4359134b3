"""Typed wire shapes (plain dicts at runtime) for ``mypy --strict`` users.

Required keys sit in a base class, optional ones in a ``total=False`` subclass, which
keeps Python 3.10 support without third-party typing helpers. Events form the union
``RunEvent``, narrowable on ``event["type"]``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Literal, TypedDict, Union

JsonObject = Dict[str, Any]
MediaType = Literal["text/plain", "text/markdown", "image/png", "image/jpeg", "image/webp", "application/pdf"]
FinishReason = Literal["stop", "length"]
ProgressPhase = Literal["model", "tool", "context"]


class _ErrorInfoRequired(TypedDict):
    code: str
    message: str
    retryable: bool


class ErrorInfo(_ErrorInfoRequired, total=False):
    outcome: Literal["uncertain"]


class Usage(TypedDict, total=False):
    inputTokens: int
    outputTokens: int
    cachedInputTokens: int
    reasoningTokens: int
    costUsd: float
    apiEquivalentCostUsd: float


class ToolCall(TypedDict):
    id: str
    name: str
    arguments: JsonObject


class SourceLocation(TypedDict, total=False):
    documentId: str
    page: int
    pageEnd: int
    startLine: int
    endLine: int
    section: str
    threadId: str
    messageId: str


class _ContextSourceRequired(TypedDict):
    id: str
    revision: str


class ContextSource(_ContextSourceRequired, total=False):
    title: str
    uri: str
    location: SourceLocation


class _ContextManifestRequired(_ContextSourceRequired):
    mediaType: MediaType
    bytes: int
    sha256: str
    origin: Literal["inline", "reference", "retrieval"]


class ContextManifest(_ContextManifestRequired, total=False):
    title: str
    uri: str
    location: SourceLocation
    expiresAt: str


class DraftArtifact(TypedDict):
    name: str
    mediaType: Literal["text/plain", "text/markdown", "application/json"]
    id: str
    status: Literal["draft"]
    content: str
    sha256: str
    sourceIds: List[str]


class RetrievalIndex(TypedDict, total=False):
    providerId: str
    vendor: str
    accountId: str
    authMode: Literal["api-key", "none"]
    model: str
    dimensions: int
    metric: Literal["cosine"]
    version: str


class _RetrievalHitRequired(TypedDict):
    chunkId: str
    source: ContextSource
    text: str
    score: float
    documentSha256: str


class RetrievalHit(_RetrievalHitRequired, total=False):
    ingestion: JsonObject


class RetrievalResult(TypedDict):
    corpus: str
    index: RetrievalIndex
    hits: List[RetrievalHit]
    truncated: bool


class _SessionInfoRequired(TypedDict):
    id: str
    revision: int
    provider: str
    model: str
    mode: Literal["history", "native"]
    state: Literal["ready", "running", "interrupted"]
    createdAt: str
    updatedAt: str


class SessionInfo(_SessionInfoRequired, total=False):
    expiresAt: str


class _RunResultRequired(TypedDict):
    runId: str
    provider: str
    model: str
    text: str
    usage: Usage
    steps: int
    finishReason: FinishReason


class RunResult(_RunResultRequired, total=False):
    output: Any
    session: SessionInfo
    sources: List[ContextManifest]
    artifacts: List[DraftArtifact]
    retrieval: RetrievalResult


# --- Run request ----------------------------------------------------------------


class _TextInputRequired(TypedDict):
    type: Literal["text"]
    source: ContextSource
    mediaType: Literal["text/plain", "text/markdown"]
    text: str


class _BinaryInput(TypedDict):
    type: Literal["image", "pdf"]
    source: ContextSource
    mediaType: MediaType
    data: str


class _ReferenceInput(TypedDict):
    type: Literal["reference"]
    id: str
    revision: str
    mediaType: MediaType


ContextInput = Union[_TextInputRequired, _BinaryInput, _ReferenceInput]


class _RetrievalOptionsRequired(TypedDict):
    corpus: str


class RetrievalOptions(_RetrievalOptionsRequired, total=False):
    sourceIds: List[str]
    query: str
    limit: int
    maxContextBytes: int
    minScore: float


class OutputArtifactRequest(TypedDict):
    name: str
    mediaType: Literal["text/plain", "text/markdown", "application/json"]


class _RetryPolicyRequired(TypedDict):
    maxAttempts: int


class RetryPolicy(_RetryPolicyRequired, total=False):
    baseDelayMs: int
    maxDelayMs: int


class HistoryMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: str


class SessionBinding(TypedDict):
    id: str
    revision: int


class _ApprovalOptionsRequired(TypedDict):
    mode: Literal["interactive"]
    idlePolicy: Literal["pause", "continue"]


class ApprovalOptions(_ApprovalOptionsRequired, total=False):
    expiresAfterMs: int


class _ApplicationToolRequired(TypedDict):
    name: str
    description: str
    inputSchema: JsonObject


class ApplicationTool(_ApplicationToolRequired, total=False):
    outputSchema: JsonObject
    requiresApproval: bool


class _RunRequestRequired(TypedDict):
    provider: str
    model: str
    input: str


class RunRequest(_RunRequestRequired, total=False):
    attachments: List[ContextInput]
    retrieval: RetrievalOptions
    outputArtifact: OutputArtifactRequest
    idempotencyKey: str
    retry: RetryPolicy
    instructions: str
    history: List[HistoryMessage]
    session: SessionBinding
    approvals: ApprovalOptions
    applicationTools: List[ApplicationTool]
    tools: List[str]
    requiredCapabilities: List[str]
    maxSteps: int
    maxOutputTokens: int
    idleTimeoutMs: int
    outputSchema: JsonObject
    metadata: Dict[str, str]


# --- Events ---------------------------------------------------------------------


class _Envelope(TypedDict):
    runId: str
    sequence: int
    timestamp: str


class RunStartedEvent(_Envelope):
    type: Literal["run.started"]
    provider: str
    model: str


class StepStartedEvent(_Envelope):
    type: Literal["step.started"]
    step: int


class TextDeltaEvent(_Envelope):
    type: Literal["text.delta"]
    text: str


class RunProgressEvent(_Envelope):
    type: Literal["run.progress"]
    phase: ProgressPhase


class _ApprovalRequestRequired(TypedDict):
    approvalId: str
    runId: str
    call: ToolCall
    requestedAt: str
    idlePolicy: Literal["pause", "continue"]


class ApprovalRequest(_ApprovalRequestRequired, total=False):
    expiresAt: str


class ApprovalResolution(TypedDict):
    approvalId: str
    runId: str
    callId: str
    outcome: Literal["approved", "denied", "cancelled", "expired"]
    decidedAt: str


class ToolExecution(TypedDict):
    executionId: str
    runId: str
    call: ToolCall


class ApprovalRequestedEvent(_Envelope):
    type: Literal["approval.requested"]
    approval: ApprovalRequest


class ApprovalResolvedEvent(_Envelope):
    type: Literal["approval.resolved"]
    resolution: ApprovalResolution


class ToolExecutionRequestedEvent(_Envelope):
    type: Literal["tool.execution.requested"]
    execution: ToolExecution


class ToolCalledEvent(_Envelope):
    type: Literal["tool.called"]
    call: ToolCall


class ToolCompletedEvent(_Envelope):
    type: Literal["tool.completed"]
    callId: str
    output: Any


class UsageReportedEvent(_Envelope):
    type: Literal["usage.reported"]
    step: int
    usage: Usage


class RunCompletedEvent(_Envelope):
    type: Literal["run.completed"]
    result: RunResult


class RunFailedEvent(_Envelope):
    type: Literal["run.failed"]
    error: ErrorInfo


class RunCancelledEvent(_Envelope):
    type: Literal["run.cancelled"]
    error: ErrorInfo


RunEvent = Union[
    RunStartedEvent,
    StepStartedEvent,
    TextDeltaEvent,
    RunProgressEvent,
    ApprovalRequestedEvent,
    ApprovalResolvedEvent,
    ToolExecutionRequestedEvent,
    ToolCalledEvent,
    ToolCompletedEvent,
    UsageReportedEvent,
    RunCompletedEvent,
    RunFailedEvent,
    RunCancelledEvent,
]

# --- Approval decisions and application-tool executions -------------------------

Decision = Literal["approve", "deny", "cancel"]


class ApprovalDecision(TypedDict):
    """``POST v1/approvals/decisions``: echoes the exact run and call being decided."""

    approvalId: str
    runId: str
    call: ToolCall
    decision: Decision


class ToolExecutionIdentity(TypedDict):
    """``POST v1/tool-executions/progress``; also the identity every result carries."""

    executionId: str
    runId: str
    callId: str


class ToolExecutionOutput(ToolExecutionIdentity):
    output: Any


class ToolExecutionFailure(ToolExecutionIdentity):
    error: Literal["APPLICATION_TOOL_FAILED"]


ToolExecutionResult = Union[ToolExecutionOutput, ToolExecutionFailure]
"""``POST v1/tool-executions/results``: exactly one of ``output`` or ``error``."""


class ToolExecutionReceipt(ToolExecutionIdentity):
    status: Literal["progress", "accepted"]


# --- Discovery ------------------------------------------------------------------


class ProtocolInfo(TypedDict):
    protocol: Literal["agenticdriver"]
    version: Literal["1.0"]
    supportedVersions: List[str]
    features: List[str]


class ProviderHealth(TypedDict):
    status: Literal["ready", "unauthenticated", "unavailable", "unsupported", "unknown"]
    code: str
    message: str
    checkedAt: str


class ModelCatalog(TypedDict):
    source: Literal["provider", "configured", "unavailable"]
    models: List[str]
    complete: bool


class _ProviderRequired(TypedDict):
    id: str
    name: str
    vendor: str
    authMode: Literal["api-key", "cli-session", "none"]
    capabilities: Dict[str, bool]


class Provider(_ProviderRequired, total=False):
    models: List[str]
    usageStatId: str
    inputMediaTypes: Dict[str, List[MediaType]]
    health: ProviderHealth
    modelCatalog: ModelCatalog
