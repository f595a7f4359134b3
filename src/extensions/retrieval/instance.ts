/** Scoped retrieval, started: the retrieval service over the store's index, its corpora's embedders, and its endpoints. */
import type { FastifyRequest } from 'fastify';
import type { IngestRequest, RetrievalDeleteRequest, RetrievalIndexRequest, RetrievalSearch } from '../../protocol/schemas.js';
import { createEmbeddingAdapter } from '../../providers/embeddings/index.js';
import { readSecret } from '../../shared/secrets.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import type { RetrievalConfig } from './config.js';
import { ingestionPolicy, prepareValidDocument } from './ingestion/index.js';
import { RetrievalService, type CallContext } from './service.js';

/**
 * An ingest body may carry a whole document (a PDF of up to 8 MiB is 11.2 MB of base64), so its
 * route takes more than the host's general body limit; every other route keeps that one.
 */
export const INGEST_BODY_BYTES = 12 * 1024 * 1024;

export function create({ config, host, options, store, env, services }: ExtensionDeps<RetrievalConfig>): ExtensionInstance | undefined {
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
}
