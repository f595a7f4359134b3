/**
 * The Markdown worker thread: splits a document into sections at its top-level headings, found
 * with markdown-it (its CommonMark preset), and chunks them; the host gets the chunks. The parse
 * is linear in the text and its nesting is bounded before it starts (`maxNesting`); inline
 * syntax is parsed only for the titles. Counting stops the parse early: more top-level headings
 * than `maxChunks` (each is at least one chunk), or more block tokens than MAX_BLOCK_TOKENS
 * (what the parse holds in memory), is DOCUMENT_LIMIT.
 */
import MarkdownIt from 'markdown-it';
import { parentPort } from 'node:worker_threads';
import { DriverError } from '../../../protocol/errors.js';
import { chunkSegments } from './chunker.js';
import type { Segment } from './segment.js';
import type { PreparedChunk } from './types.js';
import { lowerThreadPriority } from './thread-priority.js';
import type { WorkerMessage } from './worker-pool.js';

/** Host → worker: one document (LF text) and how to chunk it. */
export interface MarkdownJob {
  text: string;
  /** Shifts every line number (a source that starts mid-file). */
  lineOffset: number;
  sourceId: string;
  maxBytes: number;
  maxChunks: number;
}

export type MarkdownResult = PreparedChunk[];

/** A top-level heading: its first line (1-based) and its inline text, whitespace collapsed, at most MAX_TITLE code points. */
interface Heading {
  line: number;
  title: string;
}

/**
 * Container depth markdown-it parses (its CommonMark default; a list level counts two): deeper
 * content is not parsed further. The cost of a line grows with the depth it is at, so this is
 * what bounds the parse's cost per byte.
 */
export const MAX_NESTING = 20;
/** ≈ 300 bytes each in the thread's heap: 400,000 is about 120 MB. */
export const MAX_BLOCK_TOKENS = 400_000;
const MAX_TITLE = 256;

const port = parentPort;
if (!port) throw new Error('markdown-worker.ts runs only as a worker thread.');
lowerThreadPriority();
const post = (message: WorkerMessage<never>) => port.postMessage(message);

const blocks = new MarkdownIt('commonmark', { maxNesting: MAX_NESTING });
blocks.disable('inline');
const inline = new MarkdownIt('commonmark', { maxNesting: MAX_NESTING });

type StateBlock = Parameters<Parameters<typeof blocks.block.ruler.before>[2]>[0];

let limits = { maxSections: 0, counted: 0, headings: 0 };

/**
 * A block rule that never matches: it runs at each block start, before the others, and counts
 * the tokens made since its last run, so the parse stops as soon as a bound is passed.
 */
blocks.block.ruler.before('table', 'agenticdriver_bounds', (state: StateBlock) => {
  const { tokens } = state;
  if (tokens.length > MAX_BLOCK_TOKENS) throw new DriverError('DOCUMENT_LIMIT', `The Markdown document has more than ${MAX_BLOCK_TOKENS} blocks.`);
  for (let index = limits.counted; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (token.type === 'heading_open' && token.level === 0 && ++limits.headings > limits.maxSections) {
      throw new DriverError('DOCUMENT_LIMIT', `The Markdown document has more than ${limits.maxSections} top-level sections, each at least one chunk.`);
    }
  }
  limits.counted = tokens.length;
  return false;
});

function topLevelHeadings(text: string, maxSections: number): Heading[] {
  limits = { maxSections, counted: 0, headings: 0 };
  const tokens = blocks.parse(text, {});
  const headings: Heading[] = [];
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (token.type !== 'heading_open' || token.level !== 0 || !token.map) continue;
    if (headings.length === maxSections) throw new DriverError('DOCUMENT_LIMIT', `The Markdown document has more than ${maxSections} top-level sections, each at least one chunk.`);
    headings.push({ line: token.map[0] + 1, title: titleOf(tokens[index + 1]?.content ?? '') });
  }
  return headings;
}

/** The heading's text as CommonMark reads it: text and code spans, no markup, no images or HTML. */
function titleOf(content: string): string {
  let text = '';
  for (const token of inline.parseInline(content, {})[0]?.children ?? []) {
    if (token.type === 'text' || token.type === 'text_special' || token.type === 'code_inline') text += token.content;
    else if (token.type === 'softbreak') text += ' ';
  }
  const codePoints = Array.from(text.replace(/\s+/g, ' ').trim());
  return codePoints.length > MAX_TITLE ? codePoints.slice(0, MAX_TITLE).join('') : codePoints.join('');
}

/** The sections: text before the first heading (untitled), then one per top-level heading. */
function markdownSegments(text: string, lineOffset: number, maxSections: number): Segment[] {
  const lines = text.split('\n');
  // YAML front matter is not Markdown (its closing `---` would make a setext heading): it is
  // parsed as blank lines, so it stays in the first segment and line numbers hold.
  const front = frontMatterLines(lines);
  const headings = topLevelHeadings(front > 0 ? '\n'.repeat(front) + lines.slice(front).join('\n') : text, maxSections);
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
  for (const [index, heading] of headings.entries()) push(heading.line, (headings[index + 1]?.line ?? lines.length + 1) - 1, heading.title || undefined);
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

port.on('message', (job: MarkdownJob) => {
  post({ type: 'started' });
  try {
    const segments = markdownSegments(job.text, job.lineOffset, job.maxChunks);
    const result: MarkdownResult = chunkSegments(segments, { sourceId: job.sourceId, maxBytes: job.maxBytes, maxChunks: job.maxChunks, onProgress: () => post({ type: 'progress' }) });
    post({ type: 'done', result });
  } catch (error) {
    const failure =
      error instanceof DriverError
        ? error
        : new DriverError('INVALID_EXTRACTION', `The Markdown parser failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300));
    post({ type: 'error', error: failure.toJSON() });
  }
});
