/**
 * Issue 25, items 1, 2, 3 and 6, against a real host on loopback: two subjects ingest at once,
 * one of them the documents that froze or filled the earlier host — Markdown that stalled its
 * event loop for tens of seconds, PDF decompression bombs, slow PDFs, a flood of indexing — and
 * the other one ordinary documents. Each hostile document gets its typed error, the other
 * subject's documents are indexed, and `GET /health` keeps answering meanwhile (a wide bound
 * here: the figure itself is printed by bench/hostile-ingestion.ts).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { OTHER_TOKEN, startTestHost, TOKEN, type TestHost } from '../../support/host.js';
import { makeBombPdf, makePdf, makeSlowPdf } from './pdfs.js';

const GRANTS = { search: ['docs', 'small'], index: ['docs', 'small'], delete: ['docs', 'small'] };

describe('hostile documents from two subjects at once, against a real host (issue 25)', () => {
  let host: TestHost;

  before(async () => {
    host = await startTestHost({
      tokens: [
        { id: 'alice', subject: 'alice', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], retrieval: GRANTS },
        { id: 'bob', subject: 'bob', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], retrieval: GRANTS },
      ],
      limits: { maxBodyBytes: 8_000_000 },
      retrieval: {
        corpora: [{ id: 'docs', namespace: 'subject' }, { id: 'small', capacity: { maxChunks: 3, maxBytes: 1_000_000 } }],
        // Two subjects may index: each gets half, 150 chunks. The ingestion bounds are the
        // defaults: 60 s per document, 128 MiB of decoded PDF streams.
        capacity: { maxChunks: 300, maxBytes: 10_000_000 },
      },
    });
  });

  after(async () => {
    await host.close();
    rmSync(host.dir, { recursive: true, force: true });
  });

  const ingest = async (token: string, id: string, document: Record<string, unknown>, corpus = 'docs') => {
    const response = await host.post('/v1/retrieval/ingest', { corpus, document: { source: { id, revision: 'r1' }, ...document } }, { authorization: `Bearer ${token}` });
    return { status: response.status, body: (await response.json()) as any };
  };
  const markdown = (text: string) => ({ type: 'text', mediaType: 'text/markdown', text });
  const pdf = (bytes: Uint8Array) => ({ type: 'pdf', mediaType: 'application/pdf', data: Buffer.from(bytes).toString('base64') });

  /** Runs `work` while GET /health is asked every 20 ms; the slowest answer, in ms. */
  async function slowestHealth<T>(work: Promise<T>): Promise<{ result: T; slowestMs: number; asked: number }> {
    let done = false;
    let slowestMs = 0;
    let asked = 0;
    const poller = (async () => {
      while (!done) {
        const started = performance.now();
        const response = await fetch(`${host.url}/health`);
        await response.arrayBuffer();
        slowestMs = Math.max(slowestMs, performance.now() - started);
        asked += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      return { result: await work, slowestMs, asked };
    } finally {
      done = true;
      await poller;
    }
  }

  it('item 1: Markdown that held the old event loop for tens of seconds is parsed in a thread, linearly; the other subject is served', async () => {
    const hostile = {
      // 4.8 s (×4,000) and 43 s (×8,000) of a stalled event loop before.
      nestedLists: markdown(`${'- '.repeat(8000)}x`),
      // 54 s before.
      nestedQuotes: markdown('>'.repeat(65_536)),
      // 13 s and +2.4 GB before; 262,144 top-level sections cannot make at most 256 chunks.
      headings: markdown('# h\n'.repeat(262_143)),
    };
    const ordinary = markdown('# Kettle\nThe kettle is in the north kitchen.\n\n# Reports\nExpense reports are due on Mondays.\n');
    const { result, slowestMs, asked } = await slowestHealth(
      Promise.all([
        ingest(TOKEN, 'lists', hostile.nestedLists),
        ingest(TOKEN, 'quotes', hostile.nestedQuotes),
        ingest(TOKEN, 'headings', hostile.headings),
        ingest(OTHER_TOKEN, 'handbook', ordinary),
      ]),
    );
    const [lists, quotes, headings, handbook] = result;
    assert.equal(lists.status, 200, JSON.stringify(lists.body));
    assert.equal(lists.body.ingestion.extractor.version, '2');
    assert.equal(quotes.status, 200, JSON.stringify(quotes.body));
    assert.equal(headings.status, 400);
    assert.equal(headings.body.error.code, 'DOCUMENT_LIMIT');
    assert.match(headings.body.error.message, /more than 256 top-level sections/);
    assert.equal(handbook.status, 200, JSON.stringify(handbook.body));
    assert.equal(handbook.body.chunks, 2);
    assert.ok(asked > 0);
    // Wide: the old host answered after the whole parse (tens of seconds).
    assert.ok(slowestMs < 2000, `GET /health took ${slowestMs.toFixed(0)} ms while the documents were parsed`);
  });

  it('item 2: a PDF decompression bomb is DOCUMENT_LIMIT on both of pdf.js\'s decoding paths, and the host goes on', async () => {
    // 256 MiB of white space each, in about 260 KB.
    const [inflated, predicted, ordinary] = await Promise.all([
      ingest(TOKEN, 'bomb', pdf(await makeBombPdf(256))),
      ingest(TOKEN, 'bomb-predictor', pdf(await makeBombPdf(256, { predictor: true }))),
      ingest(OTHER_TOKEN, 'report', pdf(await makePdf([['Quarterly report: revenue grew.']]))),
    ]);
    for (const refused of [inflated, predicted]) {
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'DOCUMENT_LIMIT');
      assert.match(refused.body.error.message, /decode to more than 134217728 bytes/);
    }
    assert.equal(ordinary.status, 200, JSON.stringify(ordinary.body));
    assert.equal(ordinary.body.ingestion.pages.total, 1);
  });

  it("item 3: one subject's slow PDFs do not hold another subject's PDF", async () => {
    // Each takes pdf.js many seconds (16 pages of 200,000 text operators, ~100 KB); the other
    // subject's 1-page PDF takes a place of its own instead of waiting behind them.
    const slow = await makeSlowPdf(16, 200_000);
    const controller = new AbortController();
    const finished: string[] = [];
    const hogs = [1, 2, 3].map((n) =>
      fetch(`${host.url}/v1/retrieval/ingest`, {
        method: 'POST',
        headers: host.headers(),
        body: JSON.stringify({ corpus: 'docs', document: { source: { id: `slow-${n}`, revision: 'r1' }, ...pdf(slow) } }),
        signal: controller.signal,
      })
        .then((response) => response.arrayBuffer())
        .then(
          () => finished.push(`slow-${n}`),
          () => finished.push(`slow-${n} (stopped)`),
        ),
    );
    const small = await ingest(OTHER_TOKEN, 'memo', pdf(await makePdf([['A short memo.']])));
    assert.equal(small.status, 200, JSON.stringify(small.body));
    assert.deepEqual(finished, [], `${finished.join(', ')} finished before the other subject's 1-page PDF`);
    // Hanging up stops them (their threads are terminated).
    controller.abort();
    await Promise.all(hogs);
  });

  it('item 3: a PDF that runs past its time limit is TIMEOUT, its thread ended', async () => {
    // A host of its own with a 1 s limit; the slow PDF takes pdf.js many times that.
    const limited = await startTestHost({
      tokens: [{ id: 'alice', subject: 'alice', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], retrieval: GRANTS }],
      retrieval: { corpora: [{ id: 'docs' }], ingestion: { timeoutMs: 1000 } },
    });
    try {
      const response = await limited.post('/v1/retrieval/ingest', { corpus: 'docs', document: { source: { id: 'slow', revision: 'r1' }, ...pdf(await makeSlowPdf(16, 200_000)) } });
      const body = (await response.json()) as any;
      assert.equal(response.status, 504, JSON.stringify(body));
      assert.equal(body.error.code, 'TIMEOUT');
      assert.match(body.error.message, /time limit \(1000 ms\)/);
    } finally {
      await limited.close();
      rmSync(limited.dir, { recursive: true, force: true });
    }
  });

  it('item 6: a subject past its share of the index gets RESOURCE_LIMIT while the other keeps indexing; a corpus past its share is INDEX_FULL', async () => {
    const chunks = (prefix: string, count: number) => Array.from({ length: count }, (_, n) => ({ id: `${prefix}-${n}`, text: `${prefix} passage number ${n}.` }));
    const index = async (token: string, id: string, count: number, corpus = 'docs') => {
      const response = await host.post('/v1/retrieval/index', { corpus, source: { id, revision: 'r1' }, chunks: chunks(id, count) }, { authorization: `Bearer ${token}` });
      return { status: response.status, body: (await response.json()) as any };
    };
    // Alice already holds the chunks of her earlier documents; she fills her 150 and is refused.
    let status = 200;
    let refused: { status: number; body: any } | undefined;
    for (let n = 0; n < 40 && status === 200; n++) {
      const answer = await index(TOKEN, `flood-${n}`, 5);
      status = answer.status;
      if (status !== 200) refused = answer;
    }
    assert.equal(refused?.status, 403, JSON.stringify(refused?.body));
    assert.equal(refused?.body.error.code, 'RESOURCE_LIMIT');
    assert.equal(refused?.body.error.retryable, false);
    // Bob keeps indexing, and finds what he indexed.
    const bobs = await index(OTHER_TOKEN, 'bob-notes', 5);
    assert.equal(bobs.status, 200, JSON.stringify(bobs.body));
    const found = await host.post('/v1/retrieval/search', { corpus: 'docs', query: 'bob-notes passage' }, { authorization: `Bearer ${OTHER_TOKEN}` });
    assert.equal(((await found.json()) as any).hits.length > 0, true);
    // The small corpus holds 3 chunks whoever indexes; the docs corpus still takes Bob's.
    assert.equal((await index(OTHER_TOKEN, 'small-one', 3, 'small')).status, 200);
    const full = await index(OTHER_TOKEN, 'small-two', 1, 'small');
    assert.equal(full.status, 503, JSON.stringify(full.body));
    assert.equal(full.body.error.code, 'INDEX_FULL');
    assert.equal((await index(OTHER_TOKEN, 'bob-more', 2)).status, 200);
  });
});
