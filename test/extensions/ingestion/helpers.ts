import assert from 'node:assert/strict';
import { DriverError } from '../../../src/protocol/errors.js';
import { IngestionManifest } from '../../../src/protocol/schemas.js';
import { validatorFor } from '../../../src/protocol/validate.js';
import type { PreparedDocument } from '../../../src/extensions/retrieval/ingestion/index.js';

const isManifest = validatorFor<IngestionManifest>(IngestionManifest);

/** Rejects with a DriverError of `code` whose message matches `message`. */
export async function rejectsWith(work: Promise<unknown> | (() => unknown), code: string, message?: RegExp): Promise<DriverError> {
  let caught: unknown;
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof DriverError, `expected DriverError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}

/** The invariants every prepared document keeps, whatever its format. */
export function assertWellFormed(prepared: PreparedDocument): void {
  assert.equal(isManifest.explain(prepared.ingestion), undefined);
  const { ingestion, chunks } = prepared;
  assert.equal(ingestion.chunks, chunks.length);
  assert.ok(ingestion.indexedTextBytes >= 1 && ingestion.indexedTextBytes <= ingestion.extractedTextBytes);
  let indexed = 0;
  for (const chunk of chunks) {
    assert.match(chunk.id, /^p-[0-9a-f]{64}$/);
    assert.ok(Buffer.byteLength(chunk.text, 'utf8') <= ingestion.chunker.maxBytes, 'chunk over maxBytes');
    assert.ok(!chunk.text.includes('\uFFFD'), 'chunk holds U+FFFD');
    assert.ok(chunk.text.trim() !== '', 'blank chunk');
    assert.equal(chunk.location.documentId, prepared.source.id);
    assert.ok(chunk.location.startLine! <= chunk.location.endLine!);
    indexed += Buffer.byteLength(chunk.text, 'utf8');
  }
  assert.equal(indexed, ingestion.indexedTextBytes);
  assert.equal(new Set(chunks.map((chunk) => chunk.id)).size, chunks.length, 'chunk ids repeat');
}

/** The pdf.js stand-in the PDF worker imports for `mode` (see fake-pdfjs.ts). */
export function fakePdfJs(mode: 'missing' | 'failing-page' | 'no-pages' | 'spin' | 'exit' | 'uncaught-throw' | 'out-of-memory'): string {
  return new URL(`./fake-pdfjs.ts?mode=${mode}`, import.meta.url).href;
}
