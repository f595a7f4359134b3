/** Identifiers and scalars, errors, usage and tool calls: what every other shape builds on. */
import { Type, type Static } from '@sinclair/typebox';
import { Count, JsonObject, open } from './shape.js';

export const ProviderId = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,79}$' });
export const ModelId = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._:/\\[\\]-]{0,199}$' });
export const ToolName = Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]{0,63}$' });
export const CapabilityName = Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9._-]{0,79}$' });
export const OpaqueKey = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$' });
export const Uuid = Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' });
/** Any RFC 3339 date-time (offsets allowed), checked for impossible dates. */
export const Timestamp = Type.String({ format: 'date-time' });
/** Host-stamped timestamps: UTC with exactly three fraction digits (docs/architecture.md, decisions: Timestamps). */
export const HostTimestamp = Type.String({ format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' });
export const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });
/** An embedding model's name as an index descriptor carries it (e.g. `BAAI/bge-small-en-v1.5`, `nomic-embed-text:v1.5`). */
export const EmbeddingModel = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._:/-]{0,199}$' });
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

export type MediaType = Static<typeof MediaType>;
export type ErrorInfo = Static<typeof ErrorInfo>;
export type Usage = Static<typeof Usage>;
export type ToolCall = Static<typeof ToolCall>;
