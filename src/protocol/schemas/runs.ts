/** The run request and its result. */
import { Type, type Static } from '@sinclair/typebox';
import { CapabilityName, ModelId, OpaqueKey, ProviderId, ToolName, Usage } from './common.js';
import { ContextInput, ContextManifest, DraftArtifact, OutputArtifactRequest } from './context.js';
import { ApplicationToolDefinition, ApprovalOptions, HistoryMessage, SessionBinding, SessionInfo } from './interactive.js';
import { RetrievalOptions, RetrievalResult } from './retrieval.js';
import { JsonObject, open, strict } from './shape.js';

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

export type RunRequest = Static<typeof RunRequest>;
export type FinishReason = Static<typeof FinishReason>;
export type RunResult = Static<typeof RunResult>;
