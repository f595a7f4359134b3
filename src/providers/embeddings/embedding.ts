/**
 * Embedding adapters: what the retrieval service calls to turn texts into unit vectors. One
 * strict config entry per embedder (OpenAI-compatible `/v1/embeddings`, OpenAI, Gemini), one
 * identity that freezes a corpus's index, and one normalisation every vector goes through.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DriverError } from '../../protocol/errors.js';
import { EmbeddingModel, OpaqueKey } from '../../protocol/schemas.js';
import { SecretRef } from '../../shared/secret-ref.js';

export interface EmbeddingIdentity {
  providerId: string;
  vendor: string;
  /** A deployment label (retrieval id syntax), not a login; the descriptor says `default` when absent. */
  accountId?: string;
  authMode: 'api-key' | 'none';
  model: string;
  dimensions: number;
}

export interface EmbeddingResult {
  vectors: Float32Array[];
  usage?: { inputTokens: number };
}

export interface EmbeddingAdapter {
  readonly identity: EmbeddingIdentity;
  embed(texts: string[], signal?: AbortSignal): Promise<EmbeddingResult>;
}

const embedderId = Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' }));
/** A label for the vendor account (the index descriptor's `accountId`; default `default`). */
const accountId = Type.Optional(OpaqueKey);
const dimensions = Type.Integer({ minimum: 1, maximum: 4096 });

/** An embedding service over HTTP. */
export const HttpEmbeddingConfig = Type.Object(
  {
    kind: Type.Union([Type.Literal('openai-compatible'), Type.Literal('openai'), Type.Literal('gemini')]),
    id: embedderId,
    accountId,
    model: EmbeddingModel,
    dimensions,
    baseUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    apiKeyRef: Type.Optional(SecretRef),
    /** Ask the vendor for `dimensions` (OpenAI `dimensions`, Gemini `outputDimensionality`). */
    sendDimensions: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** A sentence-embedding model the host runs itself, from a local directory (local-model.ts). */
export const LocalEmbeddingConfig = Type.Object(
  {
    kind: Type.Literal('local'),
    id: embedderId,
    accountId,
    /** The model's name in the index descriptor, e.g. `all-MiniLM-L6-v2`. */
    model: EmbeddingModel,
    dimensions,
    /** The directory with `model.onnx` (or `onnx/model.onnx`) and `tokenizer.json`, relative to the config file. */
    path: Type.String({ minLength: 1, maxLength: 4096 }),
    /** Tokens a text is cut to (default 256, the usual limit of small sentence models). */
    maxTokens: Type.Optional(Type.Integer({ minimum: 8, maximum: 8192 })),
    /** `mean` over the tokens (default, sentence-transformers models) or the first token (`cls`). */
    pooling: Type.Optional(Type.Union([Type.Literal('mean'), Type.Literal('cls')])),
    /** CPU threads for the model (default: all cores but one). */
    threads: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  },
  { additionalProperties: false },
);

export const EmbeddingConfig = Type.Union([HttpEmbeddingConfig, LocalEmbeddingConfig], { $id: 'EmbeddingConfig' });
export type EmbeddingConfig = Static<typeof EmbeddingConfig>;

/** How an adapter reads its key: the same secret resolution as the provider kinds. */
export interface EmbeddingEnvironment {
  readSecret(ref: SecretRef): Promise<string>;
}

/**
 * Checks a vendor vector (length, finite, not all zero → INVALID_EMBEDDING), scales by its
 * largest magnitude (no overflow in the squares) and L2-normalises it.
 */
export function normalizeVector(values: ArrayLike<number>, dimensions: number): Float32Array {
  if (values.length !== dimensions) throw new DriverError('INVALID_EMBEDDING', `The embedding has ${values.length} dimensions, not ${dimensions}.`);
  let max = 0;
  for (let index = 0; index < dimensions; index += 1) {
    const value = values[index];
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new DriverError('INVALID_EMBEDDING', 'The embedding holds a value that is not a finite number.');
    max = Math.max(max, Math.abs(value));
  }
  if (max === 0) throw new DriverError('INVALID_EMBEDDING', 'The embedding is all zeros.');
  let sum = 0;
  for (let index = 0; index < dimensions; index += 1) sum += (values[index]! / max) ** 2;
  const norm = Math.sqrt(sum);
  const vector = new Float32Array(dimensions);
  for (let index = 0; index < dimensions; index += 1) vector[index] = values[index]! / max / norm;
  return vector;
}
