/**
 * Markdown split into sections at its top-level headings (ATX `#` and setext underlines), as
 * CommonMark parses them: a `#` line inside a code fence is code, not a heading. The parse runs
 * in a worker thread (markdown-worker.ts, through the WorkerPool): a fair line per subject, a
 * time limit, a capped heap, and never the host's event loop.
 */
import type { ResourceLimits } from 'node:worker_threads';
import { DriverError } from '../../../protocol/errors.js';
import type { IngestionProgress } from './abort.js';
import type { MarkdownHeading, MarkdownJob } from './markdown-worker.js';
import type { IngestionPolicy } from './policy.js';
import type { Segment } from './segment.js';
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
  refusals: new Set(['DOCUMENT_LIMIT']),
});

/** Threads working now, documents waiting for one, warm threads idle (for tests and diagnostics). */
export function markdownWorkerStats(): { running: number; waiting: number; idle: number } {
  return pool.stats();
}

/** `text` is LF-normalised; `lineOffset` shifts every line number (a source that starts mid-file). */
export async function markdownSections(
  text: string,
  lineOffset: number,
  policy: Pick<IngestionPolicy, 'maxChunks' | 'extractionTimeoutMs'>,
  progress: IngestionProgress = {},
  options: { resourceLimits?: ResourceLimits } = {},
): Promise<Segment[]> {
  const lines = text.split('\n');
  // YAML front matter is not Markdown (its closing `---` would make a setext heading): it is
  // parsed as blank lines, so it stays in the first segment and line numbers hold.
  const front = frontMatterLines(lines);
  const job: MarkdownJob = { text: front > 0 ? '\n'.repeat(front) + lines.slice(front).join('\n') : text, maxSections: policy.maxChunks };
  const headings = await pool.run<MarkdownHeading[]>({
    message: job,
    key: progress.subject ?? '',
    timeoutMs: policy.extractionTimeoutMs,
    ...(progress.signal ? { signal: progress.signal } : {}),
    ...(options.resourceLimits ? { resourceLimits: options.resourceLimits } : {}),
  });
  progress.onProgress?.();
  const segments: Segment[] = [];
  const push = (fromLine: number, toLine: number, title: string | undefined) => {
    if (toLine < fromLine) return;
    segments.push({
      location: title === undefined ? {} : { section: title },
      text: lines.slice(fromLine - 1, toLine).join('\n'),
      firstLine: fromLine + lineOffset,
    });
  };
  push(1, (headings[0]?.line ?? lines.length + 1) - 1, undefined);
  for (const [index, heading] of headings.entries()) {
    if (heading.line < 1 || heading.line > lines.length || (index > 0 && heading.line <= headings[index - 1]!.line)) {
      throw new DriverError('INVALID_EXTRACTION', `The Markdown parser reported a heading at line ${heading.line} out of order.`);
    }
    const end = (headings[index + 1]?.line ?? lines.length + 1) - 1;
    push(heading.line, end, heading.title || undefined);
  }
  return segments;
}

/** The number of lines of a leading `---` … `---` (or `...`) block, else 0. */
function frontMatterLines(lines: string[]): number {
  if (lines[0]?.trimEnd() !== '---') return 0;
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!.trimEnd();
    if (line === '---' || line === '...') return index + 1;
  }
  return 0;
}
