/**
 * Host overhead: the same fixed-concurrency load of non-streaming and streaming runs
 * against the real host (mock provider) and against a bare node:http server answering
 * the same bytes, in one run. Prints throughput, p50/p99 latency and the ratio.
 *
 *   npx tsx bench/host-overhead.ts [--requests N] [--concurrency C] [--json FILE]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const REQUESTS = option('requests', 3000);
const CONCURRENCY = option('concurrency', 16);
const WARMUP = Math.min(1000, REQUESTS);
const jsonIndex = args.indexOf('--json');
const JSON_OUT = jsonIndex >= 0 ? args[jsonIndex + 1]! : new URL('./results/host-overhead.json', import.meta.url).pathname;
const results: Record<string, unknown>[] = [];
const BENCH_TOKEN = 'bench-token-0123456789abcdefghijklmnop';
const body = JSON.stringify({ provider: 'mock', model: 'demo', input: 'Hello' });

async function startServer(kind: 'host' | 'bare'): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./servers.ts', import.meta.url).pathname, kind], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, AD_BENCH_TOKEN: BENCH_TOKEN },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

function once(url: string, agent: Agent, streaming: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/runs`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${BENCH_TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(streaming ? { accept: 'text/event-stream' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => (res.statusCode === 200 && text.includes('Hello') ? resolve() : reject(new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function load(url: string, streaming: boolean, total: number): Promise<{ rps: number; p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        next += 1;
        const t0 = performance.now();
        await once(url, agent, streaming);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { rps: total / seconds, p50: pick(0.5), p99: pick(0.99) };
}

const servers = { host: await startServer('host'), bare: await startServer('bare') };
try {
  console.log(`host overhead benchmark: ${REQUESTS} requests per row, concurrency ${CONCURRENCY}, node ${process.version}`);
  console.log('mode  server  req/s     p50 ms  p99 ms');
  for (const streaming of [false, true]) {
    const rows: Record<string, { rps: number; p50: number; p99: number }> = {};
    for (const kind of ['bare', 'host'] as const) {
      await load(servers[kind].url, streaming, WARMUP);
      rows[kind] = await load(servers[kind].url, streaming, REQUESTS);
      const r = rows[kind]!;
      console.log(`${streaming ? 'sse ' : 'json'}  ${kind.padEnd(6)}  ${r.rps.toFixed(0).padStart(7)}  ${r.p50.toFixed(2).padStart(6)}  ${r.p99.toFixed(2).padStart(6)}`);
    }
    const ratio = rows.bare!.rps / rows.host!.rps;
    for (const kind of ['bare', 'host'] as const) results.push({ bench: 'host-overhead', mode: streaming ? 'sse' : 'json', concurrency: CONCURRENCY, target: kind === 'host' ? 'host (mock)' : 'bare node:http', ...rows[kind], ratioToBare: rows[kind]!.rps / rows.bare!.rps });
    console.log(`${streaming ? 'sse ' : 'json'}  overhead: host throughput is 1/${ratio.toFixed(2)} of bare node:http; p50 +${(rows.host!.p50 - rows.bare!.p50).toFixed(2)} ms`);
  }
  mkdirSync(dirname(JSON_OUT), { recursive: true });
  writeFileSync(JSON_OUT, `${JSON.stringify({ node: process.version, requests: REQUESTS, at: new Date().toISOString(), rows: results }, null, 2)}\n`);
} finally {
  servers.host.child.kill();
  servers.bare.child.kill();
}
