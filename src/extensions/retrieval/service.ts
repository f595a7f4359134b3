/**
 * Scoped retrieval over the store's own search engines: index, search, delete and ingest one
 * source at a time, each call authorized for the subject before any read, after every read and
 * before anything is answered. Every corpus is a vector index (its configured embedder, or the
 * built-in hash embedder); a corpus with a configured embedder fuses exact cosine with BM25
 * (hybrid), one without ranks by BM25 alone.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import { DriverError } from '../../protocol/errors.js';
import { RetrievalResult as RetrievalResultSchema } from '../../protocol/schemas.js';
import type { ContextSource, IngestionManifest, IngestRequest, IngestResult, RetrievalDeleteRequest, RetrievalDeleteResult, RetrievalIndexReceipt, RetrievalIndexRequest, RetrievalOptions, RetrievalResult } from '../../protocol/schemas.js';
import { builtinEmbedder } from '../../providers/embeddings/index.js';
import type { RetrievalCallContext, RetrievalContext } from '../../runtime/services.js';
import { abortable } from '../../runtime/run-loop.js';
import { USAGE_RECORD_SCHEMA, type UsageRecord } from '../../runtime/usage-record.js';
import { canonicalJson } from '../../shared/json-identity.js';
import type { ChunkMatch, IndexedChunk, IndexedDocument, RetrievalIndexStore, RetrievalScope } from '../../store/store.js';
import { hybridFusion } from './fusion.js';
import type { AuthorizeRequest, CorpusDefinition, EmbeddingAdapter, SourceAuthorizer, SourceGrant } from './types.js';

export const DEFAULT_LIMIT = 8;
export const DEFAULT_MAX_CONTEXT_BYTES = 65_536;
export const MAX_SOURCES = 1000;
export const MAX_CHUNK_BYTES = 16_384;
export const MAX_DOCUMENT_BYTES = 1_048_576;
export const DEFAULT_BATCH = { maxTexts: 32, maxBytes: 65_536 };
/** Candidates each ranking contributes before fusion and filtering: 4 per passage asked for, 16–64. */
const candidates = (limit: number) => Math.min(64, Math.max(16, 4 * limit));

type Location = NonNullable<ContextSource['location']>;
type Hit = RetrievalResult['hits'][number];
type IndexDescriptor = RetrievalResult['index'];
type Ranking = NonNullable<IndexDescriptor['ranking']>;
const DESCRIPTOR_SCHEMA = RetrievalResultSchema.properties.index;
/** The descriptor's account label for an embedder that names none. */
const DEFAULT_ACCOUNT = 'default';

/** What ingestion gives back: the source and its chunks, ready to index (src/extensions/retrieval/ingestion). */
export interface PreparedDocument {
  source: ContextSource;
  chunks: { id: string; text: string; location?: Location }[];
  ingestion: IngestionManifest;
}
export type DocumentPreparer = (request: IngestRequest, options: { signal: AbortSignal; onProgress: () => void; subject: string }) => Promise<PreparedDocument>;

export interface RetrievalServiceOptions {
  store: RetrievalIndexStore;
  corpora: CorpusDefinition[];
  /** The application's source authorizer; default: config namespaces over what is indexed. */
  authorize?: SourceAuthorizer;
  /** Extraction and chunking for `ingest`; absent → ingestion is not offered. */
  prepare?: DocumentPreparer;
  /** Whether PDF documents may be ingested. */
  pdf?: boolean;
  embeddingBatch?: { maxTexts: number; maxBytes: number };
  /** One record per embedding call (index batch or query), never any text. */
  usage?: { hostId: string; labels?: Record<string, string>; record(record: UsageRecord): Promise<void> };
  /** The host's idle timeout, combined with a request's (minimum of the positive values). */
  idleTimeoutMs?: number;
}

export interface CallContext extends Omit<RetrievalCallContext, 'signal'> {
  signal?: AbortSignal;
  tokenId?: string;
}

const notFound = () => new DriverError('CONTEXT_NOT_FOUND', 'The corpus or source was not found, or is not visible to this caller.');
const invalid = (message: string) => new DriverError('INVALID_RETRIEVAL', message);
const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export class RetrievalService implements RetrievalContext {
  private readonly corpora = new Map<string, CorpusDefinition>();
  private readonly authorizer: SourceAuthorizer;
  private readonly batch: { maxTexts: number; maxBytes: number };
  /** Embeds the corpora that configure no embedder; local, so never metered. */
  private readonly builtin = builtinEmbedder();

  constructor(private readonly options: RetrievalServiceOptions) {
    if (options.corpora.length > 1000) throw new DriverError('INVALID_CONFIG', 'At most 1000 retrieval corpora may be configured.');
    for (const corpus of options.corpora) {
      if (this.corpora.has(corpus.id)) throw new DriverError('INVALID_CONFIG', `Retrieval corpus ${corpus.id} is configured twice.`);
      if (!Value.Check(DESCRIPTOR_SCHEMA, this.indexOf(corpus))) {
        throw new DriverError('INVALID_CONFIG', `The embedder of retrieval corpus ${corpus.id} has an identity no index descriptor can carry (ids and model name syntax, 1-4096 dimensions).`);
      }
      this.corpora.set(corpus.id, corpus);
    }
    this.authorizer = options.authorize ?? ((request, context) => this.defaultGrant(request, context));
    this.batch = options.embeddingBatch ?? DEFAULT_BATCH;
  }

  get ingests(): boolean {
    return this.options.prepare !== undefined;
  }

  get ingestsPdf(): boolean {
    return this.ingests && this.options.pdf !== false;
  }

  /** The wire `index` object of a corpus; its canonical JSON is the frozen descriptor. */
  indexOf(corpus: CorpusDefinition): IndexDescriptor {
    const embedder = this.embedderOf(corpus).identity;
    return {
      providerId: embedder.providerId,
      vendor: embedder.vendor,
      accountId: embedder.accountId ?? DEFAULT_ACCOUNT,
      authMode: embedder.authMode,
      model: embedder.model,
      dimensions: embedder.dimensions,
      metric: 'cosine',
      version: '1',
      ranking: rankingOf(corpus),
    };
  }

  async index(request: RetrievalIndexRequest, context: CallContext): Promise<RetrievalIndexReceipt> {
    const signal = context.signal ?? new AbortController().signal;
    const corpus = this.corpus(request.corpus);
    validateIndexRequest(request);
    const { source } = request;
    const ask: AuthorizeRequest = { corpus: corpus.id, operation: 'index', sourceIds: [source.id], revision: source.revision };
    const grant = await this.authorizeSource(ask, context.subject, source.id, source.revision);
    signal.throwIfAborted();
    await this.ensureIndex(corpus);
    const digest = sha256(canonicalJson({ source, chunks: request.chunks, ...(request.ingestion ? { ingestion: request.ingestion } : {}) }));
    const receipt = (status: 'indexed' | 'unchanged'): RetrievalIndexReceipt => ({
      corpus: corpus.id,
      sourceId: source.id,
      revision: source.revision,
      documentSha256: digest,
      chunks: request.chunks.length,
      status,
      ...(request.ingestion ? { ingestion: request.ingestion } : {}),
    });
    const [existing] = await this.options.store.documents(corpus.id, grant.namespace, [source.id]);
    if (existing && existing.revision === source.revision) {
      if (existing.digest !== digest) throw new DriverError('SOURCE_CONFLICT', `Source ${source.id} is already indexed with other content at revision ${source.revision}.`);
      await this.recheck(ask, context.subject, grant);
      return receipt('unchanged');
    }
    const vectors = await this.embedAll(this.embedderOf(corpus), request.chunks.map((chunk) => chunk.text), ask, grant, context, signal);
    const chunks: IndexedChunk[] = request.chunks.map((chunk, ordinal) => ({
      chunkId: chunk.id,
      sourceId: source.id,
      revision: source.revision,
      ordinal,
      text: chunk.text,
      location: { ...source.location, ...chunk.location, documentId: source.id },
      vector: vectors[ordinal]!,
    }));
    const document: IndexedDocument = {
      sourceId: source.id,
      revision: source.revision,
      digest,
      source,
      ...(request.ingestion ? { ingestion: request.ingestion } : {}),
      chunks: chunks.length,
      bytes: chunks.reduce((sum, chunk) => sum + utf8Bytes(chunk.text), 0),
    };
    await this.recheck(ask, context.subject, grant);
    signal.throwIfAborted();
    await this.options.store.replace(corpus.id, grant.namespace, document, chunks, existing?.digest ?? null, context.subject);
    return receipt('indexed');
  }

  async search(options: RetrievalOptions & { query: string }, context: RetrievalCallContext | CallContext): Promise<RetrievalResult> {
    const signal = context.signal ?? new AbortController().signal;
    const corpus = this.corpus(options.corpus);
    const index = this.indexOf(corpus);
    const query = options.query.trim();
    if (query === '' || utf8Bytes(query) > MAX_CHUNK_BYTES) throw invalid(`The query must hold 1 to ${MAX_CHUNK_BYTES} bytes of text.`);
    const ask: AuthorizeRequest = { corpus: corpus.id, operation: 'search', ...(options.sourceIds ? { sourceIds: options.sourceIds } : {}) };
    const grant = await this.authorize(ask, context.subject);
    const scope = scopeOf(corpus.id, grant, options.sourceIds);
    if (Object.keys(scope.sources).length === 0) return { corpus: corpus.id, index, hits: [], truncated: false };
    await this.ensureIndex(corpus);
    signal.throwIfAborted();
    const limit = options.limit ?? DEFAULT_LIMIT;
    const ranked = await this.rank(corpus, scope, query, candidates(limit), context, signal);
    context.onProgress?.();
    const budget = options.maxContextBytes ?? DEFAULT_MAX_CONTEXT_BYTES;
    const minScore = options.minScore ?? -1;
    const picked: { match: ChunkMatch; score: number }[] = [];
    let used = 0;
    let truncated = false;
    for (const candidate of ranked) {
      if (candidate.score < minScore) continue;
      if (!(candidate.match.chunk.sourceId in scope.sources) || scope.sources[candidate.match.chunk.sourceId] !== candidate.match.chunk.revision) {
        throw invalid('The index answered a passage outside the authorized scope.');
      }
      if (picked.length === limit) {
        truncated = true;
        break;
      }
      const bytes = utf8Bytes(candidate.match.chunk.text);
      // Whole passages only: one that does not fit is dropped, a later smaller one may still fit.
      if (used + bytes > budget) {
        truncated = true;
        continue;
      }
      used += bytes;
      picked.push(candidate);
    }
    const hits = await this.confirm(corpus.id, grant, picked, ask, context.subject);
    return { corpus: corpus.id, index, hits, truncated };
  }

  /** The evidence of an earlier search: same index, still authorized, sources unchanged. */
  async revalidate(result: RetrievalResult, context: RetrievalCallContext | CallContext): Promise<void> {
    const corpus = this.corpus(result.corpus);
    if (canonicalJson(this.indexOf(corpus)) !== canonicalJson(result.index)) throw notFound();
    if (result.hits.length === 0) return;
    const sourceIds = [...new Set(result.hits.map((hit) => hit.source.id))];
    const ask: AuthorizeRequest = { corpus: corpus.id, operation: 'search', sourceIds };
    const grant = await this.authorize(ask, context.subject);
    const documents = new Map((await this.options.store.documents(corpus.id, grant.namespace, sourceIds)).map((document) => [document.sourceId, document]));
    for (const hit of result.hits) {
      const document = documents.get(hit.source.id);
      if (grant.sources[hit.source.id] !== hit.source.revision || !document || document.revision !== hit.source.revision || document.digest !== hit.documentSha256) {
        throw notFound();
      }
    }
    await this.recheck(ask, context.subject, grant);
  }

  async delete(request: RetrievalDeleteRequest, context: CallContext): Promise<RetrievalDeleteResult> {
    const corpus = this.corpus(request.corpus);
    const ask: AuthorizeRequest = { corpus: corpus.id, operation: 'delete', sourceIds: [request.sourceId], revision: request.revision };
    const grant = await this.authorizeSource(ask, context.subject, request.sourceId, request.revision);
    await this.ensureIndex(corpus);
    await this.recheck(ask, context.subject, grant);
    const deleted = await this.options.store.delete(corpus.id, grant.namespace, request.sourceId, request.revision);
    return { corpus: corpus.id, sourceId: request.sourceId, revision: request.revision, deleted };
  }

  /** Extract and chunk one document, then index it with its manifest; authorized before any parsing. */
  async ingest(request: IngestRequest, context: CallContext): Promise<IngestResult> {
    const prepare = this.options.prepare;
    if (!prepare) throw new DriverError('RETRIEVAL_UNAVAILABLE', 'This host does not offer document ingestion.');
    const corpus = this.corpus(request.corpus);
    const { source } = request.document;
    await this.authorizeSource({ corpus: corpus.id, operation: 'index', sourceIds: [source.id], revision: source.revision }, context.subject, source.id, source.revision);
    if (request.document.type === 'pdf' && !this.ingestsPdf) throw new DriverError('PDF_EXTRACTOR_REQUIRED', 'This host does not ingest PDF documents.');
    const idleMs = [request.idleTimeoutMs, this.options.idleTimeoutMs].filter((value): value is number => value !== undefined && value > 0);
    const controller = new AbortController();
    const outer = context.signal;
    const onOuterAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      if (idleMs.length === 0 || controller.signal.aborted) return;
      clearTimeout(timer);
      const ms = Math.min(...idleMs);
      timer = setTimeout(() => controller.abort(new DriverError('IDLE_TIMEOUT', `Ingestion made no progress for ${ms} ms.`, { retryable: true })), ms);
    };
    touch();
    try {
      const prepared = await abortable(prepare(request, { signal: controller.signal, onProgress: touch, subject: context.subject }), controller.signal);
      touch();
      const receipt = await abortable(
        this.index({ corpus: corpus.id, source: prepared.source, chunks: prepared.chunks, ingestion: prepared.ingestion }, { ...context, signal: controller.signal, onProgress: touch }),
        controller.signal,
      );
      return { ...receipt, ingestion: prepared.ingestion };
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    }
  }

  /** Closes the corpora's embedders (their HTTP connections). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.corpora.values()].map((corpus) => (corpus.embedding as { close?: () => Promise<void> } | undefined)?.close?.()));
  }

  private corpus(id: string): CorpusDefinition {
    const corpus = this.corpora.get(id);
    if (!corpus) throw notFound();
    return corpus;
  }

  private async ensureIndex(corpus: CorpusDefinition): Promise<void> {
    await this.options.store.ensureIndex({ corpus: corpus.id, descriptor: canonicalJson(this.indexOf(corpus)) });
  }

  /** Config corpora: the namespace from config; every indexed source at its current revision (index/delete: the one written). */
  private async defaultGrant(request: AuthorizeRequest, context: { subject: string }): Promise<SourceGrant | null> {
    const corpus = this.corpora.get(request.corpus);
    if (!corpus) return null;
    const namespace = corpus.namespace === 'subject' ? `subject:${context.subject}` : 'shared';
    if (request.operation !== 'search') {
      return { namespace, sources: Object.fromEntries((request.sourceIds ?? []).map((id) => [id, request.revision!])) };
    }
    const documents = await this.options.store.documents(request.corpus, namespace, request.sourceIds);
    return { namespace, sources: Object.fromEntries(documents.slice(0, MAX_SOURCES).map((document) => [document.sourceId, document.revision])) };
  }

  private async authorize(request: AuthorizeRequest, subject: string): Promise<SourceGrant> {
    let grant: SourceGrant | null;
    try {
      grant = await this.authorizer(structuredClone(request), { subject });
    } catch {
      throw notFound();
    }
    if (!grant || typeof grant.namespace !== 'string' || grant.namespace === '' || grant.sources === null || typeof grant.sources !== 'object') throw notFound();
    if (Object.keys(grant.sources).length > MAX_SOURCES) throw notFound();
    for (const id of request.sourceIds ?? []) if (typeof grant.sources[id] !== 'string') throw notFound();
    return { namespace: grant.namespace, sources: { ...grant.sources } };
  }

  /** index/delete: the one source must be granted at exactly the revision written. */
  private async authorizeSource(request: AuthorizeRequest, subject: string, sourceId: string, revision: string): Promise<SourceGrant> {
    const grant = await this.authorize(request, subject);
    if (grant.sources[sourceId] !== revision) throw notFound();
    return grant;
  }

  /** After a read: the same namespace, and every source of the first grant still at its revision. */
  private async recheck(request: AuthorizeRequest, subject: string, before: SourceGrant, only?: string[]): Promise<void> {
    const now = await this.authorize(request, subject);
    if (now.namespace !== before.namespace) throw notFound();
    for (const id of only ?? Object.keys(before.sources)) if (now.sources[id] !== before.sources[id]) throw notFound();
  }

  private embedderOf(corpus: CorpusDefinition): EmbeddingAdapter {
    return corpus.embedding ?? this.builtin;
  }

  private async rank(corpus: CorpusDefinition, scope: RetrievalScope, query: string, depth: number, context: RetrievalCallContext | CallContext, signal: AbortSignal) {
    const ranking = rankingOf(corpus);
    const lexical = ranking === 'cosine' ? [] : await this.options.store.searchLexical(scope, query, depth, signal);
    if (ranking === 'bm25') return lexical.map((match) => ({ match, score: clamp(match.score) }));
    const [vector] = await this.embed(this.embedderOf(corpus), [query], 'query', context, signal);
    const semantic = await this.options.store.searchVector(scope, vector!, depth, signal);
    if (ranking === 'cosine') return semantic.map((match) => ({ match, score: clamp(match.score) }));
    return hybridFusion(lexical, semantic).map(({ match, score }) => ({ match, score: clamp(score) }));
  }

  /** Re-reads the documents behind the hits and re-authorizes: revoked or changed → CONTEXT_NOT_FOUND. */
  private async confirm(corpus: string, grant: SourceGrant, picked: { match: ChunkMatch; score: number }[], ask: AuthorizeRequest, subject: string): Promise<Hit[]> {
    if (picked.length === 0) return [];
    const sourceIds = [...new Set(picked.map(({ match }) => match.chunk.sourceId))];
    const documents = new Map((await this.options.store.documents(corpus, grant.namespace, sourceIds)).map((document) => [document.sourceId, document]));
    await this.recheck(ask, subject, grant, sourceIds);
    return picked.map(({ match, score }) => {
      const document = documents.get(match.chunk.sourceId);
      if (!document || document.revision !== match.chunk.revision || document.digest !== match.document.digest) throw notFound();
      const { id, revision, title, uri } = document.source;
      return {
        chunkId: match.chunk.chunkId,
        source: { id, revision, ...(title !== undefined ? { title } : {}), ...(uri !== undefined ? { uri } : {}), location: { ...match.chunk.location, documentId: id } },
        text: match.chunk.text,
        score,
        documentSha256: document.digest,
        ...(document.ingestion ? { ingestion: document.ingestion } : {}),
      };
    });
  }

  /** Batches of at most maxTexts texts and maxBytes bytes; authorization re-checked before each. */
  private async embedAll(adapter: EmbeddingAdapter, texts: string[], ask: AuthorizeRequest, grant: SourceGrant, context: CallContext, signal: AbortSignal): Promise<Float32Array[]> {
    const batches: string[][] = [];
    let current: string[] = [];
    let bytes = 0;
    for (const text of texts) {
      const size = utf8Bytes(text);
      if (size > this.batch.maxBytes) throw invalid(`A chunk is larger than the ${this.batch.maxBytes}-byte embedding batch.`);
      if (current.length === this.batch.maxTexts || bytes + size > this.batch.maxBytes) {
        batches.push(current);
        current = [];
        bytes = 0;
      }
      current.push(text);
      bytes += size;
    }
    if (current.length > 0) batches.push(current);
    const vectors: Float32Array[] = [];
    for (const batch of batches) {
      await this.recheck(ask, context.subject, grant);
      vectors.push(...(await this.embed(adapter, batch, 'index', context, signal)));
      context.onProgress?.();
    }
    return vectors;
  }

  /** One vendor call, checked and normalised, with its own usage record. */
  private async embed(adapter: EmbeddingAdapter, texts: string[], purpose: 'index' | 'query', context: RetrievalCallContext | CallContext, signal: AbortSignal): Promise<Float32Array[]> {
    signal.throwIfAborted();
    const started = Date.now();
    let status: UsageRecord['status'] = 'completed';
    let errorCode: string | undefined;
    let inputTokens: number | undefined;
    try {
      const answer = await abortable(adapter.embed(texts, signal), signal);
      inputTokens = answer.usage?.inputTokens;
      if (!Array.isArray(answer.vectors) || answer.vectors.length !== texts.length) throw new DriverError('INVALID_EMBEDDING', 'The embedder returned the wrong number of vectors.');
      return answer.vectors.map((vector) => unitVector(vector, adapter.identity.dimensions));
    } catch (error) {
      status = signal.aborted ? 'cancelled' : 'failed';
      errorCode = error instanceof DriverError ? error.code : 'EMBEDDING_FAILED';
      if (error instanceof DriverError || signal.aborted) throw error;
      throw new DriverError('EMBEDDING_FAILED', 'The embedding call failed.');
    } finally {
      if (adapter !== this.builtin) await this.meter(adapter, purpose, context, { started, status, errorCode, inputTokens });
    }
  }

  private async meter(
    adapter: EmbeddingAdapter,
    purpose: 'index' | 'query',
    context: RetrievalCallContext | CallContext,
    call: { started: number; status: UsageRecord['status']; errorCode: string | undefined; inputTokens: number | undefined },
  ): Promise<void> {
    const usage = this.options.usage;
    if (!usage) return;
    const id = randomUUID();
    const finished = Date.now();
    const tokens = call.inputTokens !== undefined && Number.isSafeInteger(call.inputTokens) && call.inputTokens >= 0 ? { inputTokens: call.inputTokens } : undefined;
    const record: UsageRecord = {
      schema: USAGE_RECORD_SCHEMA,
      recordId: id,
      hostId: usage.hostId,
      runId: id,
      subject: context.subject,
      ...('tokenId' in context && context.tokenId !== undefined ? { tokenId: context.tokenId } : {}),
      provider: adapter.identity.providerId,
      vendor: adapter.identity.vendor,
      model: adapter.identity.model,
      authMode: adapter.identity.authMode,
      source: 'provider-reported',
      status: call.status,
      ...(call.errorCode ? { errorCode: call.errorCode } : {}),
      startedAt: new Date(call.started).toISOString(),
      finishedAt: new Date(finished).toISOString(),
      durationMs: Math.max(0, finished - call.started),
      steps: 1,
      ...(tokens ? { usage: tokens } : {}),
      observedUsage: tokens ?? {},
      coverage: { startedSteps: 1, completedSteps: call.status === 'completed' ? 1 : 0, reportedSteps: tokens && call.status === 'completed' ? 1 : 0 },
      ...(usage.labels ? { labels: { ...usage.labels } } : {}),
      operation: 'embedding',
      purpose,
      ...(context.runId !== undefined ? { parentRunId: context.runId } : {}),
    };
    // A metering failure never changes the call's outcome.
    await usage.record(record).catch(() => undefined);
  }
}

/** A configured embedder's ranking is fused with the lexical one (hybrid); the built-in one's is not ranked by. */
export function rankingOf(corpus: { embedding?: unknown }): Ranking {
  return corpus.embedding ? 'hybrid' : 'bm25';
}

function scopeOf(corpus: string, grant: SourceGrant, selected: string[] | undefined): RetrievalScope {
  const sources = selected ? Object.fromEntries(selected.map((id) => [id, grant.sources[id]!])) : grant.sources;
  return { corpus, namespace: grant.namespace, sources };
}

const clamp = (score: number) => (Number.isFinite(score) ? Math.max(-1, Math.min(1, score)) : -1);

/** Checks the dimensions and finiteness, refuses an all-zero vector, then scales to unit length. */
export function unitVector(vector: Float32Array, dimensions: number): Float32Array {
  if (!(vector instanceof Float32Array) || vector.length !== dimensions) throw new DriverError('INVALID_EMBEDDING', 'The embedder returned a vector of the wrong size.');
  let max = 0;
  for (const value of vector) {
    if (!Number.isFinite(value)) throw new DriverError('INVALID_EMBEDDING', 'The embedder returned a non-finite value.');
    max = Math.max(max, Math.abs(value));
  }
  if (max === 0) throw new DriverError('INVALID_EMBEDDING', 'The embedder returned a zero vector.');
  const scaled = Float32Array.from(vector, (value) => value / max);
  const norm = Math.sqrt(scaled.reduce((sum, value) => sum + value * value, 0));
  return Float32Array.from(scaled, (value) => value / norm);
}

/** Bounds the schema leaves to code: text sizes, ids, locations and the ingestion manifest's counts. */
function validateIndexRequest(request: RetrievalIndexRequest): void {
  const ids = new Set<string>();
  let total = 0;
  for (const [index, chunk] of request.chunks.entries()) {
    if (ids.has(chunk.id)) throw invalid(`Chunk id ${chunk.id} is used twice.`);
    ids.add(chunk.id);
    const bytes = utf8Bytes(chunk.text);
    if (!/\S/.test(chunk.text)) throw invalid(`chunks[${index}] holds no text.`);
    if (bytes > MAX_CHUNK_BYTES) throw invalid(`chunks[${index}] is larger than ${MAX_CHUNK_BYTES} bytes.`);
    if (chunk.text.includes('\uFFFD') || chunk.text.includes('\0')) throw invalid(`chunks[${index}] is not clean UTF-8 text.`);
    total += bytes;
    const location = { ...request.source.location, ...chunk.location };
    if (chunk.location?.documentId !== undefined && chunk.location.documentId !== request.source.id) throw invalid(`chunks[${index}].location.documentId is not the source.`);
    if (location.pageEnd !== undefined && (location.page === undefined || location.pageEnd < location.page)) throw invalid(`chunks[${index}] has pageEnd before page.`);
    if (location.endLine !== undefined && (location.startLine === undefined || location.endLine < location.startLine)) throw invalid(`chunks[${index}] has endLine before startLine.`);
  }
  if (total > MAX_DOCUMENT_BYTES) throw invalid(`The chunks hold more than ${MAX_DOCUMENT_BYTES} bytes of text.`);
  const manifest = request.ingestion;
  if (manifest) {
    if (manifest.chunks !== request.chunks.length) throw invalid('The ingestion manifest counts another number of chunks.');
    if (manifest.indexedTextBytes !== total) throw invalid('The ingestion manifest counts another number of indexed bytes.');
    if (request.chunks.some((chunk) => utf8Bytes(chunk.text) > manifest.chunker.maxBytes)) throw invalid('A chunk is larger than the ingestion manifest\'s chunker allows.');
  }
}
