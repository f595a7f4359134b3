/** The bounds of the retrieval index (kept apart from its table so the config can name the default without loading the store). */
export interface CapacityBound {
  maxChunks: number;
  /** Stored bytes: chunk text + vectors. */
  maxBytes: number;
}

/** `maxChunks` (default 20,000) and `maxBytes` (default 128 MiB) hold across all corpora and namespaces. */
export interface RetrievalCapacity extends CapacityBound {
  /** What the sources one subject indexed may hold, across corpora (RESOURCE_LIMIT past it). */
  perSubject?: CapacityBound;
  /** What one corpus may hold, by corpus id (INDEX_FULL past it). */
  perCorpus?: Record<string, CapacityBound>;
}

export const DEFAULT_RETRIEVAL_CAPACITY: RetrievalCapacity = { maxChunks: 20_000, maxBytes: 128 * 1024 * 1024 };
