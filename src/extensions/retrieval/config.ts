/** The `retrieval` section of the host config (docs/retrieval.md), and the token grant of corpora per operation. */
import { Type, type Static } from '@sinclair/typebox';
import { DriverError } from '../../protocol/errors.js';
import { OpaqueKey } from '../../protocol/schemas.js';
import { EmbeddingConfig } from '../../providers/embeddings/embedding.js';
import type { TokenEntry } from '../../http/access.js';
import { DEFAULT_RETRIEVAL_CAPACITY, type RetrievalCapacity } from '../../store/retrieval-capacity.js';

const strict = { additionalProperties: false } as const;

const CorpusIds = Type.Array(OpaqueKey, { maxItems: 1000, uniqueItems: true });
/** Corpora a token may search, index (and ingest into) and delete from; omitted = none. */
export const RetrievalGrant = Type.Object({ search: Type.Optional(CorpusIds), index: Type.Optional(CorpusIds), delete: Type.Optional(CorpusIds) }, strict);
export type RetrievalGrant = Static<typeof RetrievalGrant>;

/** A bound of the retrieval index: chunks and stored bytes (chunk text + vectors). */
const IndexBound = Type.Object({ maxChunks: Type.Integer({ minimum: 1, maximum: 1_000_000 }), maxBytes: Type.Integer({ minimum: 1024, maximum: 1_073_741_824 }) }, strict);

const RetrievalCorpus = Type.Object(
  {
    id: OpaqueKey,
    /** `shared`: one namespace for every subject (default); `subject`: each subject sees only what it indexed. */
    namespace: Type.Optional(Type.Union([Type.Literal('shared'), Type.Literal('subject')])),
    /** An embedder (a local model or a service): exact cosine fused with BM25 (ranking hybrid). */
    embedding: Type.Optional(EmbeddingConfig),
    /** This corpus's share of the index capacity (default: none but the whole capacity). */
    capacity: Type.Optional(IndexBound),
  },
  strict,
);

export const RetrievalConfig = Type.Object(
  {
    corpora: Type.Array(RetrievalCorpus, { minItems: 1, maxItems: 1000 }),
    /** Ingestion chunk size in bytes (default 2048). */
    chunkBytes: Type.Optional(Type.Integer({ minimum: 128, maximum: 16_384 })),
    /**
     * Index capacity across every corpus (default 20,000 chunks / 128 MiB), and what the sources
     * one subject indexed may hold of it (`perSubject`; default: an equal split between the
     * subjects whose tokens may index).
     */
    capacity: Type.Optional(
      Type.Object(
        {
          maxChunks: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
          maxBytes: Type.Integer({ minimum: 1024, maximum: 1_073_741_824 }),
          perSubject: Type.Optional(IndexBound),
        },
        strict,
      ),
    ),
    /** Bounds of document extraction (see docs/ingestion.md). */
    ingestion: Type.Optional(
      Type.Object(
        {
          /** Time one document's extraction may take in its worker thread (default 60,000 ms). */
          timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
          /** Bytes a PDF's streams may decode to, all together (default 128 MiB). */
          maxDecodedBytes: Type.Optional(Type.Integer({ minimum: 1_048_576, maximum: 1_073_741_824 })),
        },
        strict,
      ),
    ),
    /** Whether PDF documents may be ingested (default true). */
    pdf: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type RetrievalConfig = Static<typeof RetrievalConfig>;

/**
 * The index capacity from config: the whole, each corpus's share, and each subject's share —
 * by default an equal split between the subjects whose tokens may index, so that no one subject
 * can fill the index for the others.
 */
export function retrievalCapacity(settings: RetrievalConfig, tokens: readonly TokenEntry[]): RetrievalCapacity {
  const whole = settings.capacity ? { maxChunks: settings.capacity.maxChunks, maxBytes: settings.capacity.maxBytes } : { ...DEFAULT_RETRIEVAL_CAPACITY };
  const indexers = new Set(tokens.filter((token) => ((token.retrieval as RetrievalGrant | undefined)?.index?.length ?? 0) > 0).map((token) => token.subject)).size;
  const perSubject =
    settings.capacity?.perSubject ??
    (indexers > 1 ? { maxChunks: Math.max(1, Math.floor(whole.maxChunks / indexers)), maxBytes: Math.floor(whole.maxBytes / indexers) } : undefined);
  const perCorpus = Object.fromEntries(settings.corpora.flatMap((corpus) => (corpus.capacity ? [[corpus.id, corpus.capacity]] : [])));
  return { ...whole, ...(perSubject ? { perSubject } : {}), ...(Object.keys(perCorpus).length > 0 ? { perCorpus } : {}) };
}

export function checkRetrievalConfig(retrieval: RetrievalConfig): void {
  const ids = new Set<string>();
  for (const corpus of retrieval.corpora) {
    if (ids.has(corpus.id)) throw new DriverError('INVALID_CONFIG', `Retrieval corpus ${corpus.id} is configured twice.`);
    ids.add(corpus.id);
  }
}
