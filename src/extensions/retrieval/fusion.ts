/** Hybrid ranking: the lexical and the vector rankings of the same chunks become one. */
import type { ChunkMatch } from '../../store/store.js';

export interface FusedMatch {
  match: ChunkMatch;
  /** In [0, 1]: the weighted sum of the lexical score and the min-max scaled cosine. */
  score: number;
}

/**
 * Lexical scores are taken as they are (BM25 divided by the query's maximum: the same scale for
 * every query, so a weak lexical match stays weak); cosines are scaled over the vector
 * candidates from 0 (the lowest) to 1 (the highest), since embedding models spread their cosines
 * differently; a chunk absent from a ranking scores 0 there. Best first, ties by chunk id.
 * Unlike reciprocal rank fusion, a chunk the lexical ranking found only weakly does not outrank
 * the vector ranking's best: on paraphrased questions that keeps hit@1 at the vector ranking's.
 */
export function hybridFusion(lexical: ChunkMatch[], semantic: ChunkMatch[], lexicalWeight = 0.5): FusedMatch[] {
  const fused = new Map<string, FusedMatch>();
  for (const match of lexical) fused.set(match.chunk.chunkId, { match, score: lexicalWeight * Math.max(0, match.score) });
  const cosines = semantic.map((match) => match.score);
  const high = Math.max(...cosines);
  const low = Math.min(...cosines);
  for (const match of semantic) {
    const scaled = high > low ? (match.score - low) / (high - low) : 1;
    const entry = fused.get(match.chunk.chunkId) ?? { match, score: 0 };
    entry.score += (1 - lexicalWeight) * scaled;
    fused.set(match.chunk.chunkId, entry);
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.match.chunk.chunkId < b.match.chunk.chunkId ? -1 : 1));
}
