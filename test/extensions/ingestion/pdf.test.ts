import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { ingestionPolicy, prepareDocument } from '../../../src/extensions/retrieval/ingestion/index.js';
import { extractPdfPages } from '../../../src/extensions/retrieval/ingestion/pdf.js';
import { DriverError } from '../../../src/protocol/errors.js';
import type { IngestRequest } from '../../../src/protocol/schemas.js';
import { assertWellFormed, fakePdfJs, rejectsWith } from './helpers.js';
import { makeEncryptedPdf, makePdf } from './pdfs.js';

const policy = ingestionPolicy();
const PDFJS_VERSION = (createRequire(import.meta.url)('pdfjs-dist/package.json') as { version: string }).version;

function pdfRequest(bytes: Uint8Array, location?: object, maxBytes?: number): IngestRequest {
  return {
    corpus: 'default',
    document: {
      type: 'pdf',
      mediaType: 'application/pdf',
      source: { id: 'report.pdf', revision: 'r1', ...(location ? { location } : {}) },
      data: Buffer.from(bytes).toString('base64'),
    },
    ...(maxBytes ? { chunking: { maxBytes } } : {}),
  };
}

const PAGES = [
  ['Quarterly report', 'Revenue grew by twelve percent.', 'Costs stayed flat.'],
  [],
  ['Appendix A', 'The launch moved to Thursday.'],
];

describe('pdf', () => {
  it('makes one segment per page with pdf.js, reports the empty page and digests the original bytes', async () => {
    const bytes = await makePdf(PAGES);
    const prepared = await prepareDocument(pdfRequest(bytes), policy);
    assertWellFormed(prepared);
    assert.deepEqual(
      prepared.chunks.map(({ text, location }) => ({ text, location })),
      [
        { text: PAGES[0]!.join('\n'), location: { documentId: 'report.pdf', page: 1, pageEnd: 1, startLine: 1, endLine: 3 } },
        { text: PAGES[2]!.join('\n'), location: { documentId: 'report.pdf', page: 3, pageEnd: 3, startLine: 1, endLine: 2 } },
      ],
    );
    assert.equal(prepared.ingestion.format, 'pdf');
    assert.deepEqual(prepared.ingestion.pages, { total: 3, ocr: [], empty: [2] });
    assert.deepEqual(prepared.ingestion.extractor, { id: 'pdfjs', version: PDFJS_VERSION });
    assert.equal(prepared.ingestion.inputSha256, createHash('sha256').update(bytes).digest('hex'));
    assert.equal(prepared.ingestion.inputBytes, bytes.length);
  });

  it('shifts pages by source.location.page and never lets a chunk cross a page', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `Line ${i} of a longer page with enough words to fill chunks.`);
    const prepared = await prepareDocument(pdfRequest(await makePdf([long, long]), { page: 10 }, 256), policy);
    assertWellFormed(prepared);
    const pages = new Set(prepared.chunks.map((chunk) => chunk.location.page));
    assert.deepEqual([...pages], [10, 11]);
    assert.ok(prepared.chunks.every((chunk) => chunk.location.page === chunk.location.pageEnd));
    const pageTen = prepared.chunks.filter((chunk) => chunk.location.page === 10).flatMap((chunk) => chunk.text.split('\n'));
    assert.deepEqual(pageTen, long);
    // The manifest names the document's own pages, not the shifted ones.
    assert.deepEqual(prepared.ingestion.pages, { total: 2, ocr: [], empty: [] });
  });

  it('refuses empty pages without OCR when they are not allowed, and a PDF with no text at all', async () => {
    await rejectsWith(prepareDocument(pdfRequest(await makePdf(PAGES)), ingestionPolicy({ allowEmptyPdfPages: false })), 'OCR_REQUIRED', /Pages 2 /);
    await rejectsWith(prepareDocument(pdfRequest(await makePdf([[], []])), policy), 'EMPTY_EXTRACTION');
  });

  it('refuses what is not a PDF, a broken PDF and an encrypted PDF', async () => {
    await rejectsWith(prepareDocument(pdfRequest(Buffer.from('Hello, plain text pretending.')), policy), 'INVALID_DOCUMENT', /%PDF-/);
    await rejectsWith(prepareDocument(pdfRequest(Buffer.from('%PDF-1.7\nthis is not a pdf at all\n')), policy), 'INVALID_DOCUMENT', /could not be read/);
    const good = await makePdf(PAGES);
    await rejectsWith(prepareDocument(pdfRequest(good.subarray(0, Math.floor(good.length / 2))), policy), 'INVALID_DOCUMENT');
    // A user password is needed, and one that opens with the empty password: both refused.
    await rejectsWith(prepareDocument(pdfRequest(await makeEncryptedPdf(false)), policy), 'PDF_ENCRYPTED');
    await rejectsWith(prepareDocument(pdfRequest(await makeEncryptedPdf(true)), policy), 'PDF_ENCRYPTED');
  });

  it('bounds pages, text, input bytes and chunks', async () => {
    const bytes = await makePdf(PAGES);
    await rejectsWith(prepareDocument(pdfRequest(bytes), ingestionPolicy({ maxPages: 2 })), 'DOCUMENT_LIMIT', /3 pages; at most 2/);
    await rejectsWith(prepareDocument(pdfRequest(bytes), ingestionPolicy({ maxTextBytes: 20 })), 'DOCUMENT_LIMIT', /more than 20 bytes/);
    // Page 1 fits; page 3 passes the limit.
    await rejectsWith(prepareDocument(pdfRequest(bytes), ingestionPolicy({ maxTextBytes: 80 })), 'DOCUMENT_LIMIT', /more than 80 bytes/);
    // One page with far more text than the limit is stopped while pdf.js streams it.
    const crowded = await makePdf([Array.from({ length: 50 }, (_, i) => `crowded line ${i} `.repeat(6))]);
    await rejectsWith(prepareDocument(pdfRequest(crowded), ingestionPolicy({ maxTextBytes: 200 })), 'DOCUMENT_LIMIT', /more than 200 bytes/);
    await rejectsWith(prepareDocument(pdfRequest(bytes), ingestionPolicy({ maxDocumentBytes: bytes.length - 1 })), 'DOCUMENT_LIMIT', /at most/);
    assert.ok((await prepareDocument(pdfRequest(bytes), ingestionPolicy({ maxDocumentBytes: bytes.length }))).chunks.length === 2);
    await rejectsWith(prepareDocument(pdfRequest(bytes), ingestionPolicy({ maxChunks: 1 })), 'DOCUMENT_LIMIT', /chunks/);
  });

  it('stops mid-document when aborted, and pdf.js is left clean for the next document', async () => {
    const pages = Array.from({ length: 30 }, (_, i) => [`Page ${i + 1} text`]);
    const bytes = await makePdf(pages);
    const controller = new AbortController();
    let progress = 0;
    const onProgress = () => {
      // Ticks come from opening the document and from each page's text as pdf.js streams it.
      if (++progress === 4) controller.abort(new DriverError('IDLE_TIMEOUT', 'No progress.'));
    };
    await rejectsWith(prepareDocument(pdfRequest(bytes), policy, { signal: controller.signal, onProgress }), 'IDLE_TIMEOUT');
    assert.equal(progress, 4);
    // Aborted from outside while pdf.js works (a timer, as the caller's idle timer would).
    const timer = new AbortController();
    let ticks = 0;
    const started = prepareDocument(pdfRequest(bytes), policy, { signal: timer.signal, onProgress: () => ticks++ === 2 && setImmediate(() => timer.abort()) });
    await rejectsWith(started, 'CANCELLED');
    assert.ok(ticks < 31, `extraction went on after the abort (${ticks} ticks)`);
    const again = await prepareDocument(pdfRequest(bytes), policy);
    assert.equal(again.chunks.length, 30);
  });

  it('extracts several PDFs at once, each with its own pages', async () => {
    const documents = await Promise.all([1, 2, 3].map((n) => makePdf(Array.from({ length: n + 1 }, (_, page) => [`doc ${n} page ${page + 1}`]))));
    const prepared = await Promise.all(documents.map((bytes) => prepareDocument(pdfRequest(bytes), policy)));
    assert.deepEqual(
      prepared.map((document) => document.chunks.map((chunk) => chunk.text)),
      [1, 2, 3].map((n) => Array.from({ length: n + 1 }, (_, page) => `doc ${n} page ${page + 1}`)),
    );
  });

  it('maps a missing pdf.js and a failing or malformed extraction to their codes', async () => {
    const bytes = await makePdf(PAGES);
    const limits = { maxPages: 200, maxTextBytes: 1024 * 1024, maxDecodedBytes: 64 << 20, extractionTimeoutMs: 60_000 };
    await rejectsWith(extractPdfPages(bytes, limits, {}, { pdfjs: fakePdfJs('missing') }), 'PDF_EXTRACTOR_UNAVAILABLE');
    // The real pdf.js, with its document altered after loading: page 2 fails, or the page count is nonsense.
    await rejectsWith(extractPdfPages(bytes, limits, {}, { pdfjs: fakePdfJs('failing-page') }), 'PDF_EXTRACTION_FAILED', /glyph table exploded/);
    await rejectsWith(extractPdfPages(bytes, limits, {}, { pdfjs: fakePdfJs('no-pages') }), 'INVALID_EXTRACTION');
  });
});
