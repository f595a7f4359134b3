/**
 * How late a follower on another replica sees an attached run's events (issue 29, item 4: goal
 * p50 ≤ 10 ms on PostgreSQL, no polling interval in the path). PostgreSQL: replica A answers a
 * streaming `POST /v1/runs`, replica B (another host on the same database, its own connections)
 * follows it with `GET /v1/runs/{id}/stream` from the run id of A's first event; SQLite: one host
 * runs and follows it. The run writes a text event every `--gap` ms; each event's latency is the
 * time B's client has it minus the event's own timestamp (set when A produced it, before the
 * record's group commit). Prints p50, p99 and max per engine.
 *
 *   node scripts/postgres.mjs --run npx tsx bench/run-follow.ts [--events N] [--gap MS]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parseHostConfig, startHost, type RunningHost } from '../src/host/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const EVENTS = option('events', 200);
const GAP_MS = option('gap', 10);
const TOKEN = randomBytes(24).toString('hex');
const env = { ...process.env, AD_BENCH_TOKEN: TOKEN };

function config(dir: string, state: Record<string, unknown>) {
  return parseHostConfig(
    {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [{ id: 'bench', subject: 'bench', tokenRef: { env: 'AD_BENCH_TOKEN' }, providers: ['mock'] }],
      state,
    },
    join(dir, 'config.json'),
  );
}

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
/** The mock provider's script: one step, a text event after every pause. */
const mockScript = () => JSON.stringify({ mockScript: { steps: [{ actions: Array.from({ length: EVENTS }, (_, index) => [{ stallMs: GAP_MS }, { text: `t${index} ` }]).flat() }] } });

/** Server-sent events' data, parsed, as they arrive, each with the time it arrived. */
async function* frames(response: Response): AsyncGenerator<{ at: number; event: { type: string; runId: string; timestamp: string } }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const at = Date.now();
    buffer += decoder.decode(read.value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split('\n').find((line) => line.startsWith('data: '));
      if (data) yield { at, event: JSON.parse(data.slice(6)) as { type: string; runId: string; timestamp: string } };
    }
  }
}

/** Starts a streaming run on `runner` and follows it from `follower`; latencies in ms. */
async function measure(runner: RunningHost, follower: RunningHost): Promise<number[]> {
  const started = await fetch(`${runner.url}/v1/runs`, { method: 'POST', headers: { ...headers, accept: 'text/event-stream' }, body: JSON.stringify({ provider: 'mock', model: 'demo', input: mockScript() }) });
  const attached = frames(started);
  const first = await attached.next();
  if (first.done) throw new Error('the run sent nothing');
  // The attached client keeps reading, as a real one would.
  const draining = (async () => {
    for await (const _ of attached);
  })();
  const stream = await fetch(`${follower.url}/v1/runs/${first.value.event.runId}/stream`, { headers });
  if (!stream.ok || !stream.body) throw new Error(`stream: ${stream.status} ${await stream.text()}`);
  const latencies: number[] = [];
  for await (const { at, event } of frames(stream)) if (event.type === 'text.delta') latencies.push(at - Date.parse(event.timestamp));
  await draining;
  return latencies;
}

function summary(engine: string, latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { engine, events: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) };
}

const dir = mkdtempSync(join(tmpdir(), 'ad-bench-run-follow-'));
writeFileSync(join(dir, 'config.json'), '{}');
const rows = [];
try {
  const sqlite = await startHost({ config: config(dir, { directory: join(dir, 'state') }), env, logger: false });
  try {
    rows.push(summary('sqlite (one host)', await measure(sqlite, sqlite)));
  } finally {
    await sqlite.close();
  }
  const url = process.env.AGENTICDRIVER_TEST_POSTGRES_URL;
  if (url) {
    const name = `bench_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const database = new URL(url);
    database.pathname = `/${name}`;
    const replicaEnv = { ...env, AD_BENCH_DB: database.toString() };
    const postgres = { engine: 'postgres', urlRef: { env: 'AD_BENCH_DB' } };
    const a = await startHost({ config: config(dir, postgres), env: replicaEnv, logger: false });
    const b = await startHost({ config: config(dir, postgres), env: replicaEnv, logger: false });
    try {
      rows.push(summary('postgres (A runs, B follows)', await measure(a, b)));
    } finally {
      await b.close();
      await a.close();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  } else {
    console.error('PostgreSQL skipped: run through `node scripts/postgres.mjs --run npx tsx bench/run-follow.ts`.');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ bench: 'run-follow', eventsPerRun: EVENTS, gapMs: GAP_MS, rows }, null, 2));
