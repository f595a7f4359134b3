/** Scoped retrieval: the run option, search results with provenance, indexing, deletion and document ingestion. */
import { Type, type Static } from '@sinclair/typebox';
import { EmbeddingModel, OpaqueKey, Sha256 } from './common.js';
import { ContextSource, SourceLocation } from './context.js';
import { Base64, open, strict } from './shape.js';

export const RetrievalOptions = Type.Object(
  {
    corpus: OpaqueKey,
    sourceIds: Type.Optional(Type.Array(OpaqueKey, { minItems: 1, maxItems: 1000, uniqueItems: true })),
    query: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384, pattern: '\\S' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
    maxContextBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 262_144 })),
    minScore: Type.Optional(Type.Number({ minimum: -1, maximum: 1 })),
  },
  strict,
);

const ExtractorIdentity = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128 }), version: Type.String({ minLength: 1, maxLength: 128 }) },
  strict,
);

export const IngestionManifest = Type.Object(
  {
    format: Type.Union([Type.Literal('text'), Type.Literal('markdown'), Type.Literal('pdf'), Type.Literal('email')]),
    inputSha256: Sha256,
    inputBytes: Type.Integer({ minimum: 1, maximum: 33_554_432 }),
    extractor: ExtractorIdentity,
    ocrExtractor: Type.Optional(ExtractorIdentity),
    chunker: Type.Object({ id: Type.Literal('source-lines-v1'), maxBytes: Type.Integer({ minimum: 128, maximum: 16_384 }) }, strict),
    extractedTextBytes: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
    indexedTextBytes: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
    chunks: Type.Integer({ minimum: 1, maximum: 256 }),
    pages: Type.Optional(
      Type.Object(
        {
          total: Type.Integer({ minimum: 1, maximum: 1000 }),
          ocr: Type.Array(Type.Integer({ minimum: 1, maximum: 1000 }), { maxItems: 1000 }),
          empty: Type.Array(Type.Integer({ minimum: 1, maximum: 1000 }), { maxItems: 1000 }),
        },
        strict,
      ),
    ),
    messages: Type.Optional(
      Type.Object({ total: Type.Integer({ minimum: 1, maximum: 1000 }), empty: Type.Integer({ minimum: 0, maximum: 1000 }) }, strict),
    ),
  },
  { ...strict, $id: 'IngestionManifest' },
);

export const RetrievalResult = Type.Object(
  {
    corpus: OpaqueKey,
    /**
     * The vector index the corpus keeps (every corpus has one: its configured embedder, or the
     * host's built-in one), as wire 1.0 defines it, plus `ranking`: how the hits were ranked and
     * scored. A 1.0 host that omits `ranking` ranks by cosine.
     */
    index: Type.Object(
      {
        providerId: OpaqueKey,
        vendor: OpaqueKey,
        /** A deployment label for the embedder's account, not a login. */
        accountId: OpaqueKey,
        authMode: Type.Union([Type.Literal('api-key'), Type.Literal('none')]),
        model: EmbeddingModel,
        dimensions: Type.Integer({ minimum: 1, maximum: 4096 }),
        /** The similarity of the stored vectors. */
        metric: Type.Literal('cosine'),
        version: OpaqueKey,
        /**
         * `cosine`: by the vectors alone; `bm25`: by BM25 alone; `hybrid`: both fused, the BM25
         * score plus the min-max scaled cosine, halved (docs/retrieval.md explains each score).
         */
        ranking: Type.Optional(Type.Union([Type.Literal('cosine'), Type.Literal('bm25'), Type.Literal('hybrid')])),
      },
      strict,
    ),
    hits: Type.Array(
      Type.Object(
        {
          chunkId: OpaqueKey,
          source: Type.Ref(ContextSource),
          text: Type.String({ minLength: 1, maxLength: 16_384 }),
          score: Type.Number({ minimum: -1, maximum: 1 }),
          documentSha256: Sha256,
          ingestion: Type.Optional(Type.Ref(IngestionManifest)),
        },
        strict,
      ),
      { maxItems: 16 },
    ),
    truncated: Type.Boolean(),
  },
  { ...strict, $id: 'RetrievalResult' },
);

export const RetrievalSearch = Type.Object(
  { ...RetrievalOptions.properties, query: Type.String({ minLength: 1, maxLength: 16_384, pattern: '\\S' }) },
  { ...strict, $id: 'RetrievalSearch' },
);

const ChunkText = Type.String({ minLength: 1, maxLength: 16_384 });

export const RetrievalIndexRequest = Type.Object(
  {
    corpus: OpaqueKey,
    source: Type.Ref(ContextSource),
    chunks: Type.Array(Type.Object({ id: OpaqueKey, text: ChunkText, location: Type.Optional(SourceLocation) }, strict), {
      minItems: 1,
      maxItems: 256,
    }),
    ingestion: Type.Optional(Type.Ref(IngestionManifest)),
  },
  { ...strict, $id: 'RetrievalIndexRequest' },
);

const receiptFields = {
  corpus: OpaqueKey,
  sourceId: OpaqueKey,
  revision: OpaqueKey,
  documentSha256: Sha256,
  chunks: Type.Integer({ minimum: 1, maximum: 256 }),
  /** `unchanged`: the same content at the same revision was already indexed; nothing was embedded. */
  status: Type.Union([Type.Literal('indexed'), Type.Literal('unchanged')]),
};

export const RetrievalIndexReceipt = Type.Object(
  { ...receiptFields, ingestion: Type.Optional(Type.Ref(IngestionManifest)) },
  { ...open, $id: 'RetrievalIndexReceipt' },
);

export const RetrievalDeleteRequest = Type.Object({ corpus: OpaqueKey, sourceId: OpaqueKey, revision: OpaqueKey }, { ...strict, $id: 'RetrievalDeleteRequest' });

export const RetrievalDeleteResult = Type.Object(
  { corpus: OpaqueKey, sourceId: OpaqueKey, revision: OpaqueKey, deleted: Type.Boolean() },
  { ...open, $id: 'RetrievalDeleteResult' },
);

const IngestText = Type.String({ minLength: 1, maxLength: 1_048_576 });

export const IngestDocument = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('text'),
        source: Type.Ref(ContextSource),
        mediaType: Type.Union([Type.Literal('text/plain'), Type.Literal('text/markdown')]),
        text: IngestText,
      },
      strict,
    ),
    Type.Object(
      { type: Type.Literal('pdf'), source: Type.Ref(ContextSource), mediaType: Type.Literal('application/pdf'), data: Base64(44_739_244) },
      strict,
    ),
    Type.Object(
      {
        type: Type.Literal('email'),
        source: Type.Ref(ContextSource),
        threadId: OpaqueKey,
        messages: Type.Array(Type.Object({ id: OpaqueKey, text: Type.String({ maxLength: 1_048_576 }) }, strict), { minItems: 1, maxItems: 1000 }),
      },
      strict,
    ),
  ],
  { $id: 'IngestDocument' },
);

export const IngestRequest = Type.Object(
  {
    corpus: OpaqueKey,
    document: Type.Ref(IngestDocument),
    /** Can only lower the host's chunk size. */
    chunking: Type.Optional(Type.Object({ maxBytes: Type.Integer({ minimum: 128, maximum: 16_384 }) }, strict)),
    idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  },
  { ...strict, $id: 'IngestRequest' },
);

export const IngestResult = Type.Object({ ...receiptFields, ingestion: Type.Ref(IngestionManifest) }, { ...open, $id: 'IngestResult' });

export type RetrievalOptions = Static<typeof RetrievalOptions>;
export type IngestionManifest = Static<typeof IngestionManifest>;
export type RetrievalResult = Static<typeof RetrievalResult>;
export type RetrievalSearch = Static<typeof RetrievalSearch>;
export type RetrievalIndexRequest = Static<typeof RetrievalIndexRequest>;
export type RetrievalIndexReceipt = Static<typeof RetrievalIndexReceipt>;
export type RetrievalDeleteRequest = Static<typeof RetrievalDeleteRequest>;
export type RetrievalDeleteResult = Static<typeof RetrievalDeleteResult>;
export type IngestDocument = Static<typeof IngestDocument>;
export type IngestRequest = Static<typeof IngestRequest>;
export type IngestResult = Static<typeof IngestResult>;
