/**
 * AgenticDriver wire protocol 1.0 — the single source of truth.
 *
 * Every schema here is plain JSON Schema (TypeBox builds it), so the same objects give
 * TypeScript types (`Static`), runtime validators (Ajv, see ./validate.ts) and the
 * published documents under `protocol/` (scripts/generate-protocol.ts).
 *
 * Request objects are strict (unknown fields rejected). Response objects and events
 * tolerate unknown fields, except the nested objects the protocol declares strict.
 * Rules JSON Schema cannot express (cross-field checks) live in ./rules.ts.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const strict = { additionalProperties: false } as const;
const open = {} as const;

// ---------------------------------------------------------------------------
// Identifiers and scalars

export const ProviderId = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,79}$' });
export const ModelId = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._:/\\[\\]-]{0,199}$' });
export const ToolName = Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]{0,63}$' });
export const CapabilityName = Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9._-]{0,79}$' });
export const OpaqueKey = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$' });
export const Uuid = Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' });
/** Any RFC 3339 date-time (offsets allowed), checked for impossible dates. */
export const Timestamp = Type.String({ format: 'date-time' });
/** Host-stamped timestamps: UTC with exactly three fraction digits (spec decision 5). */
export const HostTimestamp = Type.String({ format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' });
export const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });
/** An embedding model's name as an index descriptor carries it (e.g. `BAAI/bge-small-en-v1.5`, `nomic-embed-text:v1.5`). */
export const EmbeddingModel = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._:/-]{0,199}$' });
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const JsonObject = Type.Record(Type.String(), Type.Unknown());
export const MediaType = Type.Union(
  ['text/plain', 'text/markdown', 'image/png', 'image/jpeg', 'image/webp', 'application/pdf'].map((m) => Type.Literal(m)),
);

// ---------------------------------------------------------------------------
// Errors and usage

export const ErrorInfo = Type.Object(
  {
    code: Type.String({ minLength: 1 }),
    message: Type.String(),
    retryable: Type.Boolean(),
    outcome: Type.Optional(Type.Literal('uncertain')),
  },
  { ...open, $id: 'ErrorInfo' },
);

export const ErrorEnvelope = Type.Object({ error: Type.Ref(ErrorInfo) }, { ...open, $id: 'ErrorEnvelope' });

export const Usage = Type.Object(
  {
    inputTokens: Type.Optional(Count),
    outputTokens: Type.Optional(Count),
    cachedInputTokens: Type.Optional(Count),
    reasoningTokens: Type.Optional(Count),
    costUsd: Type.Optional(Type.Number({ minimum: 0 })),
    apiEquivalentCostUsd: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { ...open, $id: 'Usage' },
);

export const ToolCall = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 256 }),
    name: ToolName,
    arguments: JsonObject,
  },
  { ...open, $id: 'ToolCall' },
);

// ---------------------------------------------------------------------------
// Context, artifacts, retrieval (request options and result manifests)

const SourceLocation = Type.Object(
  {
    documentId: Type.Optional(OpaqueKey),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    pageEnd: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    startLine: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    endLine: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    section: Type.Optional(Type.String({ maxLength: 256 })),
    threadId: Type.Optional(OpaqueKey),
    messageId: Type.Optional(OpaqueKey),
  },
  strict,
);

const contextSourceFields = {
  id: OpaqueKey,
  revision: OpaqueKey,
  title: Type.Optional(Type.String({ maxLength: 256 })),
  uri: Type.Optional(Type.String({ maxLength: 2048, pattern: '^(https|app)://\\S+$' })),
  location: Type.Optional(SourceLocation),
};
export const ContextSource = Type.Object(contextSourceFields, { ...strict, $id: 'ContextSource' });

const Base64 = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[A-Za-z0-9+/]*={0,2}$' });
export const ContextInput = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('text'),
        source: Type.Ref(ContextSource),
        mediaType: Type.Union([Type.Literal('text/plain'), Type.Literal('text/markdown')]),
        text: Type.String({ minLength: 1, maxLength: 1_000_000 }),
      },
      strict,
    ),
    Type.Object(
      {
        type: Type.Literal('image'),
        source: Type.Ref(ContextSource),
        mediaType: Type.Union([Type.Literal('image/png'), Type.Literal('image/jpeg'), Type.Literal('image/webp')]),
        data: Base64(44_739_244),
      },
      strict,
    ),
    Type.Object(
      { type: Type.Literal('pdf'), source: Type.Ref(ContextSource), mediaType: Type.Literal('application/pdf'), data: Base64(44_739_244) },
      strict,
    ),
    Type.Object({ type: Type.Literal('reference'), id: OpaqueKey, revision: OpaqueKey, mediaType: MediaType }, strict),
  ],
  { $id: 'ContextInput' },
);

export const ContextManifest = Type.Object(
  {
    ...contextSourceFields,
    mediaType: MediaType,
    bytes: Type.Integer({ minimum: 1, maximum: 33_554_432 }),
    sha256: Sha256,
    origin: Type.Union([Type.Literal('inline'), Type.Literal('reference'), Type.Literal('retrieval')]),
    expiresAt: Type.Optional(Timestamp),
  },
  { ...strict, $id: 'ContextManifest' },
);

const ArtifactName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^/\\\\\\u0000-\\u001f]+$' });
const ArtifactMediaType = Type.Union([Type.Literal('text/plain'), Type.Literal('text/markdown'), Type.Literal('application/json')]);

export const OutputArtifactRequest = Type.Object({ name: ArtifactName, mediaType: ArtifactMediaType }, strict);

export const DraftArtifact = Type.Object(
  {
    name: ArtifactName,
    mediaType: ArtifactMediaType,
    id: Type.String({ format: 'uuid' }),
    status: Type.Literal('draft'),
    content: Type.String({ maxLength: 262_144 }),
    sha256: Sha256,
    sourceIds: Type.Array(OpaqueKey, { maxItems: 16, uniqueItems: true }),
  },
  { ...strict, $id: 'DraftArtifact' },
);

export const RetrievalOptions = Type.Object(
  {
    corpus: OpaqueKey,
    sourceIds: Type.Optional(Type.Array(OpaqueKey, { minItems: 1, maxItems: 1000, uniqueItems: true })),
    query: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384, pattern: '\\S' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
    maxContextBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 262_144 })),
    minScore: Type.Optional(Type.Number({ minimum: -1, maximum: 1 })),
  },
  strict,
);

const ExtractorIdentity = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128 }), version: Type.String({ minLength: 1, maxLength: 128 }) },
  strict,
);

export const IngestionManifest = Type.Object(
  {
    format: Type.Union([Type.Literal('text'), Type.Literal('markdown'), Type.Literal('pdf'), Type.Literal('email')]),
    inputSha256: Sha256,
    inputBytes: Type.Integer({ minimum: 1, maximum: 33_554_432 }),
    extractor: ExtractorIdentity,
    ocrExtractor: Type.Optional(ExtractorIdentity),
    chunker: Type.Object({ id: Type.Literal('source-lines-v1'), maxBytes: Type.Integer({ minimum: 128, maximum: 16_384 }) }, strict),
    extractedTextBytes: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
    indexedTextBytes: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
    chunks: Type.Integer({ minimum: 1, maximum: 256 }),
    pages: Type.Optional(
      Type.Object(
        {
          total: Type.Integer({ minimum: 1, maximum: 1000 }),
          ocr: Type.Array(Type.Integer({ minimum: 1, maximum: 1000 }), { maxItems: 1000 }),
          empty: Type.Array(Type.Integer({ minimum: 1, maximum: 1000 }), { maxItems: 1000 }),
        },
        strict,
      ),
    ),
    messages: Type.Optional(
      Type.Object({ total: Type.Integer({ minimum: 1, maximum: 1000 }), empty: Type.Integer({ minimum: 0, maximum: 1000 }) }, strict),
    ),
  },
  { ...strict, $id: 'IngestionManifest' },
);

export const RetrievalResult = Type.Object(
  {
    corpus: OpaqueKey,
    /**
     * The vector index the corpus keeps (every corpus has one: its configured embedder, or the
     * host's built-in one), as wire 1.0 defines it, plus `ranking`: how the hits were ranked and
     * scored. A 1.0 host that omits `ranking` ranks by cosine.
     */
    index: Type.Object(
      {
        providerId: OpaqueKey,
        vendor: OpaqueKey,
        /** A deployment label for the embedder's account, not a login. */
        accountId: OpaqueKey,
        authMode: Type.Union([Type.Literal('api-key'), Type.Literal('none')]),
        model: EmbeddingModel,
        dimensions: Type.Integer({ minimum: 1, maximum: 4096 }),
        /** The similarity of the stored vectors. */
        metric: Type.Literal('cosine'),
        version: OpaqueKey,
        /**
         * `cosine`: by the vectors alone; `bm25`: by BM25 alone; `hybrid`: both fused, the BM25
         * score plus the min-max scaled cosine, halved (docs/retrieval.md explains each score).
         */
        ranking: Type.Optional(Type.Union([Type.Literal('cosine'), Type.Literal('bm25'), Type.Literal('hybrid')])),
      },
      strict,
    ),
    hits: Type.Array(
      Type.Object(
        {
          chunkId: OpaqueKey,
          source: Type.Ref(ContextSource),
          text: Type.String({ minLength: 1, maxLength: 16_384 }),
          score: Type.Number({ minimum: -1, maximum: 1 }),
          documentSha256: Sha256,
          ingestion: Type.Optional(Type.Ref(IngestionManifest)),
        },
        strict,
      ),
      { maxItems: 16 },
    ),
    truncated: Type.Boolean(),
  },
  { ...strict, $id: 'RetrievalResult' },
);

export const RetrievalSearch = Type.Object(
  { ...RetrievalOptions.properties, query: Type.String({ minLength: 1, maxLength: 16_384, pattern: '\\S' }) },
  { ...strict, $id: 'RetrievalSearch' },
);

const ChunkText = Type.String({ minLength: 1, maxLength: 16_384 });

export const RetrievalIndexRequest = Type.Object(
  {
    corpus: OpaqueKey,
    source: Type.Ref(ContextSource),
    chunks: Type.Array(Type.Object({ id: OpaqueKey, text: ChunkText, location: Type.Optional(SourceLocation) }, strict), {
      minItems: 1,
      maxItems: 256,
    }),
    ingestion: Type.Optional(Type.Ref(IngestionManifest)),
  },
  { ...strict, $id: 'RetrievalIndexRequest' },
);

const receiptFields = {
  corpus: OpaqueKey,
  sourceId: OpaqueKey,
  revision: OpaqueKey,
  documentSha256: Sha256,
  chunks: Type.Integer({ minimum: 1, maximum: 256 }),
  /** `unchanged`: the same content at the same revision was already indexed; nothing was embedded. */
  status: Type.Union([Type.Literal('indexed'), Type.Literal('unchanged')]),
};

export const RetrievalIndexReceipt = Type.Object(
  { ...receiptFields, ingestion: Type.Optional(Type.Ref(IngestionManifest)) },
  { ...open, $id: 'RetrievalIndexReceipt' },
);

export const RetrievalDeleteRequest = Type.Object({ corpus: OpaqueKey, sourceId: OpaqueKey, revision: OpaqueKey }, { ...strict, $id: 'RetrievalDeleteRequest' });

export const RetrievalDeleteResult = Type.Object(
  { corpus: OpaqueKey, sourceId: OpaqueKey, revision: OpaqueKey, deleted: Type.Boolean() },
  { ...open, $id: 'RetrievalDeleteResult' },
);

const IngestText = Type.String({ minLength: 1, maxLength: 1_048_576 });

export const IngestDocument = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('text'),
        source: Type.Ref(ContextSource),
        mediaType: Type.Union([Type.Literal('text/plain'), Type.Literal('text/markdown')]),
        text: IngestText,
      },
      strict,
    ),
    Type.Object(
      { type: Type.Literal('pdf'), source: Type.Ref(ContextSource), mediaType: Type.Literal('application/pdf'), data: Base64(44_739_244) },
      strict,
    ),
    Type.Object(
      {
        type: Type.Literal('email'),
        source: Type.Ref(ContextSource),
        threadId: OpaqueKey,
        messages: Type.Array(Type.Object({ id: OpaqueKey, text: Type.String({ maxLength: 1_048_576 }) }, strict), { minItems: 1, maxItems: 1000 }),
      },
      strict,
    ),
  ],
  { $id: 'IngestDocument' },
);

export const IngestRequest = Type.Object(
  {
    corpus: OpaqueKey,
    document: Type.Ref(IngestDocument),
    /** Can only lower the host's chunk size. */
    chunking: Type.Optional(Type.Object({ maxBytes: Type.Integer({ minimum: 128, maximum: 16_384 }) }, strict)),
    idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  },
  { ...strict, $id: 'IngestRequest' },
);

export const IngestResult = Type.Object({ ...receiptFields, ingestion: Type.Ref(IngestionManifest) }, { ...open, $id: 'IngestResult' });

// ---------------------------------------------------------------------------
// Sessions, approvals, application tools (extension shapes used by runs)

export const HistoryMessage = Type.Object(
  { role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), content: Type.String({ maxLength: 100_000 }) },
  { ...strict, $id: 'HistoryMessage' },
);

export const SessionBinding = Type.Object(
  { id: Type.String({ pattern: '^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$' }), revision: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) },
  strict,
);

export const SessionInfo = Type.Object(
  {
    id: Uuid,
    revision: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    provider: ProviderId,
    model: ModelId,
    mode: Type.Union([Type.Literal('history'), Type.Literal('native')]),
    state: Type.Union([Type.Literal('ready'), Type.Literal('running'), Type.Literal('interrupted')]),
    createdAt: HostTimestamp,
    updatedAt: HostTimestamp,
    expiresAt: Type.Optional(HostTimestamp),
  },
  { ...open, $id: 'SessionInfo' },
);

export const ApprovalOptions = Type.Object(
  {
    mode: Type.Literal('interactive'),
    idlePolicy: Type.Union([Type.Literal('pause'), Type.Literal('continue')]),
    expiresAfterMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  },
  strict,
);

export const ApplicationToolDefinition = Type.Object(
  {
    name: ToolName,
    description: Type.String({ minLength: 1, maxLength: 10_000 }),
    inputSchema: JsonObject,
    outputSchema: Type.Optional(JsonObject),
    requiresApproval: Type.Optional(Type.Boolean()),
  },
  { ...strict, $id: 'ApplicationToolDefinition' },
);

export const ApprovalRequest = Type.Object(
  {
    approvalId: Type.String({ minLength: 1, maxLength: 256 }),
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    call: Type.Ref(ToolCall),
    requestedAt: Timestamp,
    expiresAt: Type.Optional(Timestamp),
    idlePolicy: Type.Union([Type.Literal('pause'), Type.Literal('continue')]),
  },
  { ...open, $id: 'ApprovalRequest' },
);

export const ApprovalResolution = Type.Object(
  {
    approvalId: Type.String({ minLength: 1, maxLength: 256 }),
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    callId: Type.String({ minLength: 1, maxLength: 256 }),
    outcome: Type.Union([Type.Literal('approved'), Type.Literal('denied'), Type.Literal('cancelled'), Type.Literal('expired')]),
    decidedAt: Timestamp,
  },
  { ...open, $id: 'ApprovalResolution' },
);

export const ToolExecution = Type.Object(
  {
    executionId: Type.String({ minLength: 1, maxLength: 256 }),
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    call: Type.Ref(ToolCall),
  },
  { ...open, $id: 'ToolExecution' },
);

/** `POST /v1/approvals/decisions`: echoes the exact run and call being decided. */
export const ApprovalDecision = Type.Object(
  {
    approvalId: Type.String({ minLength: 1, maxLength: 256 }),
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    call: Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }), name: ToolName, arguments: JsonObject }, strict),
    decision: Type.Union([Type.Literal('approve'), Type.Literal('deny'), Type.Literal('cancel')]),
  },
  { ...strict, $id: 'ApprovalDecision' },
);

const toolExecutionIdentity = {
  executionId: Type.String({ minLength: 1, maxLength: 256 }),
  runId: Type.String({ minLength: 1, maxLength: 256 }),
  callId: Type.String({ minLength: 1, maxLength: 256 }),
};

/** `POST /v1/tool-executions/progress`. */
export const ToolExecutionIdentity = Type.Object(toolExecutionIdentity, { ...strict, $id: 'ToolExecutionIdentity' });

/** `POST /v1/tool-executions/results`: exactly one of `output` or `error`. */
export const ToolExecutionResult = Type.Union(
  [
    Type.Object({ ...toolExecutionIdentity, output: Type.Unknown() }, { ...strict, required: ['executionId', 'runId', 'callId', 'output'] }),
    Type.Object({ ...toolExecutionIdentity, error: Type.Literal('APPLICATION_TOOL_FAILED') }, strict),
  ],
  { $id: 'ToolExecutionResult' },
);

export const ToolExecutionReceipt = Type.Object(
  { ...toolExecutionIdentity, status: Type.Union([Type.Literal('progress'), Type.Literal('accepted')]) },
  { ...open, $id: 'ToolExecutionReceipt' },
);

// ---------------------------------------------------------------------------
// Run request and result

export const RetryPolicy = Type.Object(
  {
    maxAttempts: Type.Integer({ minimum: 1, maximum: 5 }),
    baseDelayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
    maxDelayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
  },
  strict,
);

export const RunRequest = Type.Object(
  {
    provider: ProviderId,
    model: ModelId,
    input: Type.String({ minLength: 1, maxLength: 100_000 }),
    attachments: Type.Optional(Type.Array(Type.Ref(ContextInput), { maxItems: 16 })),
    retrieval: Type.Optional(RetrievalOptions),
    outputArtifact: Type.Optional(OutputArtifactRequest),
    idempotencyKey: Type.Optional(OpaqueKey),
    retry: Type.Optional(RetryPolicy),
    instructions: Type.Optional(Type.String({ maxLength: 100_000 })),
    history: Type.Optional(Type.Array(Type.Ref(HistoryMessage), { maxItems: 100 })),
    session: Type.Optional(SessionBinding),
    approvals: Type.Optional(ApprovalOptions),
    applicationTools: Type.Optional(Type.Array(Type.Ref(ApplicationToolDefinition), { minItems: 1, maxItems: 32 })),
    tools: Type.Optional(Type.Array(ToolName, { maxItems: 32 })),
    requiredCapabilities: Type.Optional(Type.Array(CapabilityName, { maxItems: 32, uniqueItems: true })),
    maxSteps: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
    idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
    outputSchema: Type.Optional(JsonObject),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 80 }), Type.String({ maxLength: 500 }), { maxProperties: 32 }),
    ),
  },
  { ...strict, $id: 'RunRequest' },
);

export const FinishReason = Type.Union([Type.Literal('stop'), Type.Literal('length')]);

export const RunResult = Type.Object(
  {
    runId: Type.String({ minLength: 1 }),
    provider: Type.String({ minLength: 1 }),
    model: Type.String({ minLength: 1 }),
    text: Type.String(),
    output: Type.Optional(Type.Unknown()),
    usage: Type.Ref(Usage),
    steps: Type.Integer({ minimum: 1 }),
    finishReason: FinishReason,
    session: Type.Optional(Type.Ref(SessionInfo)),
    sources: Type.Optional(Type.Array(Type.Ref(ContextManifest), { maxItems: 16 })),
    artifacts: Type.Optional(Type.Array(Type.Ref(DraftArtifact), { maxItems: 1 })),
    retrieval: Type.Optional(Type.Ref(RetrievalResult)),
  },
  { ...open, $id: 'RunResult' },
);

// ---------------------------------------------------------------------------
// Events: envelope + 13 known types, payload fields at the top level

const envelope = {
  runId: Type.String({ minLength: 1 }),
  sequence: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  timestamp: Timestamp,
  optional: Type.Optional(Type.Boolean()),
};

export const EventEnvelope = Type.Object({ type: Type.String({ minLength: 1 }), ...envelope }, { ...open, $id: 'EventEnvelope' });

const event = <T extends string, P extends Record<string, TSchema>>(type: T, payload: P) =>
  Type.Object({ type: Type.Literal(type), ...envelope, ...payload }, { ...open, $id: eventSchemaId(type) });

function eventSchemaId(type: string): string {
  return type
    .split('.')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('') + 'Event';
}

export const RunProgressPhase = Type.Union([Type.Literal('model'), Type.Literal('tool'), Type.Literal('context')]);

export const EVENT_SCHEMAS = {
  'run.started': event('run.started', { provider: Type.String({ minLength: 1 }), model: Type.String({ minLength: 1 }) }),
  'step.started': event('step.started', { step: Type.Integer({ minimum: 1 }) }),
  'text.delta': event('text.delta', { text: Type.String() }),
  'run.progress': event('run.progress', { phase: RunProgressPhase }),
  'approval.requested': event('approval.requested', { approval: Type.Ref(ApprovalRequest) }),
  'approval.resolved': event('approval.resolved', { resolution: Type.Ref(ApprovalResolution) }),
  'tool.execution.requested': event('tool.execution.requested', { execution: Type.Ref(ToolExecution) }),
  'tool.called': event('tool.called', { call: Type.Ref(ToolCall) }),
  'tool.completed': event('tool.completed', { callId: Type.String({ minLength: 1 }), output: Type.Unknown() }),
  'usage.reported': event('usage.reported', { step: Type.Integer({ minimum: 1 }), usage: Type.Ref(Usage) }),
  'run.completed': event('run.completed', { result: Type.Ref(RunResult) }),
  'run.failed': event('run.failed', { error: Type.Ref(ErrorInfo) }),
  'run.cancelled': event('run.cancelled', { error: Type.Ref(ErrorInfo) }),
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];
export { TERMINAL_EVENT_TYPES } from './terminal-events.js';

export const RunEvent = Type.Union(
  EVENT_TYPES.map((type) => Type.Ref(EVENT_SCHEMAS[type])),
  { $id: 'RunEvent' },
);

// ---------------------------------------------------------------------------
// Discovery

export const ProtocolInfo = Type.Object(
  {
    protocol: Type.Literal('agenticdriver'),
    version: Type.Literal('1.0'),
    supportedVersions: Type.Array(Type.String({ minLength: 1 }), { contains: Type.Literal('1.0') }),
    features: Type.Array(Type.String()),
  },
  { ...open, $id: 'ProtocolInfo' },
);

export const ProviderHealth = Type.Object(
  {
    status: Type.Union(['ready', 'unauthenticated', 'unavailable', 'unsupported', 'unknown'].map((s) => Type.Literal(s))),
    code: Type.String({ minLength: 1 }),
    message: Type.String(),
    checkedAt: Timestamp,
  },
  { ...open, $id: 'ProviderHealth' },
);

export const ModelCatalog = Type.Object(
  {
    source: Type.Union([Type.Literal('provider'), Type.Literal('configured'), Type.Literal('unavailable')]),
    models: Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000 }),
    complete: Type.Boolean(),
  },
  { ...open, $id: 'ModelCatalog' },
);

export const Capabilities = Type.Object(
  { tools: Type.Boolean(), textStreaming: Type.Boolean() },
  { additionalProperties: Type.Boolean(), $id: 'Capabilities' },
);

export const Provider = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    name: Type.String(),
    vendor: Type.String({ minLength: 1 }),
    authMode: Type.Union([Type.Literal('api-key'), Type.Literal('cli-session'), Type.Literal('none')]),
    capabilities: Type.Ref(Capabilities),
    models: Type.Optional(Type.Array(Type.String())),
    usageStatId: Type.Optional(Type.String()),
    inputMediaTypes: Type.Optional(Type.Record(Type.String(), Type.Array(MediaType, { maxItems: 6 }))),
    health: Type.Optional(Type.Ref(ProviderHealth)),
    modelCatalog: Type.Optional(Type.Ref(ModelCatalog)),
  },
  { ...open, $id: 'Provider' },
);

export const ProviderList = Type.Object({ providers: Type.Array(Type.Ref(Provider)) }, { ...open, $id: 'ProviderList' });

export const Health = Type.Object(
  { status: Type.Literal('ok'), protocol: Type.Literal('agenticdriver.v1') },
  { ...open, $id: 'Health' },
);

// ---------------------------------------------------------------------------
// Conversation sessions and durable jobs

export const SessionCreate = Type.Object(
  {
    provider: ProviderId,
    model: ModelId,
    mode: Type.Union([Type.Literal('history'), Type.Literal('native')]),
    history: Type.Optional(Type.Array(Type.Ref(HistoryMessage), { maxItems: 100 })),
    instructions: Type.Optional(Type.String({ maxLength: 100_000 })),
  },
  { ...strict, $id: 'SessionCreate' },
);

export const SessionIdentity = Type.Object({ id: Uuid }, { ...strict, $id: 'SessionIdentity' });

export const SessionSnapshot = Type.Object(
  {
    session: Type.Ref(SessionInfo),
    history: Type.Array(Type.Ref(HistoryMessage), { maxItems: 100 }),
    instructions: Type.Optional(Type.String({ maxLength: 100_000 })),
  },
  { ...open, $id: 'SessionSnapshot' },
);

export const SessionDeleteResult = Type.Object({ id: Uuid, deleted: Type.Boolean() }, { ...open, $id: 'SessionDeleteResult' });

/** The caller's subject's sessions, most recently used first. */
export const SessionListRequest = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }, { ...strict, $id: 'SessionListRequest' });

export const SessionList = Type.Object({ sessions: Type.Array(Type.Ref(SessionInfo), { maxItems: 100 }) }, { ...open, $id: 'SessionList' });

export const JobSubmit = Type.Object({ key: OpaqueKey, request: Type.Ref(RunRequest) }, { ...strict, $id: 'JobSubmit' });

export const JobIdentity = Type.Object({ id: Uuid }, { ...strict, $id: 'JobIdentity' });

export const JobEventsRequest = Type.Object(
  {
    id: Uuid,
    /** The last sequence the caller has; the page starts after it. */
    after: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { ...strict, $id: 'JobEventsRequest' },
);

export const JobState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('interrupted'),
]);

export const JobInfo = Type.Object(
  {
    id: Uuid,
    runId: Uuid,
    provider: ProviderId,
    model: ModelId,
    state: JobState,
    /** How many events are committed (the last sequence). */
    cursor: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    cancelRequested: Type.Boolean(),
    createdAt: HostTimestamp,
    updatedAt: HostTimestamp,
    /** Present exactly when the job is finished: when its events are erased. */
    expiresAt: Type.Optional(HostTimestamp),
  },
  { ...open, $id: 'JobInfo' },
);

/** The caller's subject's jobs (optionally in one state), most recently updated first. */
export const JobListRequest = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })), state: Type.Optional(JobState) },
  { ...strict, $id: 'JobListRequest' },
);

export const JobList = Type.Object({ jobs: Type.Array(Type.Ref(JobInfo), { maxItems: 100 }) }, { ...open, $id: 'JobList' });

export const JobEventPage = Type.Object(
  {
    job: Type.Ref(JobInfo),
    events: Type.Array(Type.Ref(RunEvent), { maxItems: 100 }),
    nextCursor: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    hasMore: Type.Boolean(),
  },
  { ...open, $id: 'JobEventPage' },
);

// ---------------------------------------------------------------------------
// Operator endpoints (`/v1/operator/...`, tokens with the `operator` grant): the console's view of the host

export const OperatorRunState = Type.Union([
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('interrupted'),
]);

/** One run as an operator sees it: who, where, how far, and (once finished) how it ended. */
export const OperatorRun = Type.Object(
  {
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    subject: Type.String({ minLength: 1 }),
    provider: Type.String({ minLength: 1 }),
    model: Type.String({ minLength: 1 }),
    state: OperatorRunState,
    startedAt: Timestamp,
    finishedAt: Type.Optional(Timestamp),
    /** Steps started so far. */
    steps: Count,
    /** Tokens reported so far (a lower bound while the run is active). */
    usage: Type.Ref(Usage),
    /** The error code of a run that did not complete. */
    errorCode: Type.Optional(Type.String({ minLength: 1 })),
    /** The durable job that runs it, if any. */
    jobId: Type.Optional(Uuid),
  },
  { ...open, $id: 'OperatorRun' },
);

export const OperatorRunsRequest = Type.Object(
  { /** How many of the most recently finished runs to list (default 20). */ finished: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })) },
  { ...strict, $id: 'OperatorRunsRequest' },
);

export const OperatorRunList = Type.Object(
  {
    /** Runs this host replica is serving now. */
    active: Type.Array(Type.Ref(OperatorRun), { maxItems: 100_000 }),
    /** The most recently finished runs (any replica), newest first. */
    finished: Type.Array(Type.Ref(OperatorRun), { maxItems: 100 }),
  },
  { ...open, $id: 'OperatorRunList' },
);

export const OperatorListRequest = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) },
  { ...strict, $id: 'OperatorListRequest' },
);

export const OperatorApproval = Type.Object(
  { approval: Type.Ref(ApprovalRequest), subject: Type.String({ minLength: 1 }), provider: Type.String({ minLength: 1 }) },
  { ...open, $id: 'OperatorApproval' },
);

export const OperatorApprovalList = Type.Object(
  { approvals: Type.Array(Type.Ref(OperatorApproval), { maxItems: 100 }) },
  { ...open, $id: 'OperatorApprovalList' },
);

export const OperatorJobsRequest = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })), state: Type.Optional(JobState) },
  { ...strict, $id: 'OperatorJobsRequest' },
);

export const OperatorJob = Type.Object({ job: Type.Ref(JobInfo), subject: Type.String({ minLength: 1 }) }, { ...open, $id: 'OperatorJob' });

export const OperatorJobList = Type.Object({ jobs: Type.Array(Type.Ref(OperatorJob), { maxItems: 100 }) }, { ...open, $id: 'OperatorJobList' });

export const OperatorUsageRequest = Type.Object(
  {
    by: Type.Optional(Type.Union([Type.Literal('subject'), Type.Literal('provider'), Type.Literal('model'), Type.Literal('day')])),
    /** Only runs that finished at or after this time. */
    since: Type.Optional(HostTimestamp),
  },
  { ...strict, $id: 'OperatorUsageRequest' },
);

/** Sums over stored usage records (the same totals `agenticdriver usage` prints). */
export const UsageTotals = Type.Object(
  {
    /** The group: a subject, provider, `provider/model` or UTC day; absent when not grouped. */
    key: Type.Optional(Type.String()),
    runs: Count,
    completed: Count,
    failed: Count,
    cancelled: Count,
    interrupted: Count,
    incompleteRuns: Count,
    inputTokens: Count,
    outputTokens: Count,
    cachedInputTokens: Count,
    reasoningTokens: Count,
    durationMs: Type.Number({ minimum: 0 }),
    costUsd: Type.Number({ minimum: 0 }),
    apiEquivalentCostUsd: Type.Number({ minimum: 0 }),
  },
  { ...open, $id: 'UsageTotals' },
);

export const OperatorUsage = Type.Object({ totals: Type.Array(Type.Ref(UsageTotals), { maxItems: 100_000 }) }, { ...open, $id: 'OperatorUsage' });

export const OperatorAuditRequest = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    /** Only records older than this id (the previous page's `nextBefore`). */
    before: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { ...strict, $id: 'OperatorAuditRequest' },
);

export const AuditEntry = Type.Object(
  {
    id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    kind: Type.Union([Type.Literal('approval.requested'), Type.Literal('approval.resolved'), Type.Literal('approval.rejected')]),
    at: Timestamp,
    /** The subject of the run (requested, resolved) or of the token that sent the refused decision. */
    subject: Type.String({ minLength: 1 }),
    tokenId: Type.Optional(Type.String({ minLength: 1 })),
    /** Set when an operator token decided: that token's subject. */
    operator: Type.Optional(Type.String({ minLength: 1 })),
    approvalId: Type.Optional(Type.String({ minLength: 1 })),
    runId: Type.Optional(Type.String({ minLength: 1 })),
    provider: Type.Optional(Type.String({ minLength: 1 })),
    tool: Type.Optional(Type.String({ minLength: 1 })),
    outcome: Type.Optional(Type.String({ minLength: 1 })),
    code: Type.Optional(Type.String({ minLength: 1 })),
  },
  { ...open, $id: 'AuditEntry' },
);

export const OperatorAuditPage = Type.Object(
  {
    records: Type.Array(Type.Ref(AuditEntry), { maxItems: 500 }),
    /** Pass as `before` for the next (older) page; absent on the last page. */
    nextBefore: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { ...open, $id: 'OperatorAuditPage' },
);

/** Every named schema, in the order the published documents list them. */
export const NAMED_SCHEMAS: TSchema[] = [
  ErrorInfo,
  ErrorEnvelope,
  Usage,
  ToolCall,
  ContextSource,
  ContextInput,
  ContextManifest,
  DraftArtifact,
  IngestionManifest,
  RetrievalResult,
  RetrievalSearch,
  RetrievalIndexRequest,
  RetrievalIndexReceipt,
  RetrievalDeleteRequest,
  RetrievalDeleteResult,
  IngestDocument,
  IngestRequest,
  IngestResult,
  HistoryMessage,
  SessionInfo,
  ApplicationToolDefinition,
  ApprovalRequest,
  ApprovalResolution,
  ToolExecution,
  ApprovalDecision,
  ToolExecutionIdentity,
  ToolExecutionResult,
  ToolExecutionReceipt,
  RunRequest,
  RunResult,
  EventEnvelope,
  ...Object.values(EVENT_SCHEMAS),
  RunEvent,
  ProtocolInfo,
  ProviderHealth,
  ModelCatalog,
  Capabilities,
  Provider,
  ProviderList,
  Health,
  SessionCreate,
  SessionIdentity,
  SessionSnapshot,
  SessionDeleteResult,
  SessionListRequest,
  SessionList,
  JobSubmit,
  JobIdentity,
  JobEventsRequest,
  JobInfo,
  JobEventPage,
  JobListRequest,
  JobList,
  OperatorRun,
  OperatorRunsRequest,
  OperatorRunList,
  OperatorListRequest,
  OperatorApproval,
  OperatorApprovalList,
  OperatorJobsRequest,
  OperatorJob,
  OperatorJobList,
  OperatorUsageRequest,
  UsageTotals,
  OperatorUsage,
  OperatorAuditRequest,
  AuditEntry,
  OperatorAuditPage,
];

// ---------------------------------------------------------------------------
// Types

export type ErrorInfo = Static<typeof ErrorInfo>;
export type Usage = Static<typeof Usage>;
export type ToolCall = Static<typeof ToolCall>;
export type RunRequest = Static<typeof RunRequest>;
export type RunResult = Static<typeof RunResult>;
export type FinishReason = Static<typeof FinishReason>;
export type RunProgressPhase = Static<typeof RunProgressPhase>;
export type ProtocolInfo = Static<typeof ProtocolInfo>;
export type Provider = Static<typeof Provider>;
export type ProviderList = Static<typeof ProviderList>;
export type ProviderHealth = Static<typeof ProviderHealth>;
export type ModelCatalog = Static<typeof ModelCatalog>;
export type Capabilities = Static<typeof Capabilities> & Record<string, boolean>;
export type MediaType = Static<typeof MediaType>;
export type ApprovalRequest = Static<typeof ApprovalRequest>;
export type ApprovalResolution = Static<typeof ApprovalResolution>;
export type ToolExecution = Static<typeof ToolExecution>;
export type ApplicationToolDefinition = Static<typeof ApplicationToolDefinition>;
export type HistoryMessage = Static<typeof HistoryMessage>;
export type ApprovalDecision = Static<typeof ApprovalDecision>;
export type ToolExecutionIdentity = Static<typeof ToolExecutionIdentity>;
export type ToolExecutionResult = Static<typeof ToolExecutionResult>;
export type ToolExecutionReceipt = Static<typeof ToolExecutionReceipt>;
export type SessionInfo = Static<typeof SessionInfo>;
export type SessionCreate = Static<typeof SessionCreate>;
export type SessionIdentity = Static<typeof SessionIdentity>;
export type SessionSnapshot = Static<typeof SessionSnapshot>;
export type SessionDeleteResult = Static<typeof SessionDeleteResult>;
export type SessionListRequest = Static<typeof SessionListRequest>;
export type SessionList = Static<typeof SessionList>;
export type JobSubmit = Static<typeof JobSubmit>;
export type JobIdentity = Static<typeof JobIdentity>;
export type JobEventsRequest = Static<typeof JobEventsRequest>;
export type JobState = Static<typeof JobState>;
export type JobInfo = Static<typeof JobInfo>;
export type JobEventPage = Static<typeof JobEventPage>;
export type JobListRequest = Static<typeof JobListRequest>;
export type JobList = Static<typeof JobList>;
export type RetrievalOptions = Static<typeof RetrievalOptions>;
export type RetrievalResult = Static<typeof RetrievalResult>;
export type RetrievalSearch = Static<typeof RetrievalSearch>;
export type RetrievalIndexRequest = Static<typeof RetrievalIndexRequest>;
export type RetrievalIndexReceipt = Static<typeof RetrievalIndexReceipt>;
export type RetrievalDeleteRequest = Static<typeof RetrievalDeleteRequest>;
export type RetrievalDeleteResult = Static<typeof RetrievalDeleteResult>;
export type IngestDocument = Static<typeof IngestDocument>;
export type IngestRequest = Static<typeof IngestRequest>;
export type IngestResult = Static<typeof IngestResult>;
export type IngestionManifest = Static<typeof IngestionManifest>;
export type ContextSource = Static<typeof ContextSource>;
export type OperatorRun = Static<typeof OperatorRun>;
export type OperatorRunsRequest = Static<typeof OperatorRunsRequest>;
export type OperatorRunList = Static<typeof OperatorRunList>;
export type OperatorListRequest = Static<typeof OperatorListRequest>;
export type OperatorApproval = Static<typeof OperatorApproval>;
export type OperatorApprovalList = Static<typeof OperatorApprovalList>;
export type OperatorJobsRequest = Static<typeof OperatorJobsRequest>;
export type OperatorJob = Static<typeof OperatorJob>;
export type OperatorJobList = Static<typeof OperatorJobList>;
export type OperatorUsageRequest = Static<typeof OperatorUsageRequest>;
export type UsageTotals = Static<typeof UsageTotals>;
export type OperatorUsage = Static<typeof OperatorUsage>;
export type OperatorAuditRequest = Static<typeof OperatorAuditRequest>;
export type AuditEntry = Static<typeof AuditEntry>;
export type OperatorAuditPage = Static<typeof OperatorAuditPage>;

type EnvelopeFields = { runId: string; sequence: number; timestamp: string; optional?: boolean };
type PayloadOf<T extends EventType> = Omit<Static<(typeof EVENT_SCHEMAS)[T]>, 'type' | keyof EnvelopeFields>;
export type RunEventOf<T extends EventType> = { type: T } & EnvelopeFields & PayloadOf<T>;
export type RunEvent = { [T in EventType]: RunEventOf<T> }[EventType];
/** An event before the envelope (runId, sequence, timestamp) is stamped on it. */
export type EventPayload = { [T in EventType]: { type: T } & PayloadOf<T> }[EventType];
