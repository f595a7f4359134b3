/**
 * Inside the PDF worker thread: a budget of the bytes pdf.js decodes from a document's streams,
 * so a small stream that inflates to gigabytes (a decompression bomb) is refused while it
 * inflates, before the bytes exist. The V8 heap cap does not cover them: decoded streams are
 * ArrayBuffers, outside the heap.
 *
 * pdf.js decodes a stream in one of two ways, and both are charged:
 * - Flate, asynchronously, through the platform's `DecompressionStream` (replaced in this thread
 *   by one that counts what comes out of it, twice: pdf.js joins the pieces into one copy);
 * - every filter (Flate with a predictor, LZW, RunLength, ASCII85, …) synchronously, growing
 *   one output buffer with `DecodeStream.ensureBuffer`. That class is internal to pdf.js's
 *   worker module, so this thread loads that module with one statement added to the method
 *   (charging the growth before it is allocated); the module is then handed to pdf.js as
 *   `globalThis.pdfjsWorker`, which it documents as the way to supply its worker code in the
 *   same thread. If the method's text is not the one expected (another pdf.js), loading fails
 *   and PDFs are refused (PDF_EXTRACTOR_UNAVAILABLE) rather than extracted without a bound.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DriverError } from '../../../protocol/errors.js';

export const PDFJS_WORKER_MODULE = 'pdfjs-dist/legacy/build/pdf.worker.mjs';
const CHARGE = '__agenticdriverChargeDecoded';

export class DecodedBudget {
  private limit = Number.POSITIVE_INFINITY;
  private used = 0;
  private reported = false;

  /** `onExceeded` is told once per document, before the charge that passes the limit throws. */
  constructor(private readonly onExceeded: (error: DriverError) => void) {}

  /** A new document: nothing used, `limit` bytes allowed. */
  reset(limit: number): void {
    this.limit = limit;
    this.used = 0;
    this.reported = false;
  }

  charge(bytes: number): void {
    this.used += bytes;
    if (this.used <= this.limit) return;
    const error = new DriverError('DOCUMENT_LIMIT', `The PDF's streams decode to more than ${this.limit} bytes.`);
    if (!this.reported) {
      this.reported = true;
      this.onExceeded(error);
    }
    throw error;
  }
}

/** DecodeStream.ensureBuffer up to the allocation of the grown buffer ($1), and that allocation ($2). */
const ENSURE_BUFFER = String.raw`( {2}ensureBuffer\(requested\) \{\n {4}const buffer = this\.buffer;\n[^}]*\}\n {4}let size = this\.minBufferLength;\n {4}while \(size < requested\) \{\n {6}size \*= 2;\n {4}\}\n)( {4}const buffer2 = new Uint8Array\(size\);)`;
const WITH_CHARGE = `$1    globalThis.${CHARGE}(size - buffer.byteLength);\n$2`;
/** The module's source map comment: relative to a data: URL it is no URL, and with source maps on (--enable-source-maps, tsx) loading would fail. */
const SOURCE_MAP = /\n\/\/# sourceMappingURL=[^\n]*\s*$/;

/**
 * pdf.js's worker module with `DecodeStream.ensureBuffer` charging the budget for the bytes it
 * is about to add to its buffer; throws when the method is not found exactly once.
 */
export function chargeEnsureBuffer(source: string): string {
  const method = new RegExp(ENSURE_BUFFER, 'g');
  const matches = source.match(method)?.length ?? 0;
  if (matches !== 1) throw new Error(`pdf.js's DecodeStream.ensureBuffer was found ${matches} times, not once: this pdf.js is not one the decoded-bytes budget supports.`);
  return source.replace(method, WITH_CHARGE).replace(SOURCE_MAP, '');
}

const moduleFromCode = (code: string) => import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);

/**
 * The same loading as plain JavaScript (a promise expression), for a thread bootstrap under tsx:
 * through tsx's loader the 2 MB module takes seconds, natively a few hundred milliseconds. It
 * leaves `pdfjsWorker` unset when anything fails; `installPdfJsDecodedBudget` then reports it.
 */
export function nativeWorkerModuleLoader(): string {
  const url = JSON.stringify(import.meta.resolve(PDFJS_WORKER_MODULE));
  return `import('node:fs/promises').then((fs) => fs.readFile(new URL(${url}), 'utf8')).then((source) => {
    const method = new RegExp(${JSON.stringify(ENSURE_BUFFER)}, 'g');
    if ((source.match(method) || []).length !== 1) return;
    const code = source.replace(method, ${JSON.stringify(WITH_CHARGE)}).replace(new RegExp(${JSON.stringify(SOURCE_MAP.source)}), '');
    return import('data:text/javascript;base64,' + Buffer.from(code).toString('base64')).then((module) => { globalThis.pdfjsWorker = module; });
  }).catch(() => {})`;
}

/** Installs both charges in this thread; call before pdf.js's API module is first used. */
export async function installPdfJsDecodedBudget(budget: DecodedBudget): Promise<void> {
  const Native = globalThis.DecompressionStream;
  class CountingDecompressionStream {
    readonly readable: ReadableStream<Uint8Array>;
    readonly writable: WritableStream<BufferSource>;
    constructor(format: CompressionFormat) {
      const inner = new Native(format);
      this.writable = inner.writable;
      this.readable = inner.readable.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            // The chunk, and its copy in the buffer pdf.js joins the chunks into.
            budget.charge(2 * chunk.byteLength);
            controller.enqueue(chunk);
          },
        }),
      );
    }
  }
  globalThis.DecompressionStream = CountingDecompressionStream as unknown as typeof DecompressionStream;
  const global = globalThis as Record<string, unknown>;
  global[CHARGE] = (bytes: number) => budget.charge(bytes);
  // Set by a bootstrap that loaded the charged module natively (nativeWorkerModuleLoader).
  if (global.pdfjsWorker) return;
  const source = await readFile(fileURLToPath(import.meta.resolve(PDFJS_WORKER_MODULE)), 'utf8');
  global.pdfjsWorker = await moduleFromCode(chargeEnsureBuffer(source));
}
