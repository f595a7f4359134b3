/**
 * Properties of the source-lines-v1 chunker over generated text (multi-byte characters,
 * blank runs, long lines, CRLF/CR) and Markdown. Bounded for CI:
 * AGENTICDRIVER_PROPERTY_RUNS (default 200 per property) raises the count.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ingestionPolicy, prepareDocument } from '../../../src/extensions/retrieval/ingestion/index.js';
import { DriverError } from '../../../src/protocol/errors.js';
import type { IngestRequest } from '../../../src/protocol/schemas.js';
import { assertWellFormed } from './helpers.js';

const RUNS = Number(process.env.AGENTICDRIVER_PROPERTY_RUNS ?? 200);
const policy = ingestionPolicy();

const piece = fc.constantFrom('a', 'word ', 'é', '€', '😀', '中文', ' ', '\t', '#', '```', '==', '-', 'x'.repeat(90), '😀'.repeat(40));
const line = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(''));
const eol = fc.constantFrom('\n', '\r\n', '\r');
const text = fc.array(fc.tuple(line, eol), { minLength: 1, maxLength: 60 }).map((lines) => lines.map(([l, e]) => l + e).join(''));
const maxBytes = fc.integer({ min: 128, max: 600 });

const request = (mediaType: 'text/plain' | 'text/markdown', body: string, bytes: number): IngestRequest => ({
  corpus: 'default',
  document: { type: 'text', mediaType, source: { id: 'prop', revision: 'r1' }, text: body },
  chunking: { maxBytes: bytes },
});

/** Runs one document; a document with no text may only fail as EMPTY_DOCUMENT. */
async function prepared(mediaType: 'text/plain' | 'text/markdown', body: string, bytes: number) {
  try {
    return await prepareDocument(request(mediaType, body, bytes), policy);
  } catch (error) {
    assert.ok(error instanceof DriverError && error.code === 'EMPTY_DOCUMENT' && body.trim() === '', String(error));
    return undefined;
  }
}

const nonSpace = (value: string) => value.replace(/\s/g, '');

describe('chunker properties', () => {
  for (const mediaType of ['text/plain', 'text/markdown'] as const) {
    it(`${mediaType}: chunks are well formed, in order, lose no text and are deterministic`, async () => {
      await fc.assert(
        fc.asyncProperty(text, maxBytes, async (body, bytes) => {
          const result = await prepared(mediaType, body, bytes);
          if (!result) return;
          assertWellFormed(result);
          // Only whitespace is ever dropped, and chunks follow the document's order.
          assert.equal(nonSpace(result.chunks.map((chunk) => chunk.text).join('')), nonSpace(body));
          const lines = body.replace(/\r\n?/g, '\n').split('\n');
          let previous = 0;
          for (const chunk of result.chunks) {
            const { startLine, endLine } = chunk.location;
            assert.ok(startLine! >= previous);
            previous = startLine!;
            // A chunk is its lines verbatim, or a cut of one long line.
            const span = lines.slice(startLine! - 1, endLine!).join('\n');
            if (startLine === endLine && chunk.text !== span) assert.ok(span.includes(chunk.text));
            else assert.equal(chunk.text, span);
          }
          assert.deepEqual(await prepared(mediaType, body, bytes), result);
        }),
        { numRuns: RUNS },
      );
    });
  }
});
