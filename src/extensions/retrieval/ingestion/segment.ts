import type { SourceLocation } from './types.js';

/**
 * A stretch of extracted text the chunker never crosses: a page, a Markdown section, an email
 * message, or the whole of a plain text.
 */
export interface Segment {
  /** Where the segment is (page, section, message); the chunker adds the line range. */
  location: SourceLocation;
  /** LF-separated text. */
  text: string;
  /** The document line number of the segment's first line (1-based). */
  firstLine: number;
}
