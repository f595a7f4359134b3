/**
 * Run as its own process by pdf-worker.test.ts: one PDF is extracted (its thread stays warm),
 * then pdf.js spins in another thread and that extraction is aborted; the process must then end
 * by itself (a thread left running, or a warm one holding the loop, would keep it alive).
 */
import { extractPdfPages } from '../../../src/extensions/retrieval/ingestion/pdf.js';
import { DriverError } from '../../../src/protocol/errors.js';
import { fakePdfJs } from './helpers.js';
import { makePdf } from './pdfs.js';

const limits = { maxPages: 10, maxTextBytes: 1024, maxDecodedBytes: 64 << 20, extractionTimeoutMs: 60_000 };
console.log((await extractPdfPages(await makePdf([['warm']]), limits)).pages.join());
const controller = new AbortController();
setTimeout(() => controller.abort(), 300);
try {
  await extractPdfPages(await makePdf([['one page']]), limits, { signal: controller.signal }, { pdfjs: fakePdfJs('spin') });
  console.log('extracted');
} catch (error) {
  console.log(error instanceof DriverError ? error.code : String(error));
}
