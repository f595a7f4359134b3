/**
 * Markdown split into sections at its top-level headings (ATX `#` and setext underlines), as
 * CommonMark parses them — a `#` line inside a code fence is code, not a heading — and chunked.
 * Both run in a worker thread (markdown-worker.ts, through the WorkerPool): a fair line per
 * subject, a time limit, a capped heap, and never the host's event loop.
 */
import type { ResourceLimits } from 'node:worker_threads';
import type { IngestionProgress } from './abort.js';
import type { MarkdownJob, MarkdownResult } from './markdown-worker.js';
import type { IngestionPolicy } from './policy.js';
import type { PreparedChunk } from './types.js';
import { workerEntry, WorkerPool } from './worker-pool.js';

export const MARKDOWN_EXTRACTOR = { id: 'markdown-sections', version: '2' } as const;

/** markdown-it's tokens of a 1 MiB document fit in a fraction of this; more is DOCUMENT_LIMIT first (MAX_BLOCK_TOKENS). */
export const MARKDOWN_WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 192, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 };

const pool = new WorkerPool({
  what: 'Markdown',
  entry: workerEntry('markdown-worker'),
  limits: MARKDOWN_WORKER_LIMITS,
  failureCode: 'INVALID_EXTRACTION',
  outOfMemoryCode: 'DOCUMENT_LIMIT',
  refusals: new Set(['DOCUMENT_LIMIT', 'EMPTY_DOCUMENT']),
});

/** Threads working now, documents waiting for one, warm threads idle (for tests and diagnostics). */
export function markdownWorkerStats(): { running: number; waiting: number; idle: number } {
  return pool.stats();
}

/**
 * The chunks of a Markdown text (LF-normalised), one section never in two chunks;
 * `lineOffset` shifts every line number (a source that starts mid-file).
 */
export function markdownChunks(
  text: string,
  chunking: Omit<MarkdownJob, 'text'>,
  policy: Pick<IngestionPolicy, 'extractionTimeoutMs'>,
  progress: IngestionProgress = {},
  options: { resourceLimits?: ResourceLimits } = {},
): Promise<PreparedChunk[]> {
  const job: MarkdownJob = { text, ...chunking };
  return pool.run<MarkdownResult>({
    message: job,
    key: progress.subject ?? '',
    timeoutMs: policy.extractionTimeoutMs,
    ...(progress.signal ? { signal: progress.signal } : {}),
    ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
    ...(options.resourceLimits ? { resourceLimits: options.resourceLimits } : {}),
  });
}
