/**
 * A deterministic embedder for tests and benchmarks (no network, no model): lower-cased
 * Unicode letter/digit tokens, each hashed (sha256 → uint32 mod dimensions) into one count.
 * Texts that share words point the same way; a text without words gets a fixed direction.
 */
import { createHash } from 'node:crypto';
import { normalizeVector, type EmbeddingAdapter } from './embedding.js';

export function hashEmbedder(dimensions: number): EmbeddingAdapter {
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
    identity: { providerId: 'fixture-embedding', vendor: 'fixture', authMode: 'none', model: 'lexical-hash-v1', dimensions },
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
