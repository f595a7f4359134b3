/**
 * Hostile ingestion (issue 25, items 1–3): one host process, two subjects ingesting at once,
 * the worst documents of each item — Markdown that stalled the old host's event loop for tens
 * of seconds to minutes, PDF decompression bombs of 1 GiB from 1 MB on both of pdf.js's
 * decoding paths, slow PDFs that kept another subject's small PDF waiting 35 s — while this
 * process asks `GET /health` every 10 ms. Prints per scenario the slowest and p99 `/health`
 * answer (goal ≤ 50 ms), the longest delay of the host's own event loop (monitorEventLoopDelay
 * in the host, read over IPC: what the host thread blocked, apart from the machine's scheduling
 * and this process's own loop), the host's resident memory growth (current and peak, from /proc), the
 * outcomes, and how long the other subject's small PDF took; first the same `/health` figures
 * for the idle host (what the machine's scheduling alone costs).
 *
 *   npx tsx bench/hostile-ingestion.ts [--rounds 1] [--dist] [--json FILE]
 *
 * `--dist` runs the built host (`npm run build` first): its threads load their parsers natively,
 * as in production, where under tsx a new thread also compiles its TypeScript.
 *
 * The host runs with the default ingestion bounds (extraction time limit 60 s, 128 MiB of
 * decoded PDF streams) and `limits.maxBodyBytes` raised to carry the 1 MB bombs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1]! : fallback;
};
const TOKENS = { alice: 'alice-bench-token-0123456789abcdefghij', bob: 'bob-bench-token-0123456789abcdefghijkl' };
const GRANTS = { search: ['docs'], index: ['docs'], delete: ['docs'] };
const POLL_MS = 10;

/** `--serve`: the host process. Prints its URL and pid, then serves until SIGTERM. */
async function serve(): Promise<void> {
  // `--dist`: the built host (`npm run build` first), whose extraction threads load natively.
  const root = process.env.AD_BENCH_DIST === '1' ? '../dist' : '../src';
  const { parseHostConfig } = (await import(`${root}/host/config.js`)) as typeof import('../src/host/config.js');
  const { startHost } = (await import(`${root}/host/index.js`)) as typeof import('../src/host/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'ad-bench-hostile-'));
  const config = parseHostConfig(
    {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [
        { id: 'alice', subject: 'alice', tokenRef: { env: 'AD_BENCH_ALICE' }, providers: ['mock'], retrieval: GRANTS },
        { id: 'bob', subject: 'bob', tokenRef: { env: 'AD_BENCH_BOB' }, providers: ['mock'], retrieval: GRANTS },
      ],
      limits: { maxBodyBytes: 8_000_000 },
      state: { directory: join(dir, 'state') },
      retrieval: { corpora: [{ id: 'docs', namespace: 'subject' }], chunkBytes: 16_384 },
    },
    join(dir, 'config.json'),
  );
  const host = await startHost({ config, env: { ...process.env, AD_BENCH_ALICE: TOKENS.alice, AD_BENCH_BOB: TOKENS.bob } });
  // The host's own event-loop delay, read and reset by the bench over IPC: what the host thread
  // blocked, apart from the machine's scheduling and this bench's own loop.
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  process.on('message', (message) => {
    if (message !== 'delay') return;
    process.send!({ maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 });
    delay.reset();
  });
  process.once('SIGTERM', () => {
    void host.close().then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
  process.stdout.write(`${JSON.stringify({ url: host.url, pid: process.pid })}\n`);
}

function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Resets the process's peak RSS (VmHWM) to its current RSS (Linux ≥ 4.0); false when not allowed. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

async function startHostProcess(): Promise<{ url: string; pid: number; child: ChildProcess }> {
  const flags = (process.env.AD_BENCH_HOST_FLAGS ?? '').split(' ').filter(Boolean);
  const env = { ...process.env, AD_BENCH_DIST: args.includes('--dist') ? '1' : '0' };
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', new URL(import.meta.url).pathname, '--serve'], { env, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the host exited (${code}) before listening`)));
  });
  return { ...(JSON.parse(line) as { url: string; pid: number }), child };
}

interface Health {
  slowestMs: number;
  p99Ms: number;
  asked: number;
}

/** The host's event-loop delay since the last call (max and p99, ms). */
function hostDelay(child: ChildProcess): Promise<{ maxMs: number; p99Ms: number }> {
  return new Promise((resolve) => {
    child.once('message', (message) => resolve(message as { maxMs: number; p99Ms: number }));
    child.send('delay');
  });
}

/** Asks GET /health every POLL_MS while `work` runs. */
async function watchHealth<T>(url: string, work: () => Promise<T>): Promise<{ result: T; health: Health }> {
  const times: number[] = [];
  let done = false;
  const poller = (async () => {
    while (!done) {
      const started = performance.now();
      await (await fetch(`${url}/health`)).arrayBuffer();
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();
  try {
    return { result: await work(), health: summary(times) };
  } finally {
    done = true;
    await poller;
  }
}

function summary(times: number[]): Health {
  const sorted = [...times].sort((a, b) => a - b);
  return { slowestMs: sorted.at(-1) ?? 0, p99Ms: sorted[Math.floor(sorted.length * 0.99)] ?? 0, asked: sorted.length };
}

async function client(): Promise<void> {
  const { makeBombPdf, makePdf, makeSlowPdf } = await import('../test/extensions/ingestion/pdfs.js');
  const ROUNDS = Number(option('rounds', '1'));
  const JSON_OUT = option('json', new URL('./results/hostile-ingestion.json', import.meta.url).pathname);
  const markdown = (text: string) => ({ type: 'text', mediaType: 'text/markdown', text });
  const pdf = (bytes: Uint8Array) => ({ type: 'pdf', mediaType: 'application/pdf', data: Buffer.from(bytes).toString('base64') });
  console.error('generating documents…');
  const documents = {
    nestedLists: markdown(`${'- '.repeat(8000)}x`),
    nestedQuotes: markdown('>'.repeat(1_048_576)),
    headings: markdown('# h\n'.repeat(262_143)),
    lazyQuotes: markdown(`${'> '.repeat(19)}a\n${'b\n'.repeat(50)}`.repeat(7000)),
    bomb: pdf(await makeBombPdf(1024)),
    bombPredictor: pdf(await makeBombPdf(1024, { predictor: true })),
    slow: pdf(await makeSlowPdf(8, 100_000)),
    small: pdf(await makePdf([['A 1-page memo from the other subject.']])),
  };
  console.error(`bombs: ${Math.round((documents.bomb.data.length * 3) / 4 / 1024)} KB of PDF inflating to 1 GiB`);

  const host = await startHostProcess();
  const ingest = async (who: keyof typeof TOKENS, id: string, document: Record<string, unknown>) => {
    const started = performance.now();
    const response = await fetch(`${host.url}/v1/retrieval/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS[who]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ corpus: 'docs', document: { source: { id, revision: `r${Date.now()}` }, ...document } }),
    });
    const body = (await response.json()) as { error?: { code: string } };
    return { id, status: response.status, code: body.error?.code ?? 'indexed', ms: performance.now() - started };
  };
  type Outcome = Awaited<ReturnType<typeof ingest>>;
  const scenarios: Record<string, (round: number) => Promise<Outcome[]>> = {
    // Item 3: two slow PDFs from alice, then bob's small one.
    'slow PDFs of one subject, small PDF of another (item 3)': async (round) => {
      const slow = [ingest('alice', `slow-1-${round}`, documents.slow), ingest('alice', `slow-2-${round}`, documents.slow)];
      await new Promise((resolve) => setTimeout(resolve, 200));
      const small = await ingest('bob', `small-${round}`, documents.small);
      return [small, ...(await Promise.all(slow))];
    },
    // Item 1: the Markdown of the issue, from both subjects at once.
    'markdown (item 1)': (round) =>
      Promise.all(
        (['alice', 'bob'] as const).flatMap((who) =>
          Object.entries({ nestedLists: documents.nestedLists, nestedQuotes: documents.nestedQuotes, headings: documents.headings, lazyQuotes: documents.lazyQuotes }).map(([name, document]) =>
            ingest(who, `${name}-${who}-${round}`, document),
          ),
        ),
      ),
    // Item 2: a 1 GiB bomb on each decoding path from each subject.
    'PDF bombs, 1 GiB from 1 MB (item 2)': (round) =>
      Promise.all(
        (['alice', 'bob'] as const).flatMap((who) => [ingest(who, `bomb-${who}-${round}`, documents.bomb), ingest(who, `bomb-predictor-${who}-${round}`, documents.bombPredictor)]),
      ),
  };

  const rows: Record<string, unknown>[] = [];
  try {
    // Warm the threads (two of each kind, as a host in use has them), then the idle host's own figures.
    await Promise.all((['alice', 'bob'] as const).flatMap((who) => [ingest(who, `warm-pdf-${who}`, documents.small), ingest(who, `warm-md-${who}`, markdown('# Warm\nup\n'))]));
    await hostDelay(host.child);
    const idle = await watchHealth(host.url, () => new Promise((resolve) => setTimeout(resolve, 5000)));
    rows.push({ scenario: 'idle host (baseline)', ...idle.health, hostLoopMaxMs: (await hostDelay(host.child)).maxMs, rssGrowthMb: 0, peakGrowthMb: 0 });
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, run] of Object.entries(scenarios)) {
        const before = memoryMb(host.pid);
        const peakReset = resetPeak(host.pid);
        await hostDelay(host.child);
        const { result, health } = await watchHealth(host.url, () => run(round));
        const loop = await hostDelay(host.child);
        const after = memoryMb(host.pid);
        const outcomes = Object.entries(
          result.reduce<Record<string, number>>((counts, outcome) => {
            const key = `${outcome.status} ${outcome.code}`;
            counts[key] = (counts[key] ?? 0) + 1;
            return counts;
          }, {}),
        )
          .map(([key, count]) => `${count}× ${key}`)
          .join(', ');
        const small = result.find((outcome) => outcome.id.startsWith('small-'));
        rows.push({
          scenario: name,
          round,
          ...health,
          hostLoopMaxMs: loop.maxMs,
          rssBeforeMb: before.rss,
          rssAfterMb: after.rss,
          rssGrowthMb: after.rss - before.rss,
          peakGrowthMb: peakReset ? after.peak - before.rss : undefined,
          outcomes,
          ...(small ? { otherSubjectSmallPdfMs: small.ms } : {}),
          slowestDocumentMs: Math.max(...result.map((outcome) => outcome.ms)),
        });
      }
    }
  } finally {
    host.child.kill('SIGTERM');
    await new Promise((resolve) => host.child.once('exit', resolve));
  }

  console.log(`\nHostile ingestion, two subjects at once (node ${process.version}); GET /health every ${POLL_MS} ms; goal: slowest ≤ 50 ms`);
  console.log('scenario'.padEnd(58), 'slowest'.padStart(9), 'p99'.padStart(8), 'host loop'.padStart(10), 'RSS +MB'.padStart(8), 'peak +MB'.padStart(9), ' outcomes');
  for (const row of rows) {
    const fmt = (value: unknown, digits = 0) => (typeof value === 'number' ? value.toFixed(digits) : '—');
    console.log(
      String(row.scenario).padEnd(58),
      `${fmt(row.slowestMs, 1)} ms`.padStart(9),
      `${fmt(row.p99Ms, 1)}`.padStart(8),
      `${fmt(row.hostLoopMaxMs, 1)} ms`.padStart(10),
      fmt(row.rssGrowthMb).padStart(8),
      fmt(row.peakGrowthMb).padStart(9),
      ` ${row.outcomes ?? ''}${row.otherSubjectSmallPdfMs !== undefined ? `; the other subject's small PDF: ${fmt(row.otherSubjectSmallPdfMs)} ms` : ''}`,
    );
  }
  mkdirSync(dirname(JSON_OUT), { recursive: true });
  writeFileSync(JSON_OUT, `${JSON.stringify({ at: new Date().toISOString(), node: process.version, rows }, null, 2)}\n`);
  console.log(`\nwrote ${JSON_OUT}`);
}

if (args.includes('--serve')) await serve();
else await client();
