/**
 * Chunker `source-lines-v1`: whole lines packed up to `maxBytes` UTF-8 bytes, never across a
 * segment; a line longer than that is cut at code-point boundaries into several chunks that
 * share its line number. Blank chunks are skipped. Ids are content hashes, so the same input
 * always gives the same chunks.
 */
import { createHash } from 'node:crypto';
import { DriverError } from '../../../protocol/errors.js';
import { throwIfAborted, type IngestionProgress } from './abort.js';
import type { Segment } from './segment.js';
import type { PreparedChunk, SourceLocation } from './types.js';

export const CHUNKER_ID = 'source-lines-v1';
const MAX_LINE = 1_000_000;
/** Lines between progress ticks. */
const PROGRESS_LINES = 256;

export interface ChunkOptions extends IngestionProgress {
  sourceId: string;
  maxBytes: number;
  maxChunks: number;
}

const BLANK = /^\s*$/;

export function chunkSegments(segments: readonly Segment[], options: ChunkOptions): PreparedChunk[] {
  const chunks: PreparedChunk[] = [];
  let linesSeen = 0;
  const tick = () => {
    options.onProgress?.();
    throwIfAborted(options.signal);
  };
  const emit = (segment: Segment, text: string, startLine: number, endLine: number) => {
    if (chunks.length >= options.maxChunks) {
      throw new DriverError('DOCUMENT_LIMIT', `The document makes more than ${options.maxChunks} chunks; split it or raise the chunk size.`);
    }
    const location = chunkLocation(options.sourceId, segment.location, startLine, endLine);
    chunks.push({ id: chunkId(options.sourceId, location, text, chunks.length), text, location });
  };

  for (const segment of segments) {
    const lines = segment.text.split('\n');
    let pending: string[] = [];
    let pendingBytes = 0;
    let pendingStart = 0;
    const flush = () => {
      while (pending.length > 0 && BLANK.test(pending[pending.length - 1]!)) pending.pop();
      if (pending.length > 0) emit(segment, pending.join('\n'), pendingStart, pendingStart + pending.length - 1);
      pending = [];
      pendingBytes = 0;
    };
    for (const [index, line] of lines.entries()) {
      if (++linesSeen % PROGRESS_LINES === 0) tick();
      const lineNumber = segment.firstLine + index;
      if (lineNumber > MAX_LINE) throw new DriverError('DOCUMENT_LIMIT', `The document has more than ${MAX_LINE} lines.`);
      const bytes = Buffer.byteLength(line, 'utf8');
      if (bytes > options.maxBytes) {
        flush();
        for (const piece of splitUtf8(line, options.maxBytes)) if (!BLANK.test(piece)) emit(segment, piece, lineNumber, lineNumber);
        continue;
      }
      if (pending.length > 0 && pendingBytes + 1 + bytes > options.maxBytes) flush();
      if (pending.length === 0) {
        if (BLANK.test(line)) continue;
        pendingStart = lineNumber;
        pendingBytes = bytes;
      } else {
        pendingBytes += 1 + bytes;
      }
      pending.push(line);
    }
    flush();
  }
  if (chunks.length === 0) throw new DriverError('EMPTY_DOCUMENT', 'The document has no text to index.');
  return chunks;
}

/** Cuts well-formed text into pieces of at most `maxBytes` UTF-8 bytes, never inside a code point. */
export function splitUtf8(text: string, maxBytes: number): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + maxBytes, bytes.length);
    // Step back over continuation bytes (10xxxxxx) so the cut lands before a lead byte.
    if (end < bytes.length) while (end > start && (bytes[end]! & 0xc0) === 0x80) end--;
    pieces.push(bytes.toString('utf8', start, end));
    start = end;
  }
  return pieces;
}

/** The segment's location with the document id and line range, in one fixed key order (ids hash it). */
function chunkLocation(sourceId: string, where: SourceLocation, startLine: number, endLine: number): SourceLocation {
  const location: SourceLocation = { documentId: sourceId };
  if (where.page !== undefined) location.page = where.page;
  if (where.pageEnd !== undefined) location.pageEnd = where.pageEnd;
  if (where.section !== undefined) location.section = where.section;
  if (where.threadId !== undefined) location.threadId = where.threadId;
  if (where.messageId !== undefined) location.messageId = where.messageId;
  location.startLine = startLine;
  location.endLine = endLine;
  return location;
}

export function chunkId(sourceId: string, location: SourceLocation, text: string, ordinal: number): string {
  return `p-${createHash('sha256').update(JSON.stringify([sourceId, location, text, ordinal])).digest('hex')}`;
}
