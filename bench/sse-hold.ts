/**
 * SSE hold: one host process holds N idle streamed runs (mock `hang`) while this process
 * watches every stream's heartbeats and times short runs served meanwhile. Prints the
 * host's resident memory (empty, holding), how many heartbeat gaps stayed within ±1 s of
 * the interval, and the latency of new runs under the load.
 *
 *   npx tsx bench/sse-hold.ts [--streams 10000] [--heartbeat-ms 2000] [--hold-s 12] [--json FILE]
 *
 * Both processes start with a raised open-file limit (`ulimit -n`, bench only; the product
 * never changes it). The host gets the short heartbeat through the `heartbeatMs` start-up
 * option, which exists for tests and benchmarks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const STREAMS = option('streams', 10_000);
const HEARTBEAT_MS = option('heartbeat-ms', 2000);
const HOLD_S = option('hold-s', 12);
const OPEN_BATCH = 500;
const TOKEN = 'bench-token-0123456789abcdefghijklmnop';
const FD_LIMIT = 65_536;

/** `--serve`: the host process. Prints its URL and pid, then serves until killed. */
async function serve(): Promise<void> {
  const { parseHostConfig } = await import('../src/host/config.js');
  const { startHost } = await import('../src/host/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'ad-bench-hold-'));
  const config = parseHostConfig(
    {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [{ id: 'bench', subject: 'bench', tokenRef: { env: 'AD_BENCH_TOKEN' }, providers: ['mock'] }],
      limits: { maxConcurrentRuns: 100_000, maxConcurrentRunsPerSubject: 100_000 },
      state: { directory: join(dir, 'state') },
    },
    join(dir, 'config.json'),
  );
  const host = await startHost({ config, heartbeatMs: Number(process.env.AD_BENCH_HEARTBEAT_MS) });
  const stop = async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.stdout.write(`${JSON.stringify({ url: host.url, pid: process.pid })}\n`);
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

interface Stream {
  request: ClientRequest;
  heartbeats: number[];
  ended: boolean;
}

function openStream(url: string, agent: Agent, body: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const stream: Stream = { request: undefined as never, heartbeats: [], ended: false };
    stream.request = request(
      `${url}/v1/runs`,
      { method: 'POST', agent, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
        res.setEncoding('utf8');
        let started = false;
        res.on('data', (chunk: string) => {
          if (!started && chunk.includes('run.started')) {
            started = true;
            resolve(stream);
          }
          for (let at = chunk.indexOf(': heartbeat'); at >= 0; at = chunk.indexOf(': heartbeat', at + 1)) stream.heartbeats.push(Date.now());
        });
        res.on('end', () => (stream.ended = true));
        res.on('error', () => (stream.ended = true));
      },
    );
    stream.request.on('error', (error) => (stream.ended ? undefined : reject(error)));
    stream.request.end(body);
  });
}

function shortRun(url: string): Promise<number> {
  const body = JSON.stringify({ provider: 'mock', model: 'demo', input: 'Hello' });
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/runs`, { method: 'POST', agent: false, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function startHostProcess(): Promise<{ url: string; pid: number; child: ChildProcess }> {
  const script = `ulimit -n ${FD_LIMIT} 2>/dev/null || true; exec "$0" --import tsx "$1" --serve`;
  const child = spawn('/bin/sh', ['-c', script, process.execPath, new URL(import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, AD_BENCH_TOKEN: TOKEN, AD_BENCH_HEARTBEAT_MS: String(HEARTBEAT_MS) },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the host exited with ${code}`)));
  });
  const { url, pid } = JSON.parse(line) as { url: string; pid: number };
  return { url, pid, child };
}

async function bench(): Promise<void> {
  const host = await startHostProcess();
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const streams: Stream[] = [];
  try {
    await shortRun(host.url);
    const emptyRss = rssMb(host.pid);
    const body = JSON.stringify({ provider: 'mock', model: 'demo', input: JSON.stringify({ mockScript: { steps: [{ actions: [{ hang: true }] }] } }) });
    const openStarted = performance.now();
    for (let opened = 0; opened < STREAMS; opened += OPEN_BATCH) {
      const batch = Math.min(OPEN_BATCH, STREAMS - opened);
      streams.push(...(await Promise.all(Array.from({ length: batch }, () => openStream(host.url, agent, body)))));
    }
    const openSeconds = (performance.now() - openStarted) / 1000;
    const heldRss = rssMb(host.pid);

    // Hold: heartbeats flow; time short runs served meanwhile.
    const holdStarted = Date.now();
    const latencies: number[] = [];
    while (Date.now() - holdStarted < HOLD_S * 1000) {
      latencies.push(await shortRun(host.url));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const endRss = rssMb(host.pid);
    const gaps: number[] = [];
    let silent = 0;
    for (const stream of streams) {
      const beats = stream.heartbeats.filter((at) => at >= holdStarted);
      if (beats.length < 2) silent += 1;
      for (let i = 1; i < beats.length; i += 1) gaps.push(beats[i]! - beats[i - 1]!);
    }
    const onTime = gaps.filter((gap) => Math.abs(gap - HEARTBEAT_MS) <= 1000).length;
    const ended = streams.filter((stream) => stream.ended).length;
    console.log(`sse-hold: ${streams.length} idle streams opened in ${openSeconds.toFixed(1)} s, held ${HOLD_S} s, ${ended} ended early`);
    console.log(`host RSS: ${emptyRss.toFixed(0)} MB empty, ${heldRss.toFixed(0)} MB holding, ${endRss.toFixed(0)} MB after the hold (${(((heldRss - emptyRss) * 1024) / streams.length).toFixed(1)} KB per stream)`);
    console.log(
      `heartbeats every ${HEARTBEAT_MS} ms: ${gaps.length} gaps, ${onTime} within ±1 s (${((100 * onTime) / Math.max(1, gaps.length)).toFixed(2)}%), ` +
        `p50 ${percentile(gaps, 50)} ms, p99 ${percentile(gaps, 99)} ms, max ${Math.max(...gaps)} ms; ${silent} streams with fewer than 2 heartbeats`,
    );
    console.log(`new runs while holding: ${latencies.length}, p50 ${percentile(latencies, 50).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
    // --json FILE: the figures for the one table of `npm run bench` (bench/all.ts).
    const jsonAt = args.indexOf('--json');
    if (jsonAt >= 0) {
      const figures = { bench: 'sse-hold', streams: streams.length, endedEarly: ended, emptyRssMB: emptyRss, heldRssMB: heldRss, heartbeatsOnTimePct: (100 * onTime) / Math.max(1, gaps.length), silentStreams: silent, newRunP50Ms: percentile(latencies, 50), newRunMaxMs: Math.max(...latencies) };
      writeFileSync(args[jsonAt + 1]!, `${JSON.stringify({ at: new Date().toISOString(), rows: [figures] }, null, 2)}\n`);
    }
  } finally {
    for (const stream of streams) stream.request.destroy();
    agent.destroy();
    host.child.kill('SIGTERM');
    await new Promise((resolve) => host.child.once('exit', resolve));
  }
}

if (args.includes('--serve')) await serve();
else if (args.includes('--client')) await bench();
else {
  // Re-run this file as the client with the raised file limit.
  const script = `ulimit -n ${FD_LIMIT} 2>/dev/null || true; exec "$0" --import tsx "$@"`;
  const child = spawn('/bin/sh', ['-c', script, process.execPath, new URL(import.meta.url).pathname, '--client', ...args], { stdio: 'inherit' });
  process.exitCode = await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}
