/** Reciprocal rank fusion: several rankings of the same chunks become one. */
import type { ChunkMatch } from '../../store/store.js';

export interface FusedMatch {
  match: ChunkMatch;
  /** Σ 1 / (k + rank) over the rankings the chunk appears in. */
  score: number;
}

/** Best first (fused score desc, then chunkId asc); `k` damps the weight of the top ranks. */
export function reciprocalRankFusion(rankings: ChunkMatch[][], k = 60): FusedMatch[] {
  const fused = new Map<string, FusedMatch>();
  for (const ranking of rankings) {
    for (const match of ranking) {
      const entry = fused.get(match.chunk.chunkId) ?? { match, score: 0 };
      entry.score += 1 / (k + match.rank);
      fused.set(match.chunk.chunkId, entry);
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.match.chunk.chunkId < b.match.chunk.chunkId ? -1 : 1));
}
