/**
 * Scoped retrieval (features `scoped-retrieval`, `retrieval-indexing`, `document-ingestion`,
 * `pdf-ingestion`): search, index, delete and ingest, over the store's index, for the corpora
 * of config section `retrieval`; and the runtime's `retrieval` run option. Each call takes an
 * admission slot like a run (the endpoint table says so); a token's `retrieval` grant lists the
 * corpora it may search, index (and ingest into) and delete from.
 */
import type { IngestRequest, RetrievalDeleteRequest, RetrievalIndexRequest, RetrievalSearch } from '../../protocol/schemas.js';
import { createEmbeddingAdapter } from '../../providers/embeddings/index.js';
import { readSecret } from '../../shared/secrets.js';
import { defineExtension } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import type { FastifyRequest } from 'fastify';
import { checkRetrievalConfig, RetrievalConfig, RetrievalGrant, retrievalCapacity } from './config.js';
import { ingestionPolicy, prepareValidDocument } from './ingestion/index.js';
import { RetrievalService, type CallContext } from './service.js';
import type { SourceAuthorizer } from './types.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Scoped retrieval; a replayed run re-checks its recorded evidence. */
    retrieval: RetrievalService;
  }
  interface ExtensionOptions {
    /** Which sources of a configured corpus a subject may see (default: the corpus's config namespace). */
    authorizeRetrieval?: SourceAuthorizer;
  }
}

/**
 * An ingest body may carry a whole document (a PDF of up to 8 MiB is 11.2 MB of base64), so its
 * route takes more than the host's general body limit; every other route keeps that one.
 */
export const INGEST_BODY_BYTES = 12 * 1024 * 1024;

export const retrievalExtension = defineExtension({
  id: 'retrieval',
  features: ['scoped-retrieval', 'retrieval-indexing', 'document-ingestion', 'pdf-ingestion'],
  configSchema: RetrievalConfig,
  checkConfig: checkRetrievalConfig,
  storeOptions: (config, host) => ({ retrievalCapacity: retrievalCapacity(config, host.tokens) }),
  grants: {
    retrieval: {
      schema: RetrievalGrant,
      principal: (grant: RetrievalGrant) => ({ 'retrieval.search': grant.search ?? [], 'retrieval.index': grant.index ?? [], 'retrieval.delete': grant.delete ?? [] }),
    },
  },
  create({ config, host, options, store, env, services }) {
    // A store without a retrieval index (an in-process one of an application) offers no retrieval.
    if (!(store as Partial<typeof store>).retrieval) return undefined;
    const policy = ingestionPolicy({
      ...(config.chunkBytes !== undefined ? { maxChunkBytes: config.chunkBytes } : {}),
      ...(config.ingestion?.timeoutMs !== undefined ? { extractionTimeoutMs: config.ingestion.timeoutMs } : {}),
      ...(config.ingestion?.maxDecodedBytes !== undefined ? { maxDecodedBytes: config.ingestion.maxDecodedBytes } : {}),
    });
    const retrieval = new RetrievalService({
      // The route has checked the body against the IngestRequest schema.
      prepare: (request, { signal, onProgress, subject }) => prepareValidDocument(request, policy, { signal, onProgress, subject }),
      store: store.retrieval,
      corpora: config.corpora.map((corpus) => ({
        id: corpus.id,
        ...(corpus.namespace ? { namespace: corpus.namespace } : {}),
        ...(corpus.embedding ? { embedding: createEmbeddingAdapter(corpus.embedding, { readSecret: (ref) => readSecret(ref, host.configDir, env) }, host.configDir) } : {}),
      })),
      ...(options.authorizeRetrieval ? { authorize: options.authorizeRetrieval } : {}),
      pdf: config.pdf !== false,
      ...(host.limits.idleTimeoutMs ? { idleTimeoutMs: host.limits.idleTimeoutMs } : {}),
      ...(services.usage ? { usage: services.usage.recorder } : {}),
    });
    /** The call's context: who asks, under the signal of its admission slot. */
    const call = (request: FastifyRequest): CallContext => ({ subject: request.principal.subject, tokenId: request.principal.tokenId, signal: request.slot!.controller.signal });
    return {
      services: { retrieval },
      run: { retrieval },
      features: ['scoped-retrieval', 'retrieval-indexing', ...(retrieval.ingests ? (['document-ingestion'] as const) : []), ...(retrieval.ingestsPdf ? (['pdf-ingestion'] as const) : [])],
      routes: async (app) => {
        app.route<{ Body: RetrievalSearch }>({ ...routeOf('searchRetrieval'), handler: async (request) => retrieval.search(request.body, call(request)) });
        app.route<{ Body: RetrievalIndexRequest }>({ ...routeOf('indexSource'), handler: async (request) => retrieval.index(request.body, call(request)) });
        app.route<{ Body: RetrievalDeleteRequest }>({ ...routeOf('deleteSource'), handler: async (request) => retrieval.delete(request.body, call(request)) });
        if (retrieval.ingests) {
          app.route<{ Body: IngestRequest }>({
            ...routeOf('ingestDocument'),
            bodyLimit: Math.max(INGEST_BODY_BYTES, app.initialConfig.bodyLimit ?? 0),
            handler: async (request) => retrieval.ingest(request.body, call(request)),
          });
        }
      },
      close: () => retrieval.close(),
    };
  },
});
