import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ingestionPolicy, prepareDocument } from '../../../src/extensions/retrieval/ingestion/index.js';
import type { IngestRequest } from '../../../src/protocol/schemas.js';
import { markdownChunks } from '../../../src/extensions/retrieval/ingestion/markdown.js';
import { assertWellFormed, rejectsWith } from './helpers.js';

const policy = ingestionPolicy();

function markdown(text: string, location?: object, maxBytes?: number): IngestRequest {
  return {
    corpus: 'default',
    document: { type: 'text', mediaType: 'text/markdown', source: { id: 'guide.md', revision: 'r1', title: 'Guide', ...(location ? { location } : {}) }, text },
    ...(maxBytes ? { chunking: { maxBytes } } : {}),
  };
}

const GUIDE = [
  '# First', //  1
  '', //  2
  'Intro text for the first section.', //  3
  '```sh', //  4
  '# not a heading, a shell comment', //  5
  '```', //  6
  'Second', //  7
  '======', //  8
  '', //  9
  'Setext section body.', // 10
  '~~~', // 11
  '## still code', // 12
  '~~~', // 13
  '### Third *emphasised* `code`', // 14
  'Body three.', // 15
].join('\n');

describe('markdown sections', () => {
  it('splits at ATX and setext headings, never at a heading inside a fence', async () => {
    const prepared = await prepareDocument(markdown(GUIDE), policy);
    assertWellFormed(prepared);
    assert.deepEqual(
      prepared.chunks.map((chunk) => chunk.location),
      [
        { documentId: 'guide.md', section: 'First', startLine: 1, endLine: 6 },
        { documentId: 'guide.md', section: 'Second', startLine: 7, endLine: 13 },
        { documentId: 'guide.md', section: 'Third emphasised code', startLine: 14, endLine: 15 },
      ],
    );
    assert.ok(prepared.chunks[0]!.text.includes('# not a heading'));
    assert.ok(prepared.chunks[1]!.text.includes('## still code'));
    assert.deepEqual(prepared.ingestion.extractor, { id: 'markdown-sections', version: '2' });
    assert.equal(prepared.ingestion.format, 'markdown');
    assert.equal(prepared.ingestion.inputSha256, createHash('sha256').update(GUIDE).digest('hex'));
  });

  it('keeps chunks inside their section at a small chunk size, with no U+FFFD', async () => {
    const body = Array.from({ length: 12 }, (_, i) => `Zeile ${i}: Grüße, naïve café — ${'ü'.repeat(30)}`).join('\n');
    const text = `Preamble before any heading.\n\n# Α\n${body}\n# Β\n${body}\n`;
    const prepared = await prepareDocument(markdown(text, undefined, 128), policy);
    assertWellFormed(prepared);
    assert.deepEqual(prepared.chunks[0]!.location, { documentId: 'guide.md', startLine: 1, endLine: 1 });
    const alpha = prepared.chunks.filter((chunk) => chunk.location.section === 'Α');
    const beta = prepared.chunks.filter((chunk) => chunk.location.section === 'Β');
    assert.ok(alpha.length > 1 && beta.length === alpha.length);
    assert.ok(alpha.every((chunk) => chunk.location.endLine! <= 15));
    assert.ok(beta.every((chunk) => chunk.location.startLine! >= 16));
  });

  it('shifts line numbers by source.location.startLine and bounds a title to 256 characters', async () => {
    const title = '😀'.repeat(300);
    const prepared = await prepareDocument(markdown(`# ${title}\ntext\n`, { startLine: 10 }), policy);
    assertWellFormed(prepared);
    const [chunk] = prepared.chunks;
    assert.equal(Array.from(chunk!.location.section!).length, 256);
    assert.equal(chunk!.location.startLine, 10);
    assert.equal(chunk!.location.endLine, 11);
  });

  it('keeps YAML front matter in the first segment instead of reading it as a setext heading', async () => {
    const prepared = await prepareDocument(markdown('---\ntitle: Guide\ntags: [a]\n---\n\n# Start\nBody\n'), policy);
    assert.deepEqual(
      prepared.chunks.map((chunk) => [chunk.location.section, chunk.location.startLine, chunk.location.endLine]),
      [
        [undefined, 1, 4],
        ['Start', 6, 7],
      ],
    );
    // Without a closing line it is ordinary Markdown.
    const open = await prepareDocument(markdown('---\ntitle: x\n\n# Start\n'), policy);
    assert.deepEqual(open.chunks.map((chunk) => chunk.location.section), [undefined, 'Start']);
  });

  it('a heading-only document still indexes its headings', async () => {
    const prepared = await prepareDocument(markdown('# One\n\n## Two\n'), policy);
    assert.deepEqual(
      prepared.chunks.map((chunk) => [chunk.text, chunk.location.section]),
      [
        ['# One', 'One'],
        ['## Two', 'Two'],
      ],
    );
  });
});

describe('markdown parse bounds (issue 25)', () => {
  it('parses what stalled the old parser for minutes, and bounds nesting before it starts', async () => {
    // '>' × 1M ran over 11 minutes on the host thread before.
    const quotes = await prepareDocument(markdown(`# Deep\n${'>'.repeat(1_000_000)}\n# After\ntext\n`), ingestionPolicy({ maxChunkBytes: 16_384 }));
    assert.deepEqual([...new Set(quotes.chunks.map((chunk) => chunk.location.section))], ['Deep', 'After']);
    // Lists nested past MAX_NESTING are read as one block; the heading after them still splits.
    const lists = await prepareDocument(markdown(`${'- '.repeat(5)}a\n# After\ntext\n`), policy);
    assert.deepEqual(lists.chunks.map((chunk) => chunk.location.section), [undefined, 'After']);
  });

  it('refuses more top-level sections than chunks, and more blocks than MAX_BLOCK_TOKENS, as DOCUMENT_LIMIT', async () => {
    await rejectsWith(prepareDocument(markdown('# h\n'.repeat(257)), policy), 'DOCUMENT_LIMIT', /more than 256 top-level sections/);
    await rejectsWith(prepareDocument(markdown('Setext\n===\n'.repeat(300)), policy), 'DOCUMENT_LIMIT', /more than 256 top-level sections/);
    // 256 sections in fences and quotes are not top-level.
    assert.equal((await prepareDocument(markdown(`\`\`\`\n${'# h\n'.repeat(5000)}\`\`\`\n> ${'# q\n> '.repeat(5000)}\n`), ingestionPolicy({ maxChunkBytes: 16_384 }))).chunks[0]!.location.section, undefined);
    await rejectsWith(prepareDocument(markdown('a\n\n'.repeat(140_000)), ingestionPolicy({ maxChunkBytes: 16_384 })), 'DOCUMENT_LIMIT', /more than 400000 blocks/);
  });

  it('ends a parse past its time limit (TIMEOUT) or its heap (DOCUMENT_LIMIT) in the worker thread', async () => {
    // Lazy continuation lines 19 quotes deep: the costliest bytes markdown-it reads, ≈ 1 MiB.
    const lazy = `${'> '.repeat(19)}a\n${'b\n'.repeat(50)}`.repeat(7_000);
    await rejectsWith(prepareDocument(markdown(lazy), ingestionPolicy({ extractionTimeoutMs: 100, maxChunkBytes: 16_384 })), 'TIMEOUT', /time limit \(100 ms\)/);
    await rejectsWith(
      markdownChunks('a\n\n'.repeat(100_000), { lineOffset: 0, sourceId: 'big', maxBytes: 16_384, maxChunks: 256 }, policy, {}, { resourceLimits: { maxOldGenerationSizeMb: 12, maxYoungGenerationSizeMb: 2 } }),
      'DOCUMENT_LIMIT',
      /ran out of memory/,
    );
    // The pool goes on.
    assert.equal((await prepareDocument(markdown('# Fine\nok\n'), policy)).chunks[0]!.location.section, 'Fine');
  });
});
