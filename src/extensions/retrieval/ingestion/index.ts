/** Document extraction and chunking for retrieval ingestion (no store, no HTTP). */
export { DEFAULT_INGESTION_POLICY, ingestionPolicy, type IngestionPolicy } from './policy.js';
export { prepareDocument, prepareValidDocument } from './prepare.js';
export { CHUNKER_ID, chunkId } from './chunker.js';
export type { IngestionProgress } from './abort.js';
export type { PreparedChunk, PreparedDocument, SourceLocation } from './types.js';
export { documentFromFile, INGESTIBLE_EXTENSIONS, sourceForFile, sourceIdForPath } from './files.js';
