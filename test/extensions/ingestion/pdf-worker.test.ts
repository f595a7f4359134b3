import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { chargeEnsureBuffer, PDFJS_WORKER_MODULE } from '../../../src/extensions/retrieval/ingestion/decoded-budget.js';
import { extractPdfPages, MAX_PDF_WORKERS, MAX_PDF_WORKERS_PER_SUBJECT, pdfWorkerStats } from '../../../src/extensions/retrieval/ingestion/pdf.js';
import { fakePdfJs, rejectsWith } from './helpers.js';
import { makeBombPdf, makePdf } from './pdfs.js';

const limits = { maxPages: 1000, maxTextBytes: 1024 * 1024, maxDecodedBytes: 64 << 20, extractionTimeoutMs: 60_000 };

/** Polls until no PDF thread runs or waits (a thread's 'exit' gives its place back). */
async function allWorkersGone(): Promise<void> {
  for (let waited = 0; pdfWorkerStats().running + pdfWorkerStats().waiting > 0; waited += 20) {
    assert.ok(waited < 30_000, `PDF workers still running: ${JSON.stringify(pdfWorkerStats())}`);
    await sleep(20);
  }
}

const queue = () => {
  const { running, waiting } = pdfWorkerStats();
  return { running, waiting };
};

/** The longest gap between 10 ms ticks while `work` runs. */
async function longestTimerGap(work: Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  try {
    await work;
  } finally {
    clearInterval(ticker);
  }
  return longest;
}

describe('pdf worker thread', () => {
  it('terminates a pdf.js stuck in a synchronous loop as soon as the signal aborts, and the host keeps its timers', async () => {
    const bytes = await makePdf([['one page']]);
    const controller = new AbortController();
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = performance.now();
      controller.abort();
    }, 500);
    const work = rejectsWith(extractPdfPages(bytes, limits, { signal: controller.signal }, { pdfjs: fakePdfJs('spin') }), 'CANCELLED');
    const gap = await longestTimerGap(work);
    const afterAbort = performance.now() - abortedAt;
    // Wide margins (an idle process here sees 90 ms stalls when the 2 cores are shared): the
    // point is "not blocked", not a speed; pdf.js in this thread would never let a tick through.
    assert.ok(gap < 500, `the host's timers stalled for ${gap.toFixed(0)} ms`);
    assert.ok(afterAbort < 500, `the abort took ${afterAbort.toFixed(0)} ms to reach the caller`);
    await allWorkersGone();
  });

  it('leaves no thread behind: a process that aborts a stuck extraction exits by itself', async () => {
    const script = fileURLToPath(new URL('./pdf-abort-exit.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = (await new Promise((resolve) => child.once('exit', (...args) => resolve(args)))) as [number | null, string | null];
    clearTimeout(timer);
    assert.equal(signal, null, 'the process did not exit by itself within 60 s (a PDF thread was left running)');
    assert.equal(code, 0);
    assert.equal(output.trim(), 'warm\nCANCELLED');
  });

  it("keeps the host's event loop free while a several-hundred-page PDF is extracted", async () => {
    const pages = Array.from({ length: 400 }, (_, page) => Array.from({ length: 30 }, (_, line) => `Page ${page + 1} line ${line + 1}: words to extract.`));
    const bytes = await makePdf(pages);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let ticks = 0;
    const extraction = await extractPdfPages(bytes, limits, { onProgress: () => ticks++ });
    delay.disable();
    assert.equal(extraction.pages.length, 400);
    assert.equal(extraction.pages[399], pages[399]!.join('\n'));
    assert.ok(ticks >= 400);
    const maxMs = delay.max / 1e6;
    // A wide bound for a loaded machine (see above), far below what a pdf.js loop would cost.
    assert.ok(maxMs < 500, `the event loop was blocked for ${maxMs.toFixed(0)} ms`);
  });

  it('turns a worker that exits, throws outside any promise or runs out of memory into PDF_EXTRACTION_FAILED', async () => {
    const bytes = await makePdf([['Still readable']]);
    await rejectsWith(extractPdfPages(bytes, limits, {}, { pdfjs: fakePdfJs('exit') }), 'PDF_EXTRACTION_FAILED', /exit code 7/);
    await rejectsWith(extractPdfPages(bytes, limits, {}, { pdfjs: fakePdfJs('uncaught-throw') }), 'PDF_EXTRACTION_FAILED', /blew up outside any promise/);
    // A small heap so the test runs out of it quickly; the default limit is PDF_WORKER_LIMITS.
    const small = { maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 4 };
    await rejectsWith(extractPdfPages(bytes, limits, {}, { pdfjs: fakePdfJs('out-of-memory'), resourceLimits: small }), 'PDF_EXTRACTION_FAILED', /out of memory/);
    // The host thread is unharmed and the next PDF extracts.
    assert.deepEqual((await extractPdfPages(bytes, limits)).pages, ['Still readable']);
    await allWorkersGone();
  });

  it('keeps a thread warm for the next PDF, also after a refused one, but never one that was aborted', async () => {
    const bytes = await makePdf([['Warm page']]);
    await extractPdfPages(bytes, limits);
    assert.equal(pdfWorkerStats().idle, 1);
    await rejectsWith(extractPdfPages(bytes, { ...limits, maxPages: 0 }), 'DOCUMENT_LIMIT');
    await rejectsWith(extractPdfPages(Buffer.from('%PDF-1.7 nonsense'), limits), 'INVALID_DOCUMENT');
    assert.deepEqual(pdfWorkerStats(), { running: 0, waiting: 0, idle: 1 });
    const controller = new AbortController();
    await rejectsWith(extractPdfPages(bytes, limits, { signal: controller.signal, onProgress: () => controller.abort() }), 'CANCELLED');
    await allWorkersGone();
    assert.equal(pdfWorkerStats().idle, 0);
    // Many documents through one warm thread, each with its own text.
    for (let n = 1; n <= 12; n++) assert.deepEqual((await extractPdfPages(await makePdf([[`document ${n}`]]), limits)).pages, [`document ${n}`]);
    assert.equal(pdfWorkerStats().idle, 1);
  });

  it(`runs at most ${MAX_PDF_WORKERS} PDF threads; the rest wait in line and leave it when aborted`, async () => {
    const bytes = await makePdf([['Queued page']]);
    // One subject each, so no subject's own cap is what holds the line.
    const spinners = Array.from({ length: MAX_PDF_WORKERS }, () => new AbortController());
    const spinning = spinners.map((controller, index) =>
      rejectsWith(extractPdfPages(bytes, limits, { signal: controller.signal, subject: `spinner-${index}` }, { pdfjs: fakePdfJs('spin') }), 'CANCELLED'),
    );
    const queued = new AbortController();
    const leaving = rejectsWith(extractPdfPages(bytes, limits, { signal: queued.signal, subject: 'late' }), 'CANCELLED');
    const waiting = extractPdfPages(bytes, limits, { subject: 'late' });
    assert.deepEqual(queue(), { running: MAX_PDF_WORKERS, waiting: 2 });
    queued.abort();
    await leaving;
    assert.deepEqual(queue(), { running: MAX_PDF_WORKERS, waiting: 1 });
    // The line moves when a thread is gone.
    spinners.forEach((controller) => controller.abort());
    await Promise.all(spinning);
    assert.deepEqual((await waiting).pages, ['Queued page']);
    await allWorkersGone();
  });

  it(`holds one subject to ${MAX_PDF_WORKERS_PER_SUBJECT} thread(s): another subject's PDF runs at once, not after the first one's line`, async () => {
    const bytes = await makePdf([['Tenant B page']]);
    const hogs = Array.from({ length: MAX_PDF_WORKERS_PER_SUBJECT + 2 }, () => new AbortController());
    const hogging = hogs.map((controller) => rejectsWith(extractPdfPages(bytes, limits, { signal: controller.signal, subject: 'tenant-a' }, { pdfjs: fakePdfJs('spin') }), 'CANCELLED'));
    assert.deepEqual(queue(), { running: MAX_PDF_WORKERS_PER_SUBJECT, waiting: 2 });
    // tenant-b's document takes the place tenant-a may not, while tenant-a's two still wait.
    assert.deepEqual((await extractPdfPages(bytes, limits, { subject: 'tenant-b' })).pages, ['Tenant B page']);
    assert.equal(queue().waiting, 2);
    hogs.forEach((controller) => controller.abort());
    await Promise.all(hogging);
    await allWorkersGone();
  });

  it('ends a PDF that runs past its time limit with TIMEOUT and terminates its thread', async () => {
    const bytes = await makePdf([['Never finished']]);
    await rejectsWith(extractPdfPages(bytes, { ...limits, extractionTimeoutMs: 200 }, {}, { pdfjs: fakePdfJs('spin') }), 'TIMEOUT', /time limit \(200 ms\)/);
    await allWorkersGone();
    assert.deepEqual((await extractPdfPages(bytes, limits)).pages, ['Never finished']);
  });

  it('refuses a decompression bomb with DOCUMENT_LIMIT while it inflates, on both of pdf.js\'s decoding paths, and ends its thread', async () => {
    const budget = { ...limits, maxDecodedBytes: 16 * 1024 * 1024 };
    // 64 MiB of white space each, in about 64 KiB.
    for (const predictor of [false, true]) {
      const bomb = await makeBombPdf(64, { predictor });
      assert.ok(bomb.length < 100_000);
      await rejectsWith(extractPdfPages(bomb, budget), 'DOCUMENT_LIMIT', /decode to more than 16777216 bytes/);
      await allWorkersGone();
      assert.equal(pdfWorkerStats().idle, 0, 'a thread over its budget is not kept');
    }
    // Under the budget, the same construction is an ordinary PDF.
    for (const predictor of [false, true]) assert.deepEqual((await extractPdfPages(await makeBombPdf(1, { predictor, text: 'Small enough' }), budget)).pages, ['Small enough']);
    await allWorkersGone();
  });
});

describe("pdf.js's worker module with the decoded-bytes charge", () => {
  it('adds the charge to DecodeStream.ensureBuffer once, drops the source map comment (no URL relative to data:), and refuses another pdf.js', async () => {
    const source = await readFile(fileURLToPath(import.meta.resolve(PDFJS_WORKER_MODULE)), 'utf8');
    const charged = chargeEnsureBuffer(source);
    assert.equal(charged.split('globalThis.__agenticdriverChargeDecoded(size - buffer.byteLength);').length, 2);
    assert.doesNotMatch(charged.slice(-500), /sourceMappingURL/);
    assert.throws(() => chargeEnsureBuffer(source.replace('const buffer2 = new Uint8Array(size);', 'const buffer2 = new Uint8Array(size * 1);')), /found 0 times/);
  });
});
