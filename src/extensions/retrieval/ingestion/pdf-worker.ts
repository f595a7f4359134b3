/**
 * The PDF worker thread: runs pdf.js (its legacy build with the in-thread fake worker, no
 * canvas, no system binaries) on the documents the host sends it, one at a time, and streams
 * each result back, so a PDF that makes pdf.js loop never blocks the host's event loop. The
 * host terminates this thread to abort; it never runs pdf.js code itself.
 *
 * Decoded bytes are budgeted per document (decoded-budget.ts): a small stream that inflates to
 * gigabytes is refused while it inflates, before the bytes exist.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DriverError } from '../../../protocol/errors.js';
import { DecodedBudget, installPdfJsDecodedBudget } from './decoded-budget.js';
import { lowerThreadPriority } from './thread-priority.js';
import type { WorkerMessage } from './worker-pool.js';

export interface PdfWorkerData {
  /** The module imported as pdf.js (tests swap in a failing one). */
  pdfjs?: string;
}

/** Host → worker: one document. */
export interface PdfJob {
  data: Uint8Array;
  maxPages: number;
  maxTextBytes: number;
  maxDecodedBytes: number;
}

/** 'progress' is real work done; 'data' is the next page's text, in order; 'done' carries pdf.js's version. */
type PdfWorkerMessage = WorkerMessage<string>;

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
type PdfDocument = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;

const port = parentPort;
if (!port) throw new Error('pdf-worker.ts runs only as a worker thread.');
lowerThreadPriority();
const post = (message: PdfWorkerMessage) => port.postMessage(message);

/**
 * A backstop for what the decoded-bytes budget does not see: memory outside the heap this
 * thread may hold — its decoded streams (within their budget), the previous document's not yet
 * collected (as much again), the PDF's bytes and pdf.js's copies of them, and some room.
 * Checked at every step reported to the host; a thread over it is ended (PDF_EXTRACTION_FAILED).
 */
let outsideHeapLimit = Number.POSITIVE_INFINITY;
const MEMORY_SLACK = 64 * 1024 * 1024;

function step(message: PdfWorkerMessage): void {
  const { arrayBuffers } = process.memoryUsage();
  if (arrayBuffers > outsideHeapLimit) {
    const error = new DriverError('PDF_EXTRACTION_FAILED', `pdf.js held ${arrayBuffers} bytes outside its heap, more than the ${outsideHeapLimit} allowed.`);
    post({ type: 'error', error: error.toJSON(), fatal: true });
    throw error;
  }
  post(message);
}

const budget = new DecodedBudget((error) => post({ type: 'error', error: error.toJSON(), fatal: true }));
// pdf.js's own worker code, with its stream decoders charging the budget, installed before the
// API module first sets up its (in-thread) worker.
const loading = installPdfJsDecodedBudget(budget).then(() => import((workerData as PdfWorkerData).pdfjs ?? 'pdfjs-dist/legacy/build/pdf.mjs') as Promise<PdfJs>);
loading.catch(() => {}); // reported with the first job

async function extract({ data, maxPages, maxTextBytes }: PdfJob): Promise<void> {
  const pdfjs = await loading.catch((error: unknown) => {
    throw new DriverError('PDF_EXTRACTOR_UNAVAILABLE', 'The PDF extractor (pdfjs-dist) could not be loaded.', { cause: error });
  });
  post({ type: 'started' });
  const task = pdfjs.getDocument({
    data,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    enableXfa: false,
    stopAtErrors: false,
  });
  try {
    const document = await task.promise.catch((error: unknown) => {
      throw loadError(error);
    });
    step({ type: 'progress' });
    const { info } = (await document.getMetadata().catch((error: unknown) => {
      throw pageError(error);
    })) as { info: { EncryptFilterName?: string | null } };
    if (info.EncryptFilterName) throw encrypted();
    const total = document.numPages;
    if (!Number.isInteger(total) || total < 1) throw new DriverError('INVALID_EXTRACTION', `pdf.js reported ${String(total)} pages.`);
    if (total > maxPages) throw new DriverError('DOCUMENT_LIMIT', `The PDF has ${total} pages; at most ${maxPages} are allowed.`);
    let textBytes = 0;
    for (let number = 1; number <= total; number++) {
      const text = await pageText(document, number, textBytes, maxTextBytes).catch((error: unknown) => {
        throw pageError(error);
      });
      textBytes += Buffer.byteLength(text, 'utf8');
      if (textBytes > maxTextBytes) throw textLimit(maxTextBytes);
      step({ type: 'data', data: text });
    }
    post({ type: 'done', result: { version: pdfjs.version } });
  } finally {
    await task.destroy().catch(() => {});
  }
}

/**
 * A page's text, read from pdf.js's text stream so a page is stopped as soon as the document's
 * text passes `maxTextBytes` (a small compressed content stream can hold a lot of text).
 */
async function pageText(document: PdfDocument, number: number, usedBytes: number, maxTextBytes: number): Promise<string> {
  const page = await document.getPage(number);
  const reader = (page.streamTextContent() as ReadableStream<{ items: unknown[] }>).getReader();
  try {
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const item of value.items as { str?: string; hasEOL?: boolean }[]) {
        if (typeof item.str !== 'string') continue; // marked-content boundaries carry no text
        text += item.str;
        if (item.hasEOL) text += '\n';
      }
      // UTF-16 code units never outnumber UTF-8 bytes, so this errs only towards going on.
      if (usedBytes + text.length > maxTextBytes) throw textLimit(maxTextBytes);
      step({ type: 'progress' });
    }
    return cleanPageText(text);
  } finally {
    // The stream is not cancelled when the budget runs out: pdf.js 5.4 then closes the cancelled
    // stream again and rejects unhandled. Destroying the loading task (always done) stops the
    // page's work instead.
    page.cleanup();
  }
}

const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Extracted text is the extractor's output, not the author's: characters that cannot be indexed
 * (NUL, unpaired surrogates, U+FFFD for glyphs without a Unicode mapping) are dropped, not refused.
 */
function cleanPageText(text: string): string {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000\uFFFD]/g, '')
    .replace(LONE_SURROGATES, '')
    .split('\n')
    .map((line) => line.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

function textLimit(maxTextBytes: number): DriverError {
  return new DriverError('DOCUMENT_LIMIT', `The PDF's text is more than ${maxTextBytes} bytes.`);
}

function encrypted(): DriverError {
  return new DriverError('PDF_ENCRYPTED', 'The PDF is encrypted; decrypt it before ingesting it.');
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : '';
}

/** Whatever stops pdf.js from opening the file means the file is not a usable PDF. */
function loadError(error: unknown): DriverError {
  if (error instanceof DriverError) return error;
  if (errorName(error) === 'PasswordException') return encrypted();
  return new DriverError('INVALID_DOCUMENT', `The PDF could not be read: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300), {
    cause: error,
  });
}

function pageError(error: unknown): DriverError {
  if (error instanceof DriverError) return error;
  if (['InvalidPDFException', 'FormatError'].includes(errorName(error))) return loadError(error);
  return new DriverError('PDF_EXTRACTION_FAILED', `pdf.js failed to extract the text: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300), {
    cause: error,
  });
}

port.on('message', (job: PdfJob) => {
  budget.reset(job.maxDecodedBytes);
  outsideHeapLimit = 2 * job.maxDecodedBytes + 3 * job.data.byteLength + MEMORY_SLACK;
  extract(job).catch((error: unknown) => {
    const failure =
      error instanceof DriverError
        ? error
        : new DriverError('PDF_EXTRACTION_FAILED', `The PDF worker failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300));
    post({ type: 'error', error: failure.toJSON() });
  });
});
