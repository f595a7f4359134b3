/**
 * Hostile ingestion (issue 25, "keep attacking"): a host started by the real CLI
 * (`agenticdriver serve`) takes, from two subjects at once, a seeded battery of hostile
 * documents — Markdown nested, lazy-continued, fenced and headed every way markdown parsers have
 * gone quadratic on, up to the 1 MiB text limit; PDF decompression bombs on both of pdf.js's
 * decoding paths (up to 1 GiB from 1 MB), PDFs that keep pdf.js busy past the time limit,
 * truncated and bit-flipped PDFs — and floods of indexing. Every answer is a typed error with
 * its status or a success, never a 500 or a dropped connection; `GET /health` keeps answering;
 * the host process ends the battery alive, with its peak memory bounded, and both subjects can
 * still ingest and find an ordinary document.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI_MAIN, killAll, spawnHost, type HostProcess } from '../support/processes.js';
import { tempDir } from '../support/temp.js';
import { makeBombPdf, makePdf, makeSlowPdf } from '../extensions/ingestion/pdfs.js';

const ALICE = 'alice-token-0123456789abcdefghijklmnopq';
const BOB = 'bob-token-0123456789abcdefghijklmnopqrst';
const GRANTS = { search: ['docs', 'shared'], index: ['docs', 'shared'], delete: ['docs', 'shared'] };
const MAX_TEXT = 1_048_576;

/** What a hostile document may get: a typed refusal with its status, or indexed. */
const ALLOWED: Record<number, string[]> = {
  200: [],
  400: ['DOCUMENT_LIMIT', 'INVALID_DOCUMENT', 'EMPTY_DOCUMENT', 'EMPTY_EXTRACTION', 'INVALID_INGESTION', 'PDF_ENCRYPTED', 'OCR_REQUIRED'],
  403: ['RESOURCE_LIMIT'],
  502: ['PDF_EXTRACTION_FAILED', 'INVALID_EXTRACTION'],
  503: ['INDEX_FULL'],
  504: ['TIMEOUT'],
};

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hostile Markdown: container prefixes, fences, headings and lazy lines mixed at random, up to `size` characters. */
function hostileMarkdown(next: () => number, size: number): string {
  const prefixes = ['> ', '- ', '1. ', '* ', '>', '\t', '  ', '    ', '+ ', '10) '];
  const bodies = ['# h', 'Setext\n===', '```', '~~~', 'lazy', '', '[a]: /u', '<div>', '<!--', '***', '- - -', 'text *em* `code` [l](u)', '\\# esc', '#'.repeat(7)];
  const lines: string[] = [];
  let length = 0;
  while (length < size) {
    const depth = Math.floor(next() ** 3 * 400);
    const prefix = prefixes[Math.floor(next() * prefixes.length)]!;
    const line = prefix.repeat(depth) + bodies[Math.floor(next() * bodies.length)]!;
    const repeat = 1 + Math.floor(next() ** 4 * 2000);
    for (let n = 0; n < repeat && length < size; n++) {
      lines.push(line);
      length += line.length + 1;
    }
  }
  return lines.join('\n').slice(0, size);
}

/** Every byte from `at` on replaced by `next()` noise, `count` times (a damaged PDF). */
function damaged(bytes: Uint8Array, next: () => number, count: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  for (let n = 0; n < count; n++) copy[5 + Math.floor(next() * (copy.length - 5))] = Math.floor(next() * 256);
  return copy;
}

/** The process's current and peak resident memory in MB, from /proc (Linux); undefined elsewhere. */
function memoryOf(pid: number): { rssMb: number; peakMb: number } | undefined {
  const path = `/proc/${pid}/status`;
  if (!existsSync(path)) return undefined;
  const status = readFileSync(path, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

describe('hostile ingestion from two subjects at once, against `agenticdriver serve`', () => {
  const dir = tempDir('agenticdriver-hostile-');
  const children: ChildProcess[] = [];
  let host: HostProcess;

  before(async () => {
    const config = join(dir, 'config', 'config.json');
    mkdirSync(join(dir, 'config'), { recursive: true, mode: 0o700 });
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [
          { id: 'alice', subject: 'alice', tokenRef: { env: 'AD_ALICE' }, providers: ['mock'], retrieval: GRANTS },
          { id: 'bob', subject: 'bob', tokenRef: { env: 'AD_BOB' }, providers: ['mock'], retrieval: GRANTS },
        ],
        state: { directory: join(dir, 'state') },
        limits: { maxBodyBytes: 8_000_000 },
        retrieval: { corpora: [{ id: 'docs', namespace: 'subject' }, { id: 'shared' }], chunkBytes: 16_384, ingestion: { timeoutMs: 5000 } },
      }),
      { mode: 0o600 },
    );
    const env = { ...process.env, AD_ALICE: ALICE, AD_BOB: BOB, AGENTICDRIVER_CONFIG: '', HOME: join(dir, 'home') };
    host = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--json'], env, children);
  });

  after(() => {
    killAll(children);
    rmSync(dir, { recursive: true, force: true });
  });

  const ingest = async (token: string, id: string, document: Record<string, unknown>, corpus = 'docs') => {
    const response = await fetch(`${host.url}/v1/retrieval/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ corpus, document: { source: { id, revision: 'r1' }, ...document } }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const markdown = (text: string) => ({ type: 'text', mediaType: 'text/markdown', text });
  const pdf = (bytes: Uint8Array) => ({ type: 'pdf', mediaType: 'application/pdf', data: Buffer.from(bytes).toString('base64') });

  it('answers every hostile document with a typed error or an index, keeps /health answering and its memory bounded', async (t) => {
    const next = random(25);
    const ordinary = await makePdf([['An ordinary page.']]);
    const slow = await makeSlowPdf(16, 200_000);
    const batteries = await Promise.all(
      [ALICE, BOB].map(async (token, subject) => {
        const documents: [string, Record<string, unknown>][] = [
          [`bomb-1g-${subject}`, pdf(await makeBombPdf(1024, { predictor: subject === 1 }))],
          [`bomb-${subject}`, pdf(await makeBombPdf(512, { predictor: subject === 0 }))],
          [`slow-${subject}`, pdf(slow)],
          [`truncated-${subject}`, pdf(ordinary.subarray(0, Math.floor(ordinary.length * next())))],
          [`nested-lists-${subject}`, markdown(`${'- '.repeat(8000)}x`)],
          [`nested-quotes-${subject}`, markdown('>'.repeat(MAX_TEXT))],
          [`headings-${subject}`, markdown('# h\n'.repeat(MAX_TEXT / 4))],
          [`lazy-${subject}`, markdown(`${'> '.repeat(19)}a\n${'b\n'.repeat(50)}`.repeat(7000))],
        ];
        for (let n = 0; n < 6; n++) documents.push([`damaged-${subject}-${n}`, pdf(damaged(ordinary, next, 1 + Math.floor(next() * 40)))]);
        for (let n = 0; n < 10; n++) documents.push([`fuzz-${subject}-${n}`, markdown(hostileMarkdown(next, Math.floor(next() * MAX_TEXT)))]);
        return { token, documents };
      }),
    );
    let slowestHealthMs = 0;
    let healthChecks = 0;
    let done = false;
    const poller = (async () => {
      while (!done) {
        const started = performance.now();
        const response = await fetch(`${host.url}/health`);
        assert.equal(response.status, 200);
        await response.arrayBuffer();
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
        healthChecks += 1;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const outcomes = await Promise.all(
      batteries.map(async ({ token, documents }) => {
        const answers: [string, number, string | undefined][] = [];
        // Each subject sends two documents at a time, so both subjects' lines are full at once.
        for (let index = 0; index < documents.length; index += 2) {
          const pair = documents.slice(index, index + 2);
          const results = await Promise.all(pair.map(([id, document]) => ingest(token, id, document)));
          results.forEach((result, offset) => answers.push([pair[offset]![0], result.status, result.body.error?.code]));
          for (const result of results) {
            if (result.status !== 200) {
              assert.deepEqual(Object.keys(result.body.error).sort().slice(0, 3), ['code', 'message', 'retryable']);
              assert.equal(typeof result.body.error.message, 'string');
            }
          }
        }
        return answers;
      }),
    );
    done = true;
    await poller;
    for (const [id, status, code] of outcomes.flat()) {
      assert.ok(status in ALLOWED, `${id}: HTTP ${status} ${code}`);
      if (status !== 200) assert.ok(ALLOWED[status]!.includes(code!), `${id}: HTTP ${status} ${code}`);
    }
    const codeOf = (id: string) => outcomes.flat().find(([name]) => name === id)?.[2];
    for (const subject of [0, 1]) {
      // Its decoded-bytes budget, or (on a machine too loaded to inflate 128 MiB in 5 s) its time limit: never indexed.
      assert.ok(['DOCUMENT_LIMIT', 'TIMEOUT'].includes(codeOf(`bomb-1g-${subject}`)!), codeOf(`bomb-1g-${subject}`));
      assert.ok(['DOCUMENT_LIMIT', 'TIMEOUT'].includes(codeOf(`bomb-${subject}`)!), codeOf(`bomb-${subject}`));
      assert.equal(codeOf(`slow-${subject}`), 'TIMEOUT');
      assert.equal(codeOf(`headings-${subject}`), 'DOCUMENT_LIMIT');
      assert.equal(codeOf(`nested-lists-${subject}`), undefined);
    }
    assert.ok(healthChecks > 10);
    // Wide bounds for a loaded machine: the old host stalled for minutes and grew by gigabytes.
    assert.ok(slowestHealthMs < 2000, `GET /health took up to ${slowestHealthMs.toFixed(0)} ms`);
    const memory = memoryOf(host.child.pid!);
    t.diagnostic(`${outcomes.flat().length} documents; slowest GET /health ${slowestHealthMs.toFixed(0)} ms of ${healthChecks}; host RSS ${memory ? `${memory.rssMb.toFixed(0)} MB, peak ${memory.peakMb.toFixed(0)} MB` : 'unknown'}`);
    if (memory) assert.ok(memory.peakMb < 2048, `the host peaked at ${memory.peakMb.toFixed(0)} MB`);
    // Alive, and both subjects still ingest and find what they ingest.
    for (const [token, word] of [[ALICE, 'otters'], [BOB, 'beavers']] as const) {
      const indexed = await ingest(token, `after-${word}`, markdown(`# After\nThe ${word} are fine.\n`), 'shared');
      assert.equal(indexed.status, 200, JSON.stringify(indexed.body));
      const search = await fetch(`${host.url}/v1/retrieval/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ corpus: 'shared', query: word }),
      });
      assert.equal(((await search.json()) as any).hits[0].source.id, `after-${word}`);
    }
    assert.equal(host.child.exitCode, null);
  });
});
