import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  DEFAULT_INGESTION_POLICY,
  ingestionPolicy,
  prepareDocument,
  type IngestionPolicy,
} from '../../../src/extensions/retrieval/ingestion/index.js';
import type { IngestRequest } from '../../../src/protocol/schemas.js';
import { assertWellFormed, rejectsWith } from './helpers.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const policy = ingestionPolicy();

function textRequest(text: string, extra: Partial<IngestRequest> & { mediaType?: 'text/plain' | 'text/markdown'; location?: object } = {}): IngestRequest {
  const { mediaType = 'text/plain', location, ...rest } = extra;
  return {
    corpus: 'default',
    document: { type: 'text', source: { id: 'doc-1', revision: 'r1', ...(location ? { location } : {}) }, mediaType, text },
    ...rest,
  } as IngestRequest;
}

describe('ingestion policy', () => {
  it('has the reference defaults, and bounds on decoded PDF bytes and extraction time', () => {
    assert.deepEqual(policy, {
      maxDocumentBytes: 8 * 1024 * 1024,
      maxTextBytes: 1024 * 1024,
      maxPages: 200,
      maxMessages: 1000,
      maxChunks: 256,
      maxChunkBytes: 2048,
      maxDecodedBytes: 128 * 1024 * 1024,
      extractionTimeoutMs: 60_000,
      allowEmptyPdfPages: true,
    });
    assert.deepEqual(ingestionPolicy({ maxPages: 1000, maxChunkBytes: 128, allowEmptyPdfPages: false }), {
      ...DEFAULT_INGESTION_POLICY,
      maxPages: 1000,
      maxChunkBytes: 128,
      allowEmptyPdfPages: false,
    });
  });

  it('refuses values outside the bounds, non-integers and unknown settings', async () => {
    const bad: Record<string, unknown>[] = [
      { maxDocumentBytes: 32 * 1024 * 1024 + 1 },
      { maxTextBytes: 1024 * 1024 + 1 },
      { maxPages: 0 },
      { maxPages: 1001 },
      { maxMessages: 1001 },
      { maxChunks: 257 },
      { maxDecodedBytes: 1024 * 1024 - 1 },
      { maxDecodedBytes: 1024 * 1024 * 1024 + 1 },
      { extractionTimeoutMs: 99 },
      { extractionTimeoutMs: 600_001 },
      { maxChunkBytes: 127 },
      { maxChunkBytes: 16_385 },
      { maxChunkBytes: 1000.5 },
      { maxPages: '10' },
      { allowEmptyPdfPages: 'yes' },
      { ocr: true },
    ];
    for (const partial of bad) {
      await rejectsWith(() => ingestionPolicy(partial as Partial<IngestionPolicy>), 'INVALID_CONFIG', /ingestion\./);
    }
  });
});

describe('plain text', () => {
  it('is one segment; CRLF and CR become LF; the digest is of the original bytes', async () => {
    const text = 'alpha\r\nbeta\rgamma\n';
    const prepared = await prepareDocument(textRequest(text), policy);
    assertWellFormed(prepared);
    assert.deepEqual(
      prepared.chunks.map(({ text: t, location }) => ({ t, location })),
      [{ t: 'alpha\nbeta\ngamma', location: { documentId: 'doc-1', startLine: 1, endLine: 3 } }],
    );
    assert.deepEqual(prepared.ingestion, {
      format: 'text',
      inputSha256: sha256(text),
      inputBytes: Buffer.byteLength(text),
      extractor: { id: 'plain-text', version: '1' },
      chunker: { id: 'source-lines-v1', maxBytes: 2048 },
      extractedTextBytes: Buffer.byteLength('alpha\nbeta\ngamma\n'),
      indexedTextBytes: Buffer.byteLength('alpha\nbeta\ngamma'),
      chunks: 1,
    });
    assert.deepEqual(prepared.source, { id: 'doc-1', revision: 'r1' });
  });

  it('packs whole lines up to maxBytes, skips blank runs and shifts lines by source.location.startLine', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => (i % 10 === 9 ? '' : `line ${String(i + 1).padStart(2, '0')} ${'x'.repeat(20)}`));
    const prepared = await prepareDocument(textRequest(lines.join('\n'), { chunking: { maxBytes: 128 }, location: { startLine: 101 } }), policy);
    assertWellFormed(prepared);
    assert.equal(prepared.ingestion.chunker.maxBytes, 128);
    for (const chunk of prepared.chunks) {
      const first = chunk.text.split('\n')[0]!;
      // A chunk starts with the line its location names, shifted by 100.
      assert.equal(first, lines[chunk.location.startLine! - 101]);
      assert.equal(chunk.text.split('\n').length, chunk.location.endLine! - chunk.location.startLine! + 1);
      assert.ok(!chunk.text.startsWith('\n') && !chunk.text.endsWith('\n'));
    }
    // Nothing lost: every non-blank line is in exactly one chunk.
    const indexedLines = prepared.chunks.flatMap((chunk) => chunk.text.split('\n')).filter((line) => line !== '');
    assert.deepEqual(indexedLines, lines.filter((line) => line !== ''));
    assert.equal(prepared.chunks[0]!.location.startLine, 101);
  });

  it('a request can lower the chunk size but never raise it', async () => {
    const text = 'word '.repeat(2000);
    const lowered = await prepareDocument(textRequest(text, { chunking: { maxBytes: 16_384 } }), ingestionPolicy({ maxChunkBytes: 512 }));
    assert.equal(lowered.ingestion.chunker.maxBytes, 512);
    assert.ok(lowered.chunks.every((chunk) => Buffer.byteLength(chunk.text) <= 512));
  });

  it('cuts an oversized line at UTF-8 boundaries, never inside a code point', async () => {
    // 3- and 4-byte characters so 128-byte cuts fall mid-character unless stepped back.
    const line = '€😀a'.repeat(300);
    const prepared = await prepareDocument(textRequest(`short\n${line}\ntail`, { chunking: { maxBytes: 128 } }), policy);
    assertWellFormed(prepared);
    const pieces = prepared.chunks.filter((chunk) => chunk.location.startLine === 2);
    assert.ok(pieces.length > 1);
    assert.equal(pieces.map((chunk) => chunk.text).join(''), line);
    assert.ok(pieces.every((chunk) => chunk.location.endLine === 2));
    assert.deepEqual(prepared.chunks[0]!.text, 'short');
    assert.deepEqual(prepared.chunks.at(-1)!.text, 'tail');
  });

  it('gives the same chunk ids on every run and different ids for a different source', async () => {
    const text = 'one\ntwo\nthree\n'.repeat(200);
    const first = await prepareDocument(textRequest(text, { chunking: { maxBytes: 128 } }), policy);
    const second = await prepareDocument(textRequest(text, { chunking: { maxBytes: 128 } }), policy);
    assert.deepEqual(second, first);
    const other = await prepareDocument({ ...textRequest(text, { chunking: { maxBytes: 128 } }), document: { type: 'text', source: { id: 'doc-2', revision: 'r1' }, mediaType: 'text/plain', text } }, policy);
    assert.equal(other.chunks.length, first.chunks.length);
    assert.ok(other.chunks.every((chunk, i) => chunk.id !== first.chunks[i]!.id));
    // The same text twice in one document still gets distinct ids (the ordinal is hashed).
    assert.equal(new Set(first.chunks.map((chunk) => chunk.id)).size, first.chunks.length);
  });

  it('refuses NUL, unpaired surrogates, whitespace-only text, too many chunks and too many bytes', async () => {
    await rejectsWith(prepareDocument(textRequest('a\u0000b'), policy), 'INVALID_DOCUMENT', /NUL/);
    await rejectsWith(prepareDocument(textRequest('broken \uD800 text'), policy), 'INVALID_DOCUMENT', /surrogate/);
    await rejectsWith(prepareDocument(textRequest(' \n\t\r\n  '), policy), 'EMPTY_DOCUMENT');
    await rejectsWith(prepareDocument(textRequest('a\n'.repeat(1000), { chunking: { maxBytes: 128 } }), ingestionPolicy({ maxChunks: 1 })), 'DOCUMENT_LIMIT', /more than 1 chunks/);
    await rejectsWith(prepareDocument(textRequest('x'.repeat(100)), ingestionPolicy({ maxDocumentBytes: 99 })), 'DOCUMENT_LIMIT', /100 bytes/);
    await rejectsWith(prepareDocument(textRequest('x'.repeat(100)), ingestionPolicy({ maxTextBytes: 50 })), 'DOCUMENT_LIMIT', /text is 100 bytes/);
    // Line numbers are bounded by the wire schema (1,000,000): a source starting at the last line has room for one.
    await rejectsWith(prepareDocument(textRequest('a\nb', { location: { startLine: 1_000_000 } }), policy), 'DOCUMENT_LIMIT', /lines/);
  });

  it('refuses a request that is not an IngestRequest', async () => {
    await rejectsWith(prepareDocument(null as unknown as IngestRequest, policy), 'INVALID_INGESTION');
    await rejectsWith(prepareDocument({ ...textRequest('x'), chunking: { maxBytes: 64 } }, policy), 'INVALID_INGESTION', /chunking/);
    await rejectsWith(prepareDocument({ corpus: 'default', document: { type: 'reference', id: 'a', revision: 'b' } } as unknown as IngestRequest, policy), 'INVALID_INGESTION');
  });

  it('stops when the signal is aborted, with the abort reason when it is a DriverError', async () => {
    const { DriverError } = await import('../../../src/protocol/errors.js');
    const controller = new AbortController();
    controller.abort(new DriverError('IDLE_TIMEOUT', 'idle'));
    await rejectsWith(prepareDocument(textRequest('hello'), policy, { signal: controller.signal }), 'IDLE_TIMEOUT');
    // Aborted from the progress callback, mid-chunking.
    const mid = new AbortController();
    let ticks = 0;
    const onProgress = () => {
      ticks++;
      mid.abort();
    };
    await rejectsWith(prepareDocument(textRequest('line\n'.repeat(5000)), policy, { signal: mid.signal, onProgress }), 'CANCELLED');
    assert.equal(ticks, 1);
  });

  it('reports progress every 256 lines', async () => {
    let ticks = 0;
    await prepareDocument(textRequest('line\n'.repeat(1024)), policy, { onProgress: () => ticks++ });
    assert.equal(ticks, 4); // 1025 lines (the last one empty)
  });
});
