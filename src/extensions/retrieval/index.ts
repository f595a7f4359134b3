/**
 * Scoped retrieval (features `scoped-retrieval`, `retrieval-indexing`, `document-ingestion`,
 * `pdf-ingestion`): search, index, delete and ingest, over the store's index, for the corpora
 * of config section `retrieval`; and the runtime's `retrieval` run option. Each call takes an
 * admission slot like a run (the endpoint table says so); a token's `retrieval` grant lists the
 * corpora it may search, index (and ingest into) and delete from.
 */
import { defineExtension } from '../../http/extension.js';
import { checkRetrievalConfig, RetrievalConfig, RetrievalGrant, retrievalCapacity } from './config.js';
import type { RetrievalService } from './service.js';
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
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
