/** What the retrieval service is built from: corpora, their embedders and the source authorizer. */

import type { EmbeddingAdapter } from '../../providers/embeddings/index.js';

export type { EmbeddingAdapter, EmbeddingIdentity } from '../../providers/embeddings/index.js';

export type RetrievalOperation = 'search' | 'index' | 'delete';

export interface AuthorizeRequest {
  corpus: string;
  operation: RetrievalOperation;
  /** The sources the call selects (index/delete: exactly the one written). */
  sourceIds?: string[];
  /** index/delete: the revision being written or deleted. */
  revision?: string;
}

/** Which sources of a corpus a subject may see, at which exact revisions, in which namespace. */
export interface SourceGrant {
  namespace: string;
  sources: Record<string, string>;
}

/**
 * The application's decision for one call: null denies (CONTEXT_NOT_FOUND, indistinguishable from
 * an unknown corpus). Asked before any read, after every read and before anything is returned.
 */
export type SourceAuthorizer = (request: AuthorizeRequest, context: { subject: string }) => SourceGrant | null | Promise<SourceGrant | null>;

export interface CorpusDefinition {
  id: string;
  embedding?: EmbeddingAdapter;
  /** Default authorizer only: `shared` (one namespace for everyone) or `subject` (one per subject). Default `shared`. */
  namespace?: 'shared' | 'subject';
}
