import type { ContextSource, IngestionManifest } from '../../../protocol/schemas.js';

export type SourceLocation = NonNullable<ContextSource['location']>;

export interface PreparedChunk {
  id: string;
  text: string;
  location: SourceLocation;
}

/** What the retrieval service indexes for one ingested document. */
export interface PreparedDocument {
  source: ContextSource;
  chunks: PreparedChunk[];
  ingestion: IngestionManifest;
}

export type ExtractorIdentity = IngestionManifest['extractor'];
