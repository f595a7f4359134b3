/**
 * The retrieval index in the SQL store: BM25 over the store's own text analysis, computed the same
 * way on SQLite and PostgreSQL (each engine's inverted index only finds the candidates), plus an
 * exact cosine scan over the stored vectors. Scope (namespace and exact source revisions) is
 * applied in SQL before ranking and limit. A search reads in one transaction (PostgreSQL: a
 * repeatable-read snapshot), so a concurrent replace is seen whole or not at all.
 */
import { DriverError } from '../../../protocol/errors.js';
import type { ContextSource, IngestionManifest } from '../../../protocol/schemas.js';
import type { ChunkMatch, CorpusIndex, IndexedChunk, IndexedDocument, RetrievalIndexStore, RetrievalScope } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import type { Migrations } from '../table.js';
import { queryTerms, termFrequencies } from '../text-terms.js';
import { DEFAULT_RETRIEVAL_CAPACITY, type CapacityBound, type RetrievalCapacity } from '../../retrieval-capacity.js';

export const MAX_CORPORA = 1000;
/** Distinct query terms ranked by; the rest of a long query adds little to BM25. */
const MAX_QUERY_TERMS = 64;
/** BM25's term-frequency saturation and length normalisation (the usual values). */
const K1 = 1.2;
const B = 0.75;
/** Chunks whose vectors one page of the cosine scan reads. */
const VECTOR_PAGE = 512;
/** Serialises index writes across PostgreSQL replicas (capacity and chunk ownership are global). */
const WRITE_LOCK = 7434;
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

/** One query term: its document frequency in the namespace, idf, and most a chunk can score on it. */
interface WeightedTerm {
  term: string;
  df: number;
  idf: number;
  /** idf × (k1 + 1): the BM25 weight, and the bound of the term's contribution. */
  weight: number;
}

/** A chunk's analysed text, ready to store: its length in terms and its distinct terms with their counts. */
interface ChunkTerms {
  length: number;
  frequencies: Map<string, number>;
}

/**
 * The retrieval index as it was first created: corpora (frozen descriptor), documents (one
 * revision per source) and chunks with their vectors (float32 little-endian BLOB/bytea), with
 * the engine's own lexical index (FTS5 on SQLite, a tsvector on PostgreSQL) that a later step
 * replaces with the store's own analysis (`analyzedTerms`).
 */
function retrievalTables(dialect: 'sqlite' | 'postgres'): string {
  const tables = `CREATE TABLE retrieval_corpora (corpus TEXT PRIMARY KEY, descriptor TEXT NOT NULL);
   CREATE TABLE retrieval_documents (
     corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL, revision TEXT NOT NULL,
     digest TEXT NOT NULL, source TEXT NOT NULL, ingestion TEXT, chunks BIGINT NOT NULL, bytes BIGINT NOT NULL,
     stored_bytes BIGINT NOT NULL, PRIMARY KEY (corpus, namespace, source_id))`;
  if (dialect === 'sqlite') {
    return `${tables};
   CREATE TABLE retrieval_chunks (
     id INTEGER PRIMARY KEY, corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL,
     chunk_id TEXT NOT NULL, ordinal BIGINT NOT NULL, text TEXT NOT NULL, location TEXT NOT NULL, vector BLOB,
     UNIQUE (corpus, namespace, chunk_id));
   CREATE INDEX retrieval_chunks_source ON retrieval_chunks (corpus, namespace, source_id);
   CREATE VIRTUAL TABLE retrieval_fts USING fts5(text, content='retrieval_chunks', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
   CREATE TRIGGER retrieval_chunks_fts_insert AFTER INSERT ON retrieval_chunks BEGIN
     INSERT INTO retrieval_fts (rowid, text) VALUES (new.id, new.text);
   END;
   CREATE TRIGGER retrieval_chunks_fts_delete AFTER DELETE ON retrieval_chunks BEGIN
     INSERT INTO retrieval_fts (retrieval_fts, rowid, text) VALUES ('delete', old.id, old.text);
   END`;
  }
  return `${tables};
   CREATE TABLE retrieval_chunks (
     id BIGSERIAL PRIMARY KEY, corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL,
     chunk_id TEXT NOT NULL, ordinal BIGINT NOT NULL, text TEXT NOT NULL, location TEXT NOT NULL, vector BYTEA,
     tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
     UNIQUE (corpus, namespace, chunk_id));
   CREATE INDEX retrieval_chunks_source ON retrieval_chunks (corpus, namespace, source_id);
   CREATE INDEX retrieval_chunks_tsv ON retrieval_chunks USING GIN (tsv)`;
}

/**
 * Bumped by every replace/delete in a corpus, in the same transaction: a search reads it to
 * know whether its in-process copy of the corpus's vectors is still current (on any replica).
 */
const RETRIEVAL_GENERATION = 'ALTER TABLE retrieval_corpora ADD COLUMN generation';

/** Who indexed each document: a subject's share of the index is what its documents hold (NULL: indexed before shares). */
const RETRIEVAL_SUBJECT = `ALTER TABLE retrieval_documents ADD COLUMN subject TEXT;
   CREATE INDEX retrieval_documents_subject ON retrieval_documents (subject)`;

/**
 * Lexical search on the store's own analysis (src/store/sql/text-terms.ts), the same on both
 * engines: per chunk its length in terms and each term's frequency, an inverted index from term
 * to chunks (FTS5 over the distinct terms on SQLite, GIN over a term array on PostgreSQL), and each
 * term's document frequency per corpus and namespace. The engines' own text search (porter FTS5,
 * english tsvector) analysed text differently and ranked differently, so what it indexed is
 * cleared: corpora indexed before are ingested again (their descriptors changed too).
 */
function analyzedTerms(dialect: 'sqlite' | 'postgres'): string {
  const clear = `DELETE FROM retrieval_chunks;
   DELETE FROM retrieval_documents;
   DELETE FROM retrieval_corpora;
   ALTER TABLE retrieval_documents ADD COLUMN terms BIGINT NOT NULL DEFAULT 0;
   CREATE TABLE retrieval_term_counts (
     corpus TEXT NOT NULL, namespace TEXT NOT NULL, term TEXT NOT NULL, df BIGINT NOT NULL,
     PRIMARY KEY (corpus, namespace, term))`;
  if (dialect === 'sqlite') {
    return `${clear} WITHOUT ROWID;
   CREATE TABLE retrieval_chunk_terms (
     id INTEGER PRIMARY KEY, corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL,
     chunk_id TEXT NOT NULL, length BIGINT NOT NULL, terms BLOB NOT NULL);
   CREATE INDEX retrieval_chunk_terms_source ON retrieval_chunk_terms (corpus, namespace, source_id);
   CREATE VIRTUAL TABLE retrieval_terms_fts USING fts5(terms, content='', contentless_delete=1, tokenize='ascii')`;
  }
  // Rows up to a page stay uncompressed in line: scoring reads each candidate's arrays directly.
  return `${clear};
   CREATE TABLE retrieval_chunk_terms (
     id BIGINT PRIMARY KEY, corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL,
     chunk_id TEXT NOT NULL, length BIGINT NOT NULL, terms TEXT[] NOT NULL, counts INT2[] NOT NULL)
     WITH (toast_tuple_target = 8160);
   CREATE INDEX retrieval_chunk_terms_source ON retrieval_chunk_terms (corpus, namespace, source_id);
   CREATE INDEX retrieval_chunk_terms_terms ON retrieval_chunk_terms USING GIN (terms)`;
}

export class RetrievalTable implements RetrievalIndexStore {
  static readonly migrations: Migrations = {
    sqlite: [
      retrievalTables('sqlite'),
      `${RETRIEVAL_GENERATION} INTEGER NOT NULL DEFAULT 0;
   CREATE VIRTUAL TABLE retrieval_fts_vocab USING fts5vocab(retrieval_fts, 'row')`,
      // Lexical search checks each full-text match's scope here, not in the wide chunk rows.
      'CREATE INDEX retrieval_chunks_rank ON retrieval_chunks (id, corpus, namespace, source_id, chunk_id)',
      `DROP TRIGGER retrieval_chunks_fts_insert;
   DROP TRIGGER retrieval_chunks_fts_delete;
   DROP TABLE retrieval_fts_vocab;
   DROP TABLE retrieval_fts;
   DROP INDEX retrieval_chunks_rank;
   ${analyzedTerms('sqlite')}`,
      RETRIEVAL_SUBJECT,
    ],
    postgres: [
      retrievalTables('postgres'),
      `${RETRIEVAL_GENERATION} BIGINT NOT NULL DEFAULT 0`,
      `ALTER TABLE retrieval_chunks DROP COLUMN tsv;
   ${analyzedTerms('postgres')}`,
      RETRIEVAL_SUBJECT,
    ],
  };

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
    const analysed = await analyse(chunks);
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
      await this.removeTerms(tx, corpus, namespace, document.sourceId);
      await tx.run('DELETE FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, document.sourceId]);
      await tx.run('DELETE FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, document.sourceId]);
      await tx.run(
        `INSERT INTO retrieval_documents (corpus, namespace, source_id, revision, digest, source, ingestion, chunks, bytes, stored_bytes, terms, subject)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
          analysed.reduce((sum, terms) => sum + terms.length, 0),
          subject ?? null,
        ],
      );
      await this.bumpGeneration(tx, corpus);
      for (const [index, chunk] of chunks.entries()) {
        const [row] = await tx.all<{ id: number }>(
          'INSERT INTO retrieval_chunks (corpus, namespace, source_id, chunk_id, ordinal, text, location, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
          [corpus, namespace, document.sourceId, chunk.chunkId, chunk.ordinal, chunk.text, JSON.stringify(chunk.location), chunk.vector ? vectorBytes(chunk.vector) : null],
        );
        await this.insertTerms(tx, { id: Number(row!.id), corpus, namespace, sourceId: document.sourceId, chunkId: chunk.chunkId }, analysed[index]!);
      }
      await this.countTerms(tx, corpus, namespace, document.sourceId, +1);
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
      await this.removeTerms(tx, corpus, namespace, sourceId);
      await tx.run('DELETE FROM retrieval_chunks WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
      await tx.run('DELETE FROM retrieval_documents WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
      await this.bumpGeneration(tx, corpus);
      return true;
    });
  }

  /**
   * BM25 (k1 1.2, b 0.75, idf ln(1 + (N − df + ½) / (df + ½))) with the namespace's statistics, best
   * first, each score divided by the most the query can score (Σ idf × (k1 + 1), every term
   * saturated): an average-length chunk holding each query term once scores 1 / (k1 + 1) ≈ 0.45,
   * one holding only the terms that carry half the query's weight about half that. Exact top
   * `limit` without scoring every chunk that shares a word (max-score): candidates come from the
   * rarest terms first, and a more common term is added only while a chunk holding none of the
   * terms so far could still reach the top.
   */
  async searchLexical(scope: RetrievalScope, query: string, limit: number, signal?: AbortSignal): Promise<ChunkMatch[]> {
    signal?.throwIfAborted();
    const terms = queryTerms(query, MAX_QUERY_TERMS);
    if (terms.length === 0 || limit < 1 || Object.keys(scope.sources).length === 0) return [];
    return this.snapshot(async (tx) => {
      const documents = await this.scopedDocuments(tx, scope);
      if (documents.size === 0) return [];
      const { weighted, averageLength } = await this.weigh(tx, scope, terms);
      const best = weighted.reduce((sum, term) => sum + term.weight, 0);
      const present = weighted.filter((term) => term.df > 0).sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1));
      let unseen = present.reduce((sum, term) => sum + term.weight, 0);
      let ranked: { id: number; score: number }[] = [];
      for (let used = 1; used <= present.length; used += 1) {
        unseen -= present[used - 1]!.weight;
        ranked = await this.bm25(tx, scope, [...documents.keys()], present, used, averageLength, limit);
        signal?.throwIfAborted();
        // A chunk with none of the terms used so far scores at most `unseen`.
        if (ranked.length === limit && ranked[limit - 1]!.score > unseen) break;
      }
      return this.matches(tx, documents, ranked.map((row) => ({ id: row.id, score: Math.min(1, row.score / best) })));
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
        return this.matches(tx, documents, best);
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
      return this.matches(tx, documents, best);
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

  /** The ranked chunk rows (best first, ties by chunk id) as matches, in that order. */
  private async matches(tx: SqlEngine, documents: Map<string, IndexedDocument>, ranked: { id: number; score: number }[]): Promise<ChunkMatch[]> {
    if (ranked.length === 0) return [];
    const rows = new Map(
      (
        await tx.all<ChunkColumns & { id: number }>(`SELECT id, source_id, chunk_id, ordinal, text, location FROM retrieval_chunks WHERE id IN (${this.jsonArray(tx, 'bigint')})`, [
          JSON.stringify(ranked.map((entry) => entry.id)),
        ])
      ).map((row) => [Number(row.id), row]),
    );
    return ranked.map(({ id, score }, index) => {
      const row = rows.get(id)!;
      const document = documents.get(row.source_id)!;
      const chunk: IndexedChunk = {
        chunkId: row.chunk_id,
        sourceId: row.source_id,
        revision: document.revision,
        ordinal: Number(row.ordinal),
        text: row.text,
        location: JSON.parse(row.location) as IndexedChunk['location'],
      };
      return { chunk, document, rank: index + 1, score };
    });
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

  /** Each query term's document frequency and weight in the namespace, and its average chunk length. */
  private async weigh(tx: SqlEngine, scope: RetrievalScope, terms: string[]): Promise<{ weighted: WeightedTerm[]; averageLength: number }> {
    const [totals] = await tx.all<{ chunks: number | null; terms: number | null }>(
      'SELECT SUM(chunks) AS chunks, SUM(terms) AS terms FROM retrieval_documents WHERE corpus = ? AND namespace = ?',
      [scope.corpus, scope.namespace],
    );
    const chunks = Number(totals?.chunks ?? 0);
    const counts = new Map(
      (
        await tx.all<{ term: string; df: number }>(
          `SELECT term, df FROM retrieval_term_counts WHERE corpus = ? AND namespace = ? AND term IN (${this.jsonArray(tx)})`,
          [scope.corpus, scope.namespace, JSON.stringify(terms)],
        )
      ).map((row) => [row.term, Number(row.df)]),
    );
    const weighted = terms.map((term) => {
      const df = counts.get(term) ?? 0;
      const idf = Math.log(1 + (chunks - df + 0.5) / (df + 0.5));
      return { term, df, idf, weight: idf * (K1 + 1) };
    });
    return { weighted, averageLength: chunks > 0 ? Math.max(1, Number(totals?.terms ?? 0) / chunks) : 1 };
  }

  /**
   * The best `limit` in-scope chunks holding any of the first `used` terms, each scored on all of
   * them: Σ weight × tf / (tf + k1 × (1 − b + b × length / averageLength)).
   */
  private async bm25(tx: SqlEngine, scope: RetrievalScope, sourceIds: string[], terms: WeightedTerm[], used: number, averageLength: number, limit: number) {
    const sqlite = tx.dialect === 'sqlite';
    // Both engines evaluate the same double-precision expression, so they rank alike.
    const real = 'CAST(? AS DOUBLE PRECISION)';
    const score = terms.map((_, index) => `${real} * f${index} / (f${index} + k)`).join(' + ');
    const frequency = sqlite ? 'coalesce(json_extract(t.terms, ?), 0)' : 'coalesce(t.counts[array_position(t.terms, ?::text)], 0)';
    const frequencies = terms.map((_, index) => `${frequency} AS f${index}`).join(', ');
    // Terms are letters and digits only, each quoted: nothing in a query is engine syntax.
    const matching = terms.slice(0, used).map((entry) => entry.term);
    const candidates = sqlite
      ? `retrieval_terms_fts AS f CROSS JOIN retrieval_chunk_terms AS t
         WHERE t.id = f.rowid AND retrieval_terms_fts MATCH ? AND t.corpus = ? AND t.namespace = ? AND +t.source_id IN (SELECT value FROM json_each(?))`
      : `retrieval_chunk_terms AS t
         WHERE t.terms && string_to_array(?::text, ' ') AND t.corpus = ? AND t.namespace = ? AND t.source_id IN (SELECT jsonb_array_elements_text(?::jsonb))`;
    const rows = await tx.all<{ id: number; score: number }>(
      `SELECT id, ${score} AS score FROM (
         SELECT t.id, t.chunk_id, ${real} * (1 - ${real} + ${real} * t.length / ${real}) AS k, ${frequencies} FROM ${candidates}
       ) AS scored ORDER BY score DESC, chunk_id${sqlite ? '' : ' COLLATE "C"'} LIMIT ?`,
      [
        ...terms.map((entry) => entry.weight),
        K1,
        B,
        B,
        averageLength,
        ...terms.map((entry) => (sqlite ? `$."${entry.term}"` : entry.term)),
        sqlite ? matching.map((term) => `"${term}"`).join(' OR ') : matching.join(' '),
        scope.corpus,
        scope.namespace,
        JSON.stringify(sourceIds),
        limit,
      ],
    );
    return rows.map((row) => ({ id: Number(row.id), score: Number(row.score) }));
  }

  /** A chunk's term frequencies and the inverted index entry that finds it (rowid = the chunk's id). */
  private async insertTerms(tx: SqlEngine, chunk: { id: number; corpus: string; namespace: string; sourceId: string; chunkId: string }, terms: ChunkTerms): Promise<void> {
    const keys = [...terms.frequencies.keys()];
    const row = [chunk.id, chunk.corpus, chunk.namespace, chunk.sourceId, chunk.chunkId, terms.length];
    if (tx.dialect === 'sqlite') {
      await tx.run('INSERT INTO retrieval_chunk_terms (id, corpus, namespace, source_id, chunk_id, length, terms) VALUES (?, ?, ?, ?, ?, ?, jsonb(?))', [
        ...row,
        JSON.stringify(Object.fromEntries(terms.frequencies)),
      ]);
      await tx.run('INSERT INTO retrieval_terms_fts (rowid, terms) VALUES (?, ?)', [chunk.id, keys.join(' ')]);
    } else {
      await tx.run(
        `INSERT INTO retrieval_chunk_terms (id, corpus, namespace, source_id, chunk_id, length, terms, counts)
         VALUES (?, ?, ?, ?, ?, ?, string_to_array(?::text, ' '), string_to_array(?::text, ' ')::int2[])`,
        [...row, keys.join(' '), [...terms.frequencies.values()].join(' ')],
      );
    }
  }

  /** Adds (+1) or takes away (−1) a source's chunks from the namespace's document frequencies. */
  private async countTerms(tx: SqlEngine, corpus: string, namespace: string, sourceId: string, sign: 1 | -1): Promise<void> {
    const terms = tx.dialect === 'sqlite' ? 'json_each(t.terms) AS j' : 'unnest(t.terms) AS j(key)';
    await tx.run(
      `INSERT INTO retrieval_term_counts (corpus, namespace, term, df)
       SELECT ?, ?, j.key, ${sign} * COUNT(*) FROM retrieval_chunk_terms AS t, ${terms} WHERE t.corpus = ? AND t.namespace = ? AND t.source_id = ? GROUP BY j.key
       ON CONFLICT (corpus, namespace, term) DO UPDATE SET df = retrieval_term_counts.df + excluded.df`,
      [corpus, namespace, corpus, namespace, sourceId],
    );
  }

  /** Before a source's chunks go: its counts, its term rows and their inverted index entries. */
  private async removeTerms(tx: SqlEngine, corpus: string, namespace: string, sourceId: string): Promise<void> {
    await this.countTerms(tx, corpus, namespace, sourceId, -1);
    const terms = tx.dialect === 'sqlite' ? 'json_each(t.terms) AS j' : 'unnest(t.terms) AS j(key)';
    await tx.run(
      `DELETE FROM retrieval_term_counts WHERE corpus = ? AND namespace = ? AND df <= 0
       AND term IN (SELECT j.key FROM retrieval_chunk_terms AS t, ${terms} WHERE t.corpus = ? AND t.namespace = ? AND t.source_id = ?)`,
      [corpus, namespace, corpus, namespace, sourceId],
    );
    if (tx.dialect === 'sqlite') {
      await tx.run('DELETE FROM retrieval_terms_fts WHERE rowid IN (SELECT id FROM retrieval_chunk_terms WHERE corpus = ? AND namespace = ? AND source_id = ?)', [corpus, namespace, sourceId]);
    }
    await tx.run('DELETE FROM retrieval_chunk_terms WHERE corpus = ? AND namespace = ? AND source_id = ?', [corpus, namespace, sourceId]);
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

/** The chunks' analysed texts, yielding to the event loop between chunks (a source holds up to 1 MiB of text). */
async function analyse(chunks: IndexedChunk[]): Promise<ChunkTerms[]> {
  const analysed: ChunkTerms[] = [];
  for (const chunk of chunks) {
    analysed.push(termFrequencies(chunk.text));
    if (analysed.length % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return analysed;
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
