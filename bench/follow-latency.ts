/**
 * What bench/job-follow.ts and bench/run-follow.ts share: the hosts (SQLite: one host runs and
 * follows; PostgreSQL, when run through `scripts/postgres.mjs --run`: replica A runs, replica B —
 * another host on the same database, its own connections — follows), a mock run that writes a
 * text event every `--gap` ms, the SSE frames as they arrive, and the p50 / p99 / max of each
 * event's latency: when B's client has it minus the event's own timestamp (set when A produced it,
 * before its commit). Each bench says only how it starts a run and which stream it follows.
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
export const EVENTS = option('events', 200);
export const GAP_MS = option('gap', 10);
const TOKEN = randomBytes(24).toString('hex');
export const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

export interface FollowedEvent {
  type: string;
  runId: string;
  timestamp: string;
}

/** The mock provider's script: one step, a text event after every pause. */
export const mockScript = () => JSON.stringify({ mockScript: { steps: [{ actions: Array.from({ length: EVENTS }, (_, index) => [{ stallMs: GAP_MS }, { text: `t${index} ` }]).flat() }] } });

/** Server-sent events' data, parsed, as they arrive, each with the time it arrived. */
export async function* frames(response: Response): AsyncGenerator<{ at: number; event: FollowedEvent }> {
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
      if (data) yield { at, event: JSON.parse(data.slice(6)) as FollowedEvent };
    }
  }
}

/** The text events' latencies on a followed stream, in ms. */
export async function latencies(stream: Response): Promise<number[]> {
  if (!stream.ok || !stream.body) throw new Error(`stream: ${stream.status} ${await stream.text()}`);
  const found: number[] = [];
  for await (const { at, event } of frames(stream)) if (event.type === 'text.delta') found.push(at - Date.parse(event.timestamp));
  return found;
}

function summary(engine: string, measured: number[]) {
  const sorted = [...measured].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { engine, events: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) };
}

/**
 * Runs `measure(runner, follower)` on SQLite (one host) and on PostgreSQL (two replicas) and
 * prints the figures. `token` and `host`: what the bench's token and config add.
 */
export async function benchFollow(bench: string, options: { token?: Record<string, unknown>; host?: Record<string, unknown> }, measure: (runner: RunningHost, follower: RunningHost) => Promise<number[]>): Promise<void> {
  const env = { ...process.env, AD_BENCH_TOKEN: TOKEN };
  const dir = mkdtempSync(join(tmpdir(), `ad-bench-${bench}-`));
  writeFileSync(join(dir, 'config.json'), '{}');
  const config = (state: Record<string, unknown>) =>
    parseHostConfig(
      {
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [{ id: 'bench', subject: 'bench', tokenRef: { env: 'AD_BENCH_TOKEN' }, providers: ['mock'], ...options.token }],
        ...options.host,
        state,
      },
      join(dir, 'config.json'),
    );
  const rows = [];
  try {
    const sqlite = await startHost({ config: config({ directory: join(dir, 'state') }), env, logger: false });
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
      const a = await startHost({ config: config(postgres), env: replicaEnv, logger: false });
      const b = await startHost({ config: config(postgres), env: replicaEnv, logger: false });
      try {
        rows.push(summary('postgres (A runs, B follows)', await measure(a, b)));
      } finally {
        await b.close();
        await a.close();
        await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
        await admin.end();
      }
    } else {
      console.error(`PostgreSQL skipped: run through \`node scripts/postgres.mjs --run npx tsx bench/${bench}.ts\`.`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ bench, eventsPerRun: EVENTS, gapMs: GAP_MS, rows }, null, 2));
}
