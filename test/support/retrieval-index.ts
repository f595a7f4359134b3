/**
 * Stores for the retrieval tests: the engine's own index when the store has one, otherwise a
 * small in-memory stand-in with the same contract (used only until the SQL index exists).
 */
import { DriverError } from '../../src/protocol/errors.js';
import type { ChunkMatch, CorpusIndex, IndexedChunk, IndexedDocument, RetrievalIndexStore, RetrievalScope, StateStore } from '../../src/store/store.js';
import { openTestStore, type Engine } from './stores.js';

export async function openRetrievalStore(engine: Engine): Promise<StateStore> {
  const store = await openTestStore(engine);
  const withIndex = store as StateStore & { retrieval?: RetrievalIndexStore };
  if (!withIndex.retrieval) Object.assign(store, { retrieval: new MemoryRetrievalIndex() });
  return store;
}

class MemoryRetrievalIndex implements RetrievalIndexStore {
  private readonly descriptors = new Map<string, string>();
  private readonly docs = new Map<string, { document: IndexedDocument; chunks: IndexedChunk[] }>();

  async ensureIndex(index: CorpusIndex): Promise<void> {
    const known = this.descriptors.get(index.corpus);
    if (known === undefined) this.descriptors.set(index.corpus, index.descriptor);
    else if (known !== index.descriptor) throw new DriverError('INDEX_INCOMPATIBLE', 'The corpus was indexed with another descriptor.');
  }

  async documents(corpus: string, namespace: string, sourceIds?: string[]): Promise<IndexedDocument[]> {
    return [...this.docs.entries()]
      .filter(([key]) => key.startsWith(`${corpus}\0${namespace}\0`))
      .map(([, entry]) => structuredClone(entry.document))
      .filter((document) => !sourceIds || sourceIds.includes(document.sourceId));
  }

  async replace(corpus: string, namespace: string, document: IndexedDocument, chunks: IndexedChunk[], expectedDigest: string | null): Promise<void> {
    const key = `${corpus}\0${namespace}\0${document.sourceId}`;
    if ((this.docs.get(key)?.document.digest ?? null) !== expectedDigest) throw new DriverError('SOURCE_CONFLICT', 'The source changed meanwhile.');
    this.docs.set(key, { document: structuredClone(document), chunks: structuredClone(chunks) });
  }

  async delete(corpus: string, namespace: string, sourceId: string, revision: string): Promise<boolean> {
    const key = `${corpus}\0${namespace}\0${sourceId}`;
    const entry = this.docs.get(key);
    if (!entry) return false;
    if (entry.document.revision !== revision) throw new DriverError('SOURCE_CONFLICT', 'The source is stored at another revision.');
    return this.docs.delete(key);
  }

  async searchLexical(scope: RetrievalScope, query: string, limit: number): Promise<ChunkMatch[]> {
    const terms: string[] = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    return this.rank(scope, limit, (chunk) => {
      const words: string[] = chunk.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      const hits = terms.filter((term) => words.includes(term)).length;
      return hits === 0 ? undefined : hits / (hits + 1);
    });
  }

  async searchVector(scope: RetrievalScope, vector: Float32Array, limit: number): Promise<ChunkMatch[]> {
    return this.rank(scope, limit, (chunk) => (chunk.vector ? chunk.vector.reduce((sum, value, index) => sum + value * vector[index]!, 0) : undefined));
  }

  private rank(scope: RetrievalScope, limit: number, score: (chunk: IndexedChunk) => number | undefined): ChunkMatch[] {
    const matches: Omit<ChunkMatch, 'rank'>[] = [];
    for (const [key, entry] of this.docs) {
      if (!key.startsWith(`${scope.corpus}\0${scope.namespace}\0`) || scope.sources[entry.document.sourceId] !== entry.document.revision) continue;
      for (const chunk of entry.chunks) {
        const value = score(chunk);
        if (value !== undefined) matches.push({ chunk: structuredClone(chunk), document: structuredClone(entry.document), score: value });
      }
    }
    matches.sort((a, b) => b.score - a.score || (a.chunk.chunkId < b.chunk.chunkId ? -1 : 1));
    return matches.slice(0, limit).map((match, index) => ({ ...match, rank: index + 1 }));
  }
}
