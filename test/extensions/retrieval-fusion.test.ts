/**
 * Hybrid fusion: lexical scores keep their absolute scale, cosines are scaled over the vector
 * candidates, a missing ranking counts 0, ties go by chunk id.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hybridFusion } from '../../src/extensions/retrieval/fusion.js';
import type { ChunkMatch } from '../../src/store/store.js';

const match = (chunkId: string, score: number, rank: number) => ({ chunk: { chunkId }, document: {}, rank, score }) as unknown as ChunkMatch;
const ranked = (fused: ReturnType<typeof hybridFusion>) => fused.map((entry) => [entry.match.chunk.chunkId, Number(entry.score.toFixed(3))]);

describe('hybridFusion', () => {
  it('lets a weak lexical match not outrank the best by meaning, and a strong one in both win', () => {
    const lexical = [match('incidental', 0.12, 1), match('both', 0.5, 2)].sort((a, b) => b.score - a.score);
    const semantic = [match('meaning', 0.62, 1), match('both', 0.52, 2), match('far', 0.12, 3)];
    assert.deepEqual(ranked(hybridFusion(lexical, semantic)), [
      ['both', 0.65],
      ['meaning', 0.5],
      ['incidental', 0.06],
      ['far', 0],
    ]);
  });

  it('scales equal or single cosines to 1, counts a negative lexical score as 0, and breaks ties by chunk id', () => {
    assert.deepEqual(ranked(hybridFusion([], [match('b', 0.3, 1), match('a', 0.3, 2)])), [
      ['a', 0.5],
      ['b', 0.5],
    ]);
    assert.deepEqual(ranked(hybridFusion([match('x', -0.2, 1)], [])), [['x', 0]]);
    assert.deepEqual(ranked(hybridFusion([match('x', 0.8, 1)], [match('x', 0.9, 1)], 0.25)), [['x', 0.95]]);
  });
});
