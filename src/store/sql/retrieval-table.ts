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

export interface RetrievalCapacity {
  /** Chunks across all corpora and namespaces (default 20,000). */
  maxChunks: number;
  /** Stored bytes (chunk text + vectors) across all corpora and namespaces (default 128 MiB). */
  maxBytes: number;
}

export const DEFAULT_RETRIEVAL_CAPACITY: RetrievalCapacity = { maxChunks: 20_000, maxBytes: 128 * 1024 * 1024 };
export const MAX_CORPORA = 1000;
/** Distinct query terms sent to the engine; the rest of a long query adds little to BM25. */
const MAX_QUERY_TERMS = 64;
/** Chunks whose vectors one page of the cosine scan reads. */
const VECTOR_PAGE = 512;
/** Serialises index writes across PostgreSQL replicas (capacity and chunk ownership are global). */
const WRITE_LOCK = 7434;

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
  ) {}

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

  async replace(corpus: string, namespace: string, document: IndexedDocument, chunks: IndexedChunk[], expectedDigest: string | null): Promise<void> {
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
      const [used = { chunks: 0, bytes: 0 }] = await tx.all<{ chunks: number | null; bytes: number | null }>(
        'SELECT SUM(chunks) AS chunks, SUM(stored_bytes) AS bytes FROM retrieval_documents WHERE NOT (corpus = ? AND namespace = ? AND source_id = ?)',
        [corpus, namespace, document.sourceId],
      );
      if (Number(used.chunks ?? 0) + chunks.length > this.capacity.maxChunks || Number(used.bytes ?? 0) + storedBytes > this.capacity.maxBytes) {
        throw new DriverError('INDEX_FULL', 'The retrieval index is full; delete sources or raise its capacity.', { retryable: false });
      }
      await tx.run('DELETE FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, document.sourceId]);
      await tx.run('DELETE FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, document.sourceId]);
      await tx.run(
        `INSERT INTO retrieval_documents (corpus, namespace, source_id, revision, digest, source, ingestion, chunks, bytes, stored_bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
        ],
      );
      for (const chunk of chunks) {
        await tx.run(
          'INSERT INTO retrieval_chunks (corpus, namespace, source_id, chunk_id, ordinal, text, location, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          [corpus, namespace, document.sourceId, chunk.chunkId, chunk.ordinal, chunk.text, JSON.stringify(chunk.location), chunk.vector ? vectorBytes(chunk.vector) : null],
        );
      }
    });
  }

  async delete(corpus: string, namespace: string, sourceId: string, revision: string): Promise<boolean> {
    return this.engine.transaction(async (tx) => {
      await this.lockWrites(tx);
      const [current] = await tx.all<{ revision: string }>('SELECT revision FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
      if (!current) return false;
      if (current.revision !== revision) throw new DriverError('SOURCE_CONFLICT', `The source ${sourceId} is indexed at another revision.`);
      await tx.run('DELETE FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
      await tx.run('DELETE FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
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
              `SELECT c.id AS id, -bm25(retrieval_fts) AS relevance FROM retrieval_fts CROSS JOIN retrieval_chunks AS c
               WHERE c.id = retrieval_fts.rowid AND retrieval_fts MATCH ? AND c.corpus = ? AND c.namespace = ? AND c.source_id IN (SELECT value FROM json_each(?))
               ORDER BY relevance DESC, c.chunk_id LIMIT ?`,
              [terms.map((term) => `"${term}"`).join(' OR '), scope.corpus, scope.namespace, sourceIds, limit],
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
      const best: { id: number; chunkId: string; score: number }[] = [];
      // Pages of whole sources (a source holds at most a few hundred chunks), in source order.
      let page: string[] = [];
      let pageChunks = 0;
      const scan = async (): Promise<void> => {
        const rows = await tx.all<{ id: number; chunk_id: string; vector: Buffer }>(
          `SELECT id, chunk_id, vector FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND vector IS NOT NULL AND source_id IN (${this.jsonArray(tx)})`,
          [scope.corpus, scope.namespace, JSON.stringify(page)],
        );
        for (const row of rows) {
          const candidate = { id: Number(row.id), chunkId: row.chunk_id, score: Math.max(-1, Math.min(1, dot(vector, row.vector))) };
          if (best.length === limit && !better(candidate, best[best.length - 1]!)) continue;
          best.splice(insertionPoint(best, candidate), 0, candidate);
          if (best.length > limit) best.pop();
        }
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
