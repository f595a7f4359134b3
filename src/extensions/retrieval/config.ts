/** The `retrieval` section of the host config (docs/retrieval.md), and the token grant of corpora per operation. */
import { Type, type Static } from '@sinclair/typebox';
import { DriverError } from '../../protocol/errors.js';
import { OpaqueKey } from '../../protocol/schemas.js';
import { EmbeddingConfig } from '../../providers/embeddings/index.js';

const strict = { additionalProperties: false } as const;

const CorpusIds = Type.Array(OpaqueKey, { maxItems: 1000, uniqueItems: true });
/** Corpora a token may search, index (and ingest into) and delete from; omitted = none. */
export const RetrievalGrant = Type.Object({ search: Type.Optional(CorpusIds), index: Type.Optional(CorpusIds), delete: Type.Optional(CorpusIds) }, strict);
export type RetrievalGrant = Static<typeof RetrievalGrant>;

const RetrievalCorpus = Type.Object(
  {
    id: OpaqueKey,
    /** `shared`: one namespace for every subject (default); `subject`: each subject sees only what it indexed. */
    namespace: Type.Optional(Type.Union([Type.Literal('shared'), Type.Literal('subject')])),
    /** An embedding provider: exact cosine search fused with the lexical ranking (metric rrf). */
    embedding: Type.Optional(EmbeddingConfig),
  },
  strict,
);

export const RetrievalConfig = Type.Object(
  {
    corpora: Type.Array(RetrievalCorpus, { minItems: 1, maxItems: 1000 }),
    /** Ingestion chunk size in bytes (default 2048). */
    chunkBytes: Type.Optional(Type.Integer({ minimum: 128, maximum: 16_384 })),
    /** Index capacity across every corpus (default 20,000 chunks / 128 MiB). */
    capacity: Type.Optional(
      Type.Object({ maxChunks: Type.Integer({ minimum: 1, maximum: 1_000_000 }), maxBytes: Type.Integer({ minimum: 1024, maximum: 1_073_741_824 }) }, strict),
    ),
    /** Whether PDF documents may be ingested (default true). */
    pdf: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type RetrievalConfig = Static<typeof RetrievalConfig>;

export function checkRetrievalConfig(retrieval: RetrievalConfig): void {
  const ids = new Set<string>();
  for (const corpus of retrieval.corpora) {
    if (ids.has(corpus.id)) throw new DriverError('INVALID_CONFIG', `Retrieval corpus ${corpus.id} is configured twice.`);
    ids.add(corpus.id);
  }
}
