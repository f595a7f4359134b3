/**
 * PDF text extraction, host side. pdf.js runs in a worker thread (pdf-worker.ts), one document
 * at a time per thread, never on the host's event loop: aborting the signal (a cancel or the
 * caller's idle timer) terminates the thread at once, even inside a page; the thread's heap is
 * capped and its crash or out-of-memory is PDF_EXTRACTION_FAILED; and at most MAX_PDF_WORKERS
 * run at once, the rest waiting in line (abortable).
 */
import { availableParallelism } from 'node:os';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { DriverError } from '../../../protocol/errors.js';
import { abortError, throwIfAborted, type IngestionProgress } from './abort.js';
import type { PdfJob, PdfWorkerData, PdfWorkerMessage } from './pdf-worker.js';
import { Semaphore } from './semaphore.js';
import type { ExtractorIdentity } from './types.js';

export interface PdfLimits {
  maxPages: number;
  maxTextBytes: number;
}

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

/** Leaves a core for the host's event loop; 1 on a 2-core machine, at most 4. */
export const MAX_PDF_WORKERS = Math.max(1, Math.min(4, availableParallelism() - 1));

/**
 * A 32 MiB PDF's bytes live outside the JS heap (an ArrayBuffer); its parsed objects, fonts
 * and text fit well within 256 MiB (a 29 MB, 1,000-page PDF peaked at 200 MB RSS for the
 * whole process), and a PDF that needs more fails rather than grows the host's memory.
 */
export const PDF_WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };

const slots = new Semaphore(MAX_PDF_WORKERS);

/** Threads working now, extractions waiting for one, warm threads idle (for tests and diagnostics). */
export function pdfWorkerStats(): { running: number; waiting: number; idle: number } {
  const { held, waiting } = slots.stats;
  return { running: held, waiting, idle: idle.length };
}

/**
 * Built, the worker is dist/…/pdf-worker.js next to this file. Under tsx (tests, bench) this
 * file is pdf.ts and Node 20 does not apply tsx's loader to a worker's entry file, so a small
 * bootstrap registers tsx in the thread and then imports pdf-worker.ts. It loads pdf.js first,
 * natively: through tsx's loader its 2 MB modules take seconds per thread.
 */
function workerEntry(): { entry: URL | string; eval: boolean } {
  if (!import.meta.url.endsWith('.ts')) return { entry: new URL('./pdf-worker.js', import.meta.url), eval: false };
  const url = (specifier: string) => JSON.stringify(import.meta.resolve(specifier));
  // A missing pdf.js is reported by the worker (PDF_EXTRACTOR_UNAVAILABLE), not here.
  const preload = [PDFJS, 'pdfjs-dist/legacy/build/pdf.worker.mjs'].flatMap((module) => {
    try {
      return [`import(${url(module)}).catch(() => {})`];
    } catch {
      return [];
    }
  });
  const worker = JSON.stringify(new URL('./pdf-worker.ts', import.meta.url).href);
  return {
    entry: `Promise.all([${preload.join(', ')}]).then(() => import(${url('tsx/esm/api')})).then((api) => { api.register(); return import(${worker}); });`,
    eval: true,
  };
}

const WORKER = workerEntry();

export async function extractPdfPages(bytes: Uint8Array, limits: PdfLimits, progress: IngestionProgress = {}, options: PdfWorkerOptions = {}): Promise<PdfExtraction> {
  const { signal } = progress;
  if (Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 5)).toString('latin1') !== PDF_SIGNATURE) {
    throw new DriverError('INVALID_DOCUMENT', 'The document is not a PDF (it does not start with "%PDF-").');
  }
  const release = await slots.acquire(signal);
  try {
    throwIfAborted(signal);
  } catch (error) {
    release();
    throw error;
  }
  return runJob(bytes, limits, progress, options, release);
}

/**
 * Threads with the real pdf.js and default limits are kept warm between documents (a fresh
 * thread starts with cold code and runs at about half speed); idle, they do not keep the
 * process alive, are retired after IDLE_MS, and are replaced after RECYCLE_AFTER documents.
 */
const IDLE_MS = 60_000;
const RECYCLE_AFTER = 100;
const idle: { worker: Worker; jobs: number; timer: NodeJS.Timeout; onExit: () => void }[] = [];
/** Refusals of the document itself: the thread that refused it is sound. */
const DOCUMENT_REFUSALS = new Set(['INVALID_DOCUMENT', 'PDF_ENCRYPTED', 'DOCUMENT_LIMIT', 'INVALID_EXTRACTION']);

function spawnWorker(options: PdfWorkerOptions): Worker {
  const workerData: PdfWorkerData = { pdfjs: options.pdfjs ?? PDFJS };
  return new Worker(WORKER.entry, { eval: WORKER.eval, workerData, resourceLimits: options.resourceLimits ?? PDF_WORKER_LIMITS, stdin: false });
}

function takeWorker(options: PdfWorkerOptions): { worker: Worker; jobs: number; reusable: boolean } {
  const reusable = options.pdfjs === undefined && options.resourceLimits === undefined;
  const warm = reusable ? idle.pop() : undefined;
  if (warm) {
    clearTimeout(warm.timer);
    warm.worker.off('exit', warm.onExit);
    warm.worker.ref();
    return { worker: warm.worker, jobs: warm.jobs, reusable };
  }
  return { worker: spawnWorker(options), jobs: 0, reusable };
}

function keepWarm(worker: Worker, jobs: number): void {
  if (jobs >= RECYCLE_AFTER) return void worker.terminate();
  worker.unref();
  const entry = { worker, jobs, timer: setTimeout(() => retire(entry), IDLE_MS).unref(), onExit: () => retire(entry) };
  idle.push(entry);
  worker.once('exit', entry.onExit);
}

function retire(entry: (typeof idle)[number]): void {
  const index = idle.indexOf(entry);
  if (index < 0) return;
  idle.splice(index, 1);
  clearTimeout(entry.timer);
  void entry.worker.terminate();
}

function runJob(bytes: Uint8Array, limits: PdfLimits, { signal, onProgress }: IngestionProgress, options: PdfWorkerOptions, release: () => void): Promise<PdfExtraction> {
  const { worker, jobs, reusable } = takeWorker(options);
  // The worker gets its own copy, moved rather than cloned.
  const data = new Uint8Array(bytes);
  const job: PdfJob = { data, maxPages: limits.maxPages, maxTextBytes: limits.maxTextBytes };
  return new Promise<PdfExtraction>((resolve, reject) => {
    const pages: string[] = [];
    let textBytes = 0;
    let settled = false;
    const settle = (error: DriverError | undefined, result?: PdfExtraction, exited = false) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      // A thread that finished its document (or refused it) is kept for the next; any other is
      // ended, and its place in the line is given back once it is gone, not before.
      if (reusable && (!error || (DOCUMENT_REFUSALS.has(error.code) && !signal?.aborted))) {
        keepWarm(worker, jobs + 1);
        release();
      } else if (exited) {
        release();
      } else {
        worker.once('exit', release);
        void worker.terminate();
      }
      if (error) reject(error);
      else resolve(result!);
    };
    const onAbort = () => settle(abortError(signal!));
    const onMessage = (message: PdfWorkerMessage) => {
      if (settled) return;
      switch (message.type) {
        case 'progress':
          onProgress?.();
          return;
        case 'page':
          textBytes += Buffer.byteLength(message.text, 'utf8');
          pages.push(message.text);
          onProgress?.();
          return;
        case 'done':
          settle(undefined, { extractor: { id: 'pdfjs', version: message.version }, pages, textBytes });
          return;
        case 'error':
          settle(DriverError.from(message.error));
      }
    };
    const onError = (error: Error & { code?: string }) => {
      const reason = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `it ran out of memory (${error.message})` : error.message;
      settle(failed(`The PDF worker failed: ${reason}`));
    };
    const onExit = (code: number) => settle(failed(`The PDF worker stopped (exit code ${code}) before it finished.`), undefined, true);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage(job, [data.buffer]);
  });
}

function failed(message: string): DriverError {
  return new DriverError('PDF_EXTRACTION_FAILED', message.slice(0, 300));
}
