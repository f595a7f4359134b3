/**
 * Markdown split into sections at its top-level headings (ATX `#` and setext underlines), as
 * CommonMark parses them: a `#` line inside a code fence is code, not a heading.
 */
import { fromMarkdown } from 'mdast-util-from-markdown';
import type { Segment } from './segment.js';

export const MARKDOWN_EXTRACTOR = { id: 'markdown-sections', version: '1' } as const;
const MAX_TITLE = 256;

interface Node {
  type: string;
  value?: string;
  children?: Node[];
  position?: { start: { line: number } };
}

/** `text` is LF-normalised; `lineOffset` shifts every line number (a source that starts mid-file). */
export function markdownSections(text: string, lineOffset: number): Segment[] {
  const lines = text.split('\n');
  // YAML front matter is not Markdown (its closing `---` would make a setext heading): it is
  // parsed as blank lines, so it stays in the first segment and line numbers hold.
  const front = frontMatterLines(lines);
  const root = fromMarkdown(front > 0 ? '\n'.repeat(front) + lines.slice(front).join('\n') : text) as unknown as Node;
  const headings = (root.children ?? []).filter((node) => node.type === 'heading' && node.position);
  const segments: Segment[] = [];
  const push = (fromLine: number, toLine: number, title: string | undefined) => {
    if (toLine < fromLine) return;
    segments.push({
      location: title === undefined ? {} : { section: title },
      text: lines.slice(fromLine - 1, toLine).join('\n'),
      firstLine: fromLine + lineOffset,
    });
  };
  push(1, (headings[0]?.position!.start.line ?? lines.length + 1) - 1, undefined);
  for (const [index, heading] of headings.entries()) {
    const start = heading.position!.start.line;
    const end = (headings[index + 1]?.position!.start.line ?? lines.length + 1) - 1;
    push(start, end, headingTitle(heading) || undefined);
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

function headingTitle(heading: Node): string {
  const title = collectText(heading).replace(/\s+/g, ' ').trim();
  const codePoints = Array.from(title);
  return codePoints.length > MAX_TITLE ? codePoints.slice(0, MAX_TITLE).join('') : title;
}

function collectText(node: Node): string {
  if (node.type === 'text' || node.type === 'inlineCode') return node.value ?? '';
  return (node.children ?? []).map(collectText).join('');
}
