/**
 * Run as its own process by pdf-worker.test.ts: pdf.js spins in its worker, the extraction is
 * aborted, and the process must then end by itself (a thread left running would keep it alive).
 */
import { extractPdfPages } from '../../../src/extensions/retrieval/ingestion/pdf.js';
import { DriverError } from '../../../src/protocol/errors.js';
import { fakePdfJs } from './helpers.js';
import { makePdf } from './pdfs.js';

const controller = new AbortController();
setTimeout(() => controller.abort(), 300);
try {
  await extractPdfPages(await makePdf([['one page']]), { maxPages: 10, maxTextBytes: 1024 }, { signal: controller.signal }, { pdfjs: fakePdfJs('spin') });
  console.log('extracted');
} catch (error) {
  console.log(error instanceof DriverError ? error.code : String(error));
}
