/**
 * Embedding adapters: what the retrieval service calls to turn texts into unit vectors. One
 * strict config entry per embedder (OpenAI-compatible `/v1/embeddings`, OpenAI, Gemini), one
 * identity that freezes a corpus's index, and one normalisation every vector goes through.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DriverError } from '../../protocol/errors.js';
import { SecretRef } from '../../shared/secret-ref.js';

export interface EmbeddingIdentity {
  providerId: string;
  vendor: string;
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

export const EmbeddingConfig = Type.Object(
  {
    kind: Type.Union([Type.Literal('openai-compatible'), Type.Literal('openai'), Type.Literal('gemini')]),
    id: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' })),
    model: Type.String({ minLength: 1, maxLength: 200 }),
    dimensions: Type.Integer({ minimum: 1, maximum: 4096 }),
    baseUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    apiKeyRef: Type.Optional(SecretRef),
    /** Ask the vendor for `dimensions` (OpenAI `dimensions`, Gemini `outputDimensionality`). */
    sendDimensions: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, $id: 'EmbeddingConfig' },
);
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
