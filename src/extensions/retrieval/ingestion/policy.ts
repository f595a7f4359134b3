/**
 * The bounds of one ingestion (reference defaults and maxima). Every value is an upper bound
 * the host sets; a request can only lower the chunk size.
 */
import { DriverError } from '../../../protocol/errors.js';

export interface IngestionPolicy {
  /** Original document bytes (PDF bytes, UTF-8 text, the canonical email thread JSON). */
  maxDocumentBytes: number;
  /** UTF-8 bytes of the extracted text. */
  maxTextBytes: number;
  maxPages: number;
  maxMessages: number;
  maxChunks: number;
  maxChunkBytes: number;
  /**
   * Bytes a PDF's streams may decode to, all of them together: a small stream that inflates to
   * more (a decompression bomb) is DOCUMENT_LIMIT, refused while it inflates.
   */
  maxDecodedBytes: number;
  /**
   * Time a document's extraction (PDF text, Markdown structure) may take in its worker thread,
   * from the moment the thread begins it; past it the thread is ended and the answer is TIMEOUT.
   */
  extractionTimeoutMs: number;
  /**
   * There is no OCR: a PDF page without a text layer is reported in `pages.empty` when this
   * is true, and refused with OCR_REQUIRED when false. A PDF with no text at all is always
   * EMPTY_EXTRACTION.
   */
  allowEmptyPdfPages: boolean;
}

const MIB = 1024 * 1024;

type NumericKey = Exclude<keyof IngestionPolicy, 'allowEmptyPdfPages'>;

/** [default, minimum, maximum] per numeric bound. */
const BOUNDS: Record<NumericKey, [number, number, number]> = {
  maxDocumentBytes: [8 * MIB, 1, 32 * MIB],
  maxTextBytes: [MIB, 1, MIB],
  maxPages: [200, 1, 1000],
  maxMessages: [1000, 1, 1000],
  maxChunks: [256, 1, 256],
  maxChunkBytes: [2048, 128, 16_384],
  maxDecodedBytes: [128 * MIB, MIB, 1024 * MIB],
  extractionTimeoutMs: [60_000, 100, 600_000],
};

export const DEFAULT_INGESTION_POLICY: Readonly<IngestionPolicy> = Object.freeze({
  ...(Object.fromEntries(Object.entries(BOUNDS).map(([key, [value]]) => [key, value])) as Record<NumericKey, number>),
  allowEmptyPdfPages: true,
});

/** The defaults with `partial` applied; any unknown field or out-of-range value → INVALID_CONFIG. */
export function ingestionPolicy(partial: Partial<IngestionPolicy> = {}): IngestionPolicy {
  if (partial === null || typeof partial !== 'object' || Array.isArray(partial)) {
    throw new DriverError('INVALID_CONFIG', 'The ingestion policy must be an object.');
  }
  const policy: IngestionPolicy = { ...DEFAULT_INGESTION_POLICY };
  for (const [key, value] of Object.entries(partial)) {
    if (value === undefined) continue;
    if (key === 'allowEmptyPdfPages') {
      if (typeof value !== 'boolean') throw new DriverError('INVALID_CONFIG', 'ingestion.allowEmptyPdfPages must be a boolean.');
      policy.allowEmptyPdfPages = value;
      continue;
    }
    const bounds = BOUNDS[key as NumericKey];
    if (!bounds) throw new DriverError('INVALID_CONFIG', `ingestion.${key} is not an ingestion setting.`);
    const [, min, max] = bounds;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new DriverError('INVALID_CONFIG', `ingestion.${key} must be an integer from ${min} to ${max}.`);
    }
    policy[key as NumericKey] = value;
  }
  return policy;
}
