/**
 * The retrieval index in the SQL store, ranked by the databases' own full-text search: SQLite
 * FTS5 (bm25) and PostgreSQL tsvector (ts_rank_cd), plus an exact cosine scan over the stored
 * vectors. Scope (namespace and exact source revisions) is applied in SQL before ranking and
 * limit. A search reads in one transaction (PostgreSQL: a repeatable-read snapshot), so a
 * concurrent replace is seen whole or not at all.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ContextSource, IngestionManifest } from '../../protocol/schemas.js';
import type { ChunkMatch, CorpusIndex, IndexedChunk, IndexedDocument, RetrievalIndexStore, RetrievalScope } from '../store.js';
import type { SqlEngine } from './engine.js';

export interface CapacityBound {
  maxChunks: number;
  /** Stored bytes: chunk text + vectors. */
  maxBytes: number;
}

/** `maxChunks` (default 20,000) and `maxBytes` (default 128 MiB) hold across all corpora and namespaces. */
export interface RetrievalCapacity extends CapacityBound {
  /** What the sources one subject indexed may hold, across corpora (RESOURCE_LIMIT past it). */
  perSubject?: CapacityBound;
  /** What one corpus may hold, by corpus id (INDEX_FULL past it). */
  perCorpus?: Record<string, CapacityBound>;
}

export const DEFAULT_RETRIEVAL_CAPACITY: RetrievalCapacity = { maxChunks: 20_000, maxBytes: 128 * 1024 * 1024 };
export const MAX_CORPORA = 1000;
/** Distinct query terms sent to the engine; the rest of a long query adds little to BM25. */
const MAX_QUERY_TERMS = 64;
/** Chunks whose vectors one page of the cosine scan reads. */
const VECTOR_PAGE = 512;
/** Serialises index writes across PostgreSQL replicas (capacity and chunk ownership are global). */
const WRITE_LOCK = 7434;
/** SQLite lexical search drops query terms found in more than this share of the chunks… */
const PRUNE_SHARE = 0.5;
/** …once the index holds this many chunks (below it, every term is cheap enough). */
const PRUNE_MIN_CHUNKS = 2000;
/** Memory for the in-process copies of namespaces' vectors (20,000 × 256 dims ≈ 22 MB). */
export const VECTOR_CACHE_BYTES = 64 * 1024 * 1024;
/** Estimated bytes a cached chunk costs besides its vector (ids as strings and numbers). */
const CACHED_ROW_OVERHEAD = 96;

interface CachedVectors {
  generation: string;
  dimensions: number;
  bytes: number;
  ids: number[];
  sourceIds: string[];
  chunkIds: string[];
  /** Row i's vector is vectors[i * dimensions, (i + 1) * dimensions). */
  vectors: Float32Array;
}

interface DocumentColumns {
  source_id: string;
  revision: string;
  digest: string;
  source: string;
  ingestion: string | null;
  chunks: number;
  bytes: number;
}

interface ChunkColumns {
  source_id: string;
  chunk_id: string;
  ordinal: number;
  text: string;
  location: string;
}

/** Letters, marks and digits in runs: the only thing a user query contributes to engine syntax. */
export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const match of query.normalize('NFC').toLowerCase().matchAll(/[\p{L}\p{M}\p{N}]+/gu)) {
    terms.add(match[0]);
    if (terms.size === MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/** A non-negative engine relevance mapped monotonically into (0, 1]. */
function unitScore(relevance: number): number {
  const value = Math.max(0, Number(relevance));
  return Math.max(value / (1 + value), Number.MIN_VALUE);
}

export class RetrievalTable implements RetrievalIndexStore {
  constructor(
    private readonly engine: SqlEngine,
    private readonly capacity: RetrievalCapacity = DEFAULT_RETRIEVAL_CAPACITY,
    private readonly vectorCacheBytes: number = VECTOR_CACHE_BYTES,
  ) {}

  /** (corpus, namespace) → vectors, least recently used first. */
  private readonly vectorCache = new Map<string, CachedVectors>();
  private cachedBytes = 0;

  async ensureIndex(index: CorpusIndex): Promise<void> {
    await this.engine.transaction(async (tx) => {
      await this.lockWrites(tx);
      const [existing] = await tx.all<{ descriptor: string }>('SELECT descriptor FROM retrieval_corpora WHERE corpus = ?', [index.corpus]);
      if (existing) {
        if (existing.descriptor !== index.descriptor) throw new DriverError('INDEX_INCOMPATIBLE', `The corpus ${index.corpus} was indexed with another engine, embedder or version.`);
        return;
      }
      const [{ count } = { count: 0 }] = await tx.all<{ count: number }>('SELECT COUNT(*) AS count FROM retrieval_corpora');
      if (Number(count) >= MAX_CORPORA) throw new DriverError('INDEX_FULL', `The index holds ${MAX_CORPORA} corpora, the most it may.`);
      await tx.run('INSERT INTO retrieval_corpora (corpus, descriptor) VALUES (?, ?)', [index.corpus, index.descriptor]);
    });
  }

  async documents(corpus: string, namespace: string, sourceIds?: string[]): Promise<IndexedDocument[]> {
    const columns = 'source_id, revision, digest, source, ingestion, chunks, bytes';
    const rows =
      sourceIds === undefined
        ? await this.engine.all<DocumentColumns>(`SELECT ${columns} FROM retrieval_documents WHERE corpus = ? AND namespace = ? ORDER BY source_id`, [corpus, namespace])
        : await this.engine.all<DocumentColumns>(
            `SELECT ${columns} FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id IN (${this.jsonArray()}) ORDER BY source_id`,
            [corpus, namespace, JSON.stringify(sourceIds)],
          );
    return rows.map(toDocument);
  }

  async replace(corpus: string, namespace: string, document: IndexedDocument, chunks: IndexedChunk[], expectedDigest: string | null, subject?: string): Promise<void> {
    const storedBytes = chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.text, 'utf8') + (chunk.vector?.byteLength ?? 0), 0);
    await this.engine.transaction(async (tx) => {
      await this.lockWrites(tx);
      const [current] = await tx.all<{ digest: string }>('SELECT digest FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, document.sourceId]);
      if ((current?.digest ?? null) !== expectedDigest) {
        throw new DriverError('SOURCE_CONFLICT', `The source ${document.sourceId} changed while it was being indexed.`);
      }
      const ids = JSON.stringify(chunks.map((chunk) => chunk.chunkId));
      const [taken] = await tx.all<{ chunk_id: string; source_id: string }>(
        `SELECT chunk_id, source_id FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND source_id <> ? AND chunk_id IN (${this.jsonArray()}) LIMIT 1`,
        [corpus, namespace, document.sourceId, ids],
      );
      if (taken) throw new DriverError('CHUNK_CONFLICT', `The chunk id ${taken.chunk_id} belongs to the source ${taken.source_id}.`);
      await this.checkCapacity(tx, { corpus, namespace, sourceId: document.sourceId, subject }, { chunks: chunks.length, bytes: storedBytes });
      await tx.run('DELETE FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, document.sourceId]);
      await tx.run('DELETE FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, document.sourceId]);
      await tx.run(
        `INSERT INTO retrieval_documents (corpus, namespace, source_id, revision, digest, source, ingestion, chunks, bytes, stored_bytes, subject)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          corpus,
          namespace,
          document.sourceId,
          document.revision,
          document.digest,
          JSON.stringify(document.source),
          document.ingestion === undefined ? null : JSON.stringify(document.ingestion),
          chunks.length,
          chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.text, 'utf8'), 0),
          storedBytes,
          subject ?? null,
        ],
      );
      await this.bumpGeneration(tx, corpus);
      for (const chunk of chunks) {
        await tx.run(
          'INSERT INTO retrieval_chunks (corpus, namespace, source_id, chunk_id, ordinal, text, location, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          [corpus, namespace, document.sourceId, chunk.chunkId, chunk.ordinal, chunk.text, JSON.stringify(chunk.location), chunk.vector ? vectorBytes(chunk.vector) : null],
        );
      }
    });
  }

  /**
   * The document replacing (corpus, namespace, sourceId) fits: first the share of the subject
   * that indexes it (RESOURCE_LIMIT: the subject deletes some of its own sources), then the
   * corpus's share and the whole index (INDEX_FULL). What the replaced document held is free.
   */
  private async checkCapacity(
    tx: SqlEngine,
    where: { corpus: string; namespace: string; sourceId: string; subject: string | undefined },
    adding: { chunks: number; bytes: number },
  ): Promise<void> {
    const { corpus, namespace, sourceId, subject } = where;
    const others = 'NOT (corpus = ? AND namespace = ? AND source_id = ?)';
    const used = async (filter: string, params: string[]) => {
      const [row] = await tx.all<{ chunks: number | null; bytes: number | null }>(
        `SELECT SUM(chunks) AS chunks, SUM(stored_bytes) AS bytes FROM retrieval_documents WHERE ${filter}${filter ? ' AND ' : ''}${others}`,
        [...params, corpus, namespace, sourceId],
      );
      return { chunks: Number(row?.chunks ?? 0), bytes: Number(row?.bytes ?? 0) };
    };
    const over = (bound: CapacityBound, now: { chunks: number; bytes: number }) => now.chunks + adding.chunks > bound.maxChunks || now.bytes + adding.bytes > bound.maxBytes;
    const share = this.capacity.perSubject;
    if (share && subject !== undefined) {
      const mine = await used('subject = ?', [subject]);
      if (over(share, mine)) {
        throw new DriverError(
          'RESOURCE_LIMIT',
          `This subject's share of the retrieval index is full (${mine.chunks} of ${share.maxChunks} chunks, ${mine.bytes} of ${share.maxBytes} bytes in use); delete some of its sources.`,
          { retryable: false },
        );
      }
    }
    const corpusShare = this.capacity.perCorpus?.[corpus];
    if (corpusShare && over(corpusShare, await used('corpus = ?', [corpus]))) {
      throw new DriverError('INDEX_FULL', `The corpus ${corpus} holds its whole share of the retrieval index; delete sources or raise its capacity.`, { retryable: false });
    }
    if (over(this.capacity, await used('', []))) {
      throw new DriverError('INDEX_FULL', 'The retrieval index is full; delete sources or raise its capacity.', { retryable: false });
    }
  }

  async delete(corpus: string, namespace: string, sourceId: string, revision: string): Promise<boolean> {
    return this.engine.transaction(async (tx) => {
      await this.lockWrites(tx);
      const [current] = await tx.all<{ revision: string }>('SELECT revision FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
      if (!current) return false;
      if (current.revision !== revision) throw new DriverError('SOURCE_CONFLICT', `The source ${sourceId} is indexed at another revision.`);
      await tx.run('DELETE FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
      await tx.run('DELETE FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
      await this.bumpGeneration(tx, corpus);
      return true;
    });
  }

  async searchLexical(scope: RetrievalScope, query: string, limit: number, signal?: AbortSignal): Promise<ChunkMatch[]> {
    signal?.throwIfAborted();
    const terms = queryTerms(query);
    if (terms.length === 0 || limit < 1 || Object.keys(scope.sources).length === 0) return [];
    return this.snapshot(async (tx) => {
      const documents = await this.scopedDocuments(tx, scope);
      if (documents.size === 0) return [];
      const sourceIds = JSON.stringify([...documents.keys()]);
      // Terms are letters and digits only, each quoted: nothing in a query is engine syntax.
      const ranked =
        tx.dialect === 'sqlite'
          ? await tx.all<{ id: number; relevance: number }>(
              `SELECT c.id AS id, -bm25(retrieval_fts) AS relevance FROM retrieval_fts CROSS JOIN retrieval_chunks AS c INDEXED BY retrieval_chunks_rank
               WHERE c.id = retrieval_fts.rowid AND retrieval_fts MATCH ? AND c.corpus = ? AND c.namespace = ? AND +c.source_id IN (SELECT value FROM json_each(?))
               ORDER BY relevance DESC, c.chunk_id LIMIT ?`,
              [(await this.selectiveTerms(tx, terms)).map((term) => `"${term}"`).join(' OR '), scope.corpus, scope.namespace, sourceIds, limit],
            )
          : await tx.all<{ id: number; relevance: number }>(
              `SELECT c.id AS id, ts_rank_cd(c.tsv, q.query) AS relevance FROM retrieval_chunks AS c, to_tsquery('english', ?) AS q(query)
               WHERE c.tsv @@ q.query AND c.corpus = ? AND c.namespace = ? AND c.source_id IN (SELECT jsonb_array_elements_text(?::jsonb))
               ORDER BY relevance DESC, c.chunk_id COLLATE "C" LIMIT ?`,
              [terms.map((term) => `'${term}'`).join(' | '), scope.corpus, scope.namespace, sourceIds, limit],
            );
      const scores = new Map(ranked.map((row) => [Number(row.id), unitScore(row.relevance)]));
      return this.matches(tx, documents, scores);
    }, signal);
  }

  async searchVector(scope: RetrievalScope, vector: Float32Array, limit: number, signal?: AbortSignal): Promise<ChunkMatch[]> {
    signal?.throwIfAborted();
    if (limit < 1 || Object.keys(scope.sources).length === 0) return [];
    return this.snapshot(async (tx) => {
      const documents = await this.scopedDocuments(tx, scope);
      if (documents.size === 0) return [];
      const best: { id: number; chunkId: string; score: number }[] = [];
      const offer = (candidate: { id: number; chunkId: string; score: number }): void => {
        if (best.length === limit && !better(candidate, best[best.length - 1]!)) return;
        best.splice(insertionPoint(best, candidate), 0, candidate);
        if (best.length > limit) best.pop();
      };
      const cached = await this.cachedVectors(tx, scope.corpus, scope.namespace, vector.length);
      if (cached) {
        const { dimensions, vectors } = cached;
        for (let row = 0; row < cached.ids.length; row += 1) {
          if (!documents.has(cached.sourceIds[row]!)) continue;
          let sum = 0;
          for (let index = 0, base = row * dimensions; index < dimensions; index += 1) sum += vector[index]! * vectors[base + index]!;
          offer({ id: cached.ids[row]!, chunkId: cached.chunkIds[row]!, score: Math.max(-1, Math.min(1, sum)) });
        }
        signal?.throwIfAborted();
        return this.matches(tx, documents, new Map(best.map((entry) => [entry.id, entry.score])));
      }
      // Pages of whole sources (a source holds at most a few hundred chunks), in source order.
      let page: string[] = [];
      let pageChunks = 0;
      const scan = async (): Promise<void> => {
        const rows = await tx.all<{ id: number; chunk_id: string; vector: Buffer }>(
          `SELECT id, chunk_id, vector FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND vector IS NOT NULL AND source_id IN (${this.jsonArray(tx)})`,
          [scope.corpus, scope.namespace, JSON.stringify(page)],
        );
        for (const row of rows) offer({ id: Number(row.id), chunkId: row.chunk_id, score: Math.max(-1, Math.min(1, dot(vector, row.vector))) });
        page = [];
        pageChunks = 0;
        await new Promise((resolve) => setImmediate(resolve));
        signal?.throwIfAborted();
      };
      for (const document of documents.values()) {
        page.push(document.sourceId);
        pageChunks += document.chunks;
        if (pageChunks >= VECTOR_PAGE) await scan();
      }
      if (page.length > 0) await scan();
      return this.matches(tx, documents, new Map(best.map((entry) => [entry.id, entry.score])));
    }, signal);
  }

  /** The in-scope documents (namespace, exact revision), by source id in order. */
  private async scopedDocuments(tx: SqlEngine, scope: RetrievalScope): Promise<Map<string, IndexedDocument>> {
    // SQLite: CROSS JOIN keeps the scope's pairs as the outer loop (a primary-key lookup each),
    // never a scan of the pairs per stored document.
    const pairs = tx.dialect === 'sqlite' ? 'json_each(?) AS s CROSS JOIN retrieval_documents AS d' : 'jsonb_each_text(?::jsonb) AS s JOIN retrieval_documents AS d ON TRUE';
    const rows = await tx.all<DocumentColumns>(
      `SELECT d.source_id, d.revision, d.digest, d.source, d.ingestion, d.chunks, d.bytes FROM ${pairs}
       WHERE d.corpus = ? AND d.namespace = ? AND d.source_id = s.key AND d.revision = s.value ORDER BY d.source_id`,
      [JSON.stringify(scope.sources), scope.corpus, scope.namespace],
    );
    return new Map(rows.map((row) => [row.source_id, toDocument(row)]));
  }

  /** The ranked chunk rows (id → score) as matches, best first, ties by chunk id. */
  private async matches(tx: SqlEngine, documents: Map<string, IndexedDocument>, scores: Map<number, number>): Promise<ChunkMatch[]> {
    if (scores.size === 0) return [];
    const rows = await tx.all<ChunkColumns & { id: number }>(
      `SELECT id, source_id, chunk_id, ordinal, text, location FROM retrieval_chunks WHERE id IN (${this.jsonArray(tx, 'bigint')})`,
      [JSON.stringify([...scores.keys()])],
    );
    const matches = rows.map((row) => {
      const document = documents.get(row.source_id)!;
      const chunk: IndexedChunk = {
        chunkId: row.chunk_id,
        sourceId: row.source_id,
        revision: document.revision,
        ordinal: Number(row.ordinal),
        text: row.text,
        location: JSON.parse(row.location) as IndexedChunk['location'],
      };
      return { chunk, document, rank: 0, score: scores.get(Number(row.id))! };
    });
    matches.sort((a, b) => b.score - a.score || (a.chunk.chunkId < b.chunk.chunkId ? -1 : a.chunk.chunkId > b.chunk.chunkId ? 1 : 0));
    matches.forEach((match, index) => (match.rank = index + 1));
    return matches;
  }

  /** A consistent read: one transaction, a repeatable-read snapshot on PostgreSQL. */
  private async snapshot<T>(body: (tx: SqlEngine) => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await this.engine.transaction(async (tx) => {
        if (tx.dialect === 'postgres') await tx.run('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        signal?.throwIfAborted();
        return body(tx);
      });
    } catch (error) {
      // An abort is the caller's reason, not a store failure.
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
  }

  /**
   * SQLite: the query terms without those in more than half the index's chunks. FTS5 clamps
   * such a term's idf to almost nothing, so it adds matches (each scored by bm25 before the
   * limit) but no ranking. Keeps the rarest term, so a query never empties. A term's document
   * count is read from the fts5vocab table under its longest prefix there: the porter stem is
   * a prefix of the word but for a few suffix rewrites, and a term with none is kept.
   */
  private async selectiveTerms(tx: SqlEngine, terms: string[]): Promise<string[]> {
    const [{ total } = { total: 0 }] = await tx.all<{ total: number }>('SELECT COUNT(*) AS total FROM retrieval_chunks');
    if (total < PRUNE_MIN_CHUNKS) return terms;
    const prefixes = new Set(terms.flatMap((term) => Array.from({ length: Math.max(0, term.length - 2) }, (_, cut) => term.slice(0, term.length - cut))));
    const counts = new Map(
      (await tx.all<{ term: string; doc: number }>('SELECT term, doc FROM retrieval_fts_vocab WHERE term IN (SELECT value FROM json_each(?))', [JSON.stringify([...prefixes])])).map(
        (row) => [row.term, Number(row.doc)],
      ),
    );
    const frequency = (term: string): number => {
      for (let length = term.length; length >= 3; length -= 1) {
        const count = counts.get(term.slice(0, length));
        if (count !== undefined) return count;
      }
      return 0;
    };
    const rated = terms.map((term) => ({ term, frequency: frequency(term) })).sort((a, b) => a.frequency - b.frequency);
    const kept = rated.filter((entry, index) => index === 0 || entry.frequency <= total * PRUNE_SHARE);
    return kept.map((entry) => entry.term);
  }

  private async bumpGeneration(tx: SqlEngine, corpus: string): Promise<void> {
    await tx.run('UPDATE retrieval_corpora SET generation = generation + 1 WHERE corpus = ?', [corpus]);
  }

  /**
   * The namespace's vectors as one flat array, read once per corpus generation (the generation
   * is read in the search's own snapshot, so another replica's write invalidates the copy).
   * Undefined when they would not fit the cache's budget: the caller scans pages instead.
   */
  private async cachedVectors(tx: SqlEngine, corpus: string, namespace: string, dimensions: number): Promise<CachedVectors | undefined> {
    const [row] = await tx.all<{ generation: number | string }>('SELECT generation FROM retrieval_corpora WHERE corpus = ?', [corpus]);
    if (!row) return undefined;
    const generation = String(row.generation);
    const key = JSON.stringify([corpus, namespace]);
    const hit = this.vectorCache.get(key);
    if (hit) {
      this.vectorCache.delete(key);
      if (hit.generation === generation && hit.dimensions === dimensions) {
        this.vectorCache.set(key, hit); // most recently used last
        return hit;
      }
      this.cachedBytes -= hit.bytes;
    }
    const [{ count } = { count: 0 }] = await tx.all<{ count: number | string }>(
      'SELECT COUNT(*) AS count FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND vector IS NOT NULL',
      [corpus, namespace],
    );
    const bytes = Number(count) * (dimensions * 4 + CACHED_ROW_OVERHEAD);
    if (bytes > this.vectorCacheBytes) return undefined;
    for (const [oldest, entry] of this.vectorCache) {
      if (this.cachedBytes + bytes <= this.vectorCacheBytes) break;
      this.vectorCache.delete(oldest);
      this.cachedBytes -= entry.bytes;
    }
    const rows = await tx.all<{ id: number; source_id: string; chunk_id: string; vector: Buffer }>(
      'SELECT id, source_id, chunk_id, vector FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND vector IS NOT NULL',
      [corpus, namespace],
    );
    const entry: CachedVectors = { generation, dimensions, bytes, ids: [], sourceIds: [], chunkIds: [], vectors: new Float32Array(rows.length * dimensions) };
    rows.forEach((stored, index) => {
      entry.ids.push(Number(stored.id));
      entry.sourceIds.push(stored.source_id);
      entry.chunkIds.push(stored.chunk_id);
      // A shorter stored vector is zero-padded, a longer one cut: the same dot product as the scan's.
      const length = Math.min(dimensions, stored.vector.byteLength >> 2);
      entry.vectors.set(new Float32Array(Uint8Array.prototype.slice.call(stored.vector, 0, length * 4).buffer), index * dimensions);
    });
    this.vectorCache.set(key, entry);
    this.cachedBytes += bytes;
    return entry;
  }

  private async lockWrites(tx: SqlEngine): Promise<void> {
    if (tx.dialect === 'postgres') await tx.all(`SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
  }

  /** The elements of a JSON array parameter, as a subquery. */
  private jsonArray(engine: SqlEngine = this.engine, type: 'text' | 'bigint' = 'text'): string {
    if (engine.dialect === 'sqlite') return 'SELECT value FROM json_each(?)';
    return type === 'text' ? 'SELECT jsonb_array_elements_text(?::jsonb)' : 'SELECT jsonb_array_elements_text(?::jsonb)::bigint';
  }
}

function toDocument(row: DocumentColumns): IndexedDocument {
  return {
    sourceId: row.source_id,
    revision: row.revision,
    digest: row.digest,
    source: JSON.parse(row.source) as ContextSource,
    ...(row.ingestion === null ? {} : { ingestion: JSON.parse(row.ingestion) as IngestionManifest }),
    chunks: Number(row.chunks),
    bytes: Number(row.bytes),
  };
}

/** float32, little-endian (the byte order of every platform Node runs the host on). */
function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

function dot(query: Float32Array, stored: Buffer): number {
  const length = Math.min(query.length, stored.byteLength >> 2);
  const values = stored.byteOffset % 4 === 0 ? new Float32Array(stored.buffer, stored.byteOffset, length) : new Float32Array(Uint8Array.prototype.slice.call(stored, 0, length * 4).buffer);
  let sum = 0;
  for (let index = 0; index < length; index += 1) sum += query[index]! * values[index]!;
  return sum;
}

function better(a: { chunkId: string; score: number }, b: { chunkId: string; score: number }): boolean {
  return a.score > b.score || (a.score === b.score && a.chunkId < b.chunkId);
}

function insertionPoint(sorted: { chunkId: string; score: number }[], candidate: { chunkId: string; score: number }): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (better(candidate, sorted[middle]!)) high = middle;
    else low = middle + 1;
  }
  return low;
}
