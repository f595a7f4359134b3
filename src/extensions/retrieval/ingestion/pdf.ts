/**
 * PDF text extraction, host side. pdf.js runs in a worker thread (pdf-worker.ts, through the
 * WorkerPool), never on the host's event loop: a fair line per subject, a time limit per
 * document, a capped heap, and a budget of decoded stream bytes (a decompression bomb is
 * DOCUMENT_LIMIT, the thread terminated before the bytes exist); aborting the signal (a
 * cancel or the caller's idle timer) terminates the thread at once, even inside a page; the
 * thread's crash or out-of-memory is PDF_EXTRACTION_FAILED.
 */
import type { ResourceLimits } from 'node:worker_threads';
import { DriverError } from '../../../protocol/errors.js';
import type { IngestionProgress } from './abort.js';
import type { IngestionPolicy } from './policy.js';
import type { PdfJob, PdfWorkerData } from './pdf-worker.js';
import type { ExtractorIdentity } from './types.js';
import { nativeWorkerModuleLoader } from './decoded-budget.js';
import { MAX_WORKERS, MAX_WORKERS_PER_SUBJECT, nativeImport, workerEntry, WorkerPool } from './worker-pool.js';

export type PdfLimits = Pick<IngestionPolicy, 'maxPages' | 'maxTextBytes' | 'maxDecodedBytes' | 'extractionTimeoutMs'>;

export interface PdfExtraction {
  extractor: ExtractorIdentity;
  /** The text of each page in order (LF lines; '' for a page without text). */
  pages: string[];
  textBytes: number;
}

export interface PdfWorkerOptions {
  /** The module the worker imports as pdf.js (tests pass a file URL of a failing stand-in). */
  pdfjs?: string;
  resourceLimits?: ResourceLimits;
}

export const PDF_SIGNATURE = '%PDF-';
const PDFJS = 'pdfjs-dist/legacy/build/pdf.mjs';

/** PDF threads at once (see MAX_WORKERS: one subject at most MAX_PDF_WORKERS_PER_SUBJECT). */
export const MAX_PDF_WORKERS = MAX_WORKERS;
export const MAX_PDF_WORKERS_PER_SUBJECT = MAX_WORKERS_PER_SUBJECT;

/**
 * A 32 MiB PDF's bytes live outside the JS heap (an ArrayBuffer), and so do the streams pdf.js
 * decodes — those are bounded by `maxDecodedBytes` instead; its parsed objects, fonts and text
 * fit well within 256 MiB (a 29 MB, 1,000-page PDF peaked at 200 MB RSS for the whole
 * process), and a PDF that needs more fails rather than grows the host's memory.
 */
export const PDF_WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };

const pool = new WorkerPool({
  what: 'PDF',
  entry: workerEntry('pdf-worker', [...nativeImport(PDFJS), nativeWorkerModuleLoader()]),
  limits: PDF_WORKER_LIMITS,
  failureCode: 'PDF_EXTRACTION_FAILED',
  refusals: new Set(['INVALID_DOCUMENT', 'PDF_ENCRYPTED', 'DOCUMENT_LIMIT', 'INVALID_EXTRACTION']),
});

/** Threads working now, extractions waiting for one, warm threads idle (for tests and diagnostics). */
export function pdfWorkerStats(): { running: number; waiting: number; idle: number } {
  return pool.stats();
}

export async function extractPdfPages(bytes: Uint8Array, limits: PdfLimits, progress: IngestionProgress = {}, options: PdfWorkerOptions = {}): Promise<PdfExtraction> {
  if (Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 5)).toString('latin1') !== PDF_SIGNATURE) {
    throw new DriverError('INVALID_DOCUMENT', 'The document is not a PDF (it does not start with "%PDF-").');
  }
  // The worker gets its own copy, moved rather than cloned.
  const data = new Uint8Array(bytes);
  const job: PdfJob = { data, maxPages: limits.maxPages, maxTextBytes: limits.maxTextBytes, maxDecodedBytes: limits.maxDecodedBytes };
  const pages: string[] = [];
  let textBytes = 0;
  const { version } = await pool.run<{ version: string }, string>({
    message: job,
    transfer: [data.buffer],
    key: progress.subject ?? '',
    timeoutMs: limits.extractionTimeoutMs,
    ...(progress.signal ? { signal: progress.signal } : {}),
    ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
    onData: (text) => {
      textBytes += Buffer.byteLength(text, 'utf8');
      pages.push(text);
    },
    ...(options.pdfjs !== undefined ? { workerData: { pdfjs: options.pdfjs } satisfies PdfWorkerData } : {}),
    ...(options.resourceLimits ? { resourceLimits: options.resourceLimits } : {}),
  });
  return { extractor: { id: 'pdfjs', version }, pages, textBytes };
}
