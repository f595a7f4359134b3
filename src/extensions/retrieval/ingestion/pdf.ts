/**
 * PDF text extraction with pdf.js (its legacy build runs on Node 20; the "fake" in-thread worker,
 * no canvas, no system binaries). Bounded by the page and text limits, abortable between every
 * pdf.js step, and the loading task is always destroyed.
 */
import { DriverError } from '../../../protocol/errors.js';
import { raceAbort, throwIfAborted, type IngestionProgress } from './abort.js';
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

export type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
export type PdfJsLoader = () => Promise<PdfJs>;

/** A loader that imports pdf.js once; a failed import is PDF_EXTRACTOR_UNAVAILABLE and is retried next time. */
export function pdfJsLoader(importer: () => Promise<PdfJs> = () => import('pdfjs-dist/legacy/build/pdf.mjs')): PdfJsLoader {
  let loading: Promise<PdfJs> | undefined;
  return () => {
    loading ??= importer().catch((error: unknown) => {
      loading = undefined;
      throw new DriverError('PDF_EXTRACTOR_UNAVAILABLE', 'The PDF extractor (pdfjs-dist) could not be loaded.', { cause: error });
    });
    return loading;
  };
}

const loadPdfJs = pdfJsLoader();

export const PDF_SIGNATURE = '%PDF-';

export async function extractPdfPages(
  bytes: Uint8Array,
  limits: PdfLimits,
  progress: IngestionProgress = {},
  load: PdfJsLoader = loadPdfJs,
): Promise<PdfExtraction> {
  const { signal, onProgress } = progress;
  if (Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 5)).toString('latin1') !== PDF_SIGNATURE) {
    throw new DriverError('INVALID_DOCUMENT', 'The document is not a PDF (it does not start with "%PDF-").');
  }
  const pdfjs = await load();
  throwIfAborted(signal);
  const task = pdfjs.getDocument({
    // pdf.js may take over the buffer it is given; hand it a copy.
    data: new Uint8Array(bytes),
    verbosity: pdfjs.VerbosityLevel.ERRORS,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    enableXfa: false,
    stopAtErrors: false,
  });
  try {
    const document = await raceAbort(task.promise, signal).catch((error: unknown) => {
      throw loadError(error);
    });
    onProgress?.();
    const { info } = (await raceAbort(document.getMetadata(), signal).catch((error: unknown) => {
      throw pageError(error);
    })) as { info: { EncryptFilterName?: string | null } };
    if (info.EncryptFilterName) throw encrypted();
    const total = document.numPages;
    if (!Number.isInteger(total) || total < 1) throw new DriverError('INVALID_EXTRACTION', `pdf.js reported ${String(total)} pages.`);
    if (total > limits.maxPages) {
      throw new DriverError('DOCUMENT_LIMIT', `The PDF has ${total} pages; at most ${limits.maxPages} are allowed.`);
    }
    const pages: string[] = [];
    let textBytes = 0;
    for (let number = 1; number <= total; number++) {
      throwIfAborted(signal);
      const text = await raceAbort(pageText(document, number, textBytes, limits.maxTextBytes, onProgress), signal).catch((error: unknown) => {
        throw pageError(error);
      });
      textBytes += Buffer.byteLength(text, 'utf8');
      if (textBytes > limits.maxTextBytes) throw textLimit(limits.maxTextBytes);
      pages.push(text);
      onProgress?.();
    }
    return { extractor: { id: 'pdfjs', version: pdfjs.version }, pages, textBytes };
  } finally {
    await task.destroy().catch(() => {});
  }
}

type PdfDocument = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;

/**
 * A page's text, read from pdf.js's text stream so a page is stopped as soon as the document's
 * text passes `maxTextBytes` (a small compressed content stream can hold a lot of text).
 */
async function pageText(document: PdfDocument, number: number, usedBytes: number, maxTextBytes: number, onProgress?: () => void): Promise<string> {
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
      onProgress?.();
    }
    return cleanPageText(text);
  } finally {
    // The stream is not cancelled when the budget runs out: pdf.js 5.4 then closes the cancelled
    // stream again and rejects unhandled. Destroying the loading task (the caller always does)
    // stops the page's work instead.
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
