/**
 * Embedders that need no model and no network: lower-cased Unicode letter/digit tokens, each
 * hashed (sha256 → uint32 mod dimensions) into one count. Texts that share words point the same
 * way; a text without words gets a fixed direction. `builtinEmbedder` is the one every corpus
 * without a configured embedder uses, so that each corpus is a vector index with an honest
 * descriptor; `hashEmbedder` is the same algorithm under a fixture identity for tests and benches.
 */
import { createHash } from 'node:crypto';
import { normalizeVector, type EmbeddingAdapter, type EmbeddingIdentity } from './embedding.js';

/** The built-in embedder's identity: part of every default corpus's frozen descriptor. */
export const BUILTIN_EMBEDDING: EmbeddingIdentity = { providerId: 'builtin', vendor: 'agenticdriver', accountId: 'local', authMode: 'none', model: 'word-hash-v1', dimensions: 256 };

export function builtinEmbedder(): EmbeddingAdapter {
  return hashing(BUILTIN_EMBEDDING);
}

export function hashEmbedder(dimensions: number): EmbeddingAdapter {
  return hashing({ providerId: 'fixture-embedding', vendor: 'fixture', authMode: 'none', model: 'lexical-hash-v1', dimensions });
}

function hashing(identity: EmbeddingIdentity): EmbeddingAdapter {
  const { dimensions } = identity;
  const slots = new Map<string, number>();
  const slot = (token: string): number => {
    let found = slots.get(token);
    if (found === undefined) {
      found = createHash('sha256').update(token).digest().readUInt32BE(0) % dimensions;
      if (slots.size < 100_000) slots.set(token, found);
    }
    return found;
  };
  return {
    identity,
    async embed(texts: string[], signal?: AbortSignal) {
      signal?.throwIfAborted();
      const vectors = texts.map((text) => {
        const counts = new Float64Array(dimensions);
        let any = false;
        for (const match of text.normalize('NFC').toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
          counts[slot(match[0])]! += 1;
          any = true;
        }
        if (!any) counts[0] = 1;
        return normalizeVector(counts, dimensions);
      });
      return { vectors };
    },
  };
}
