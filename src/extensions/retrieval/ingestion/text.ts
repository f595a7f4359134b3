/** Text validity and normalisation shared by every format. */
import { DriverError } from '../../../protocol/errors.js';

const encoder = new TextEncoder();
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

/**
 * CRLF and lone CR become LF. Refuses text that cannot round-trip through UTF-8 (lone
 * surrogates) or that holds NUL characters: both mean binary or damaged input.
 */
export function normalizeText(text: string, what: string): string {
  if (LONE_SURROGATE.test(text)) throw new DriverError('INVALID_DOCUMENT', `${what} is not valid Unicode (it has an unpaired surrogate).`);
  if (text.includes('\u0000')) throw new DriverError('INVALID_DOCUMENT', `${what} contains NUL characters; it looks like binary data, not text.`);
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

/** Strict UTF-8 decoding of file bytes (a leading BOM is dropped); invalid bytes → INVALID_DOCUMENT. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DriverError('INVALID_DOCUMENT', `${what} is not valid UTF-8 text.`);
  }
}
