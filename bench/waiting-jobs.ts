/**
 * What 1,000 background runs waiting for approval cost the host (issue 29, item 3; feature
 * `interactive-jobs`): each job runs to a call that needs approval and is checkpointed in the
 * store, holding no worker, no admission slot and nothing in the host's memory but what the
 * engine caches. Prints the host's RSS and heap growth from before the jobs were submitted to
 * when all of them wait (after a GC when run with --expose-gc), the RSS growth once they all
 * finished (the allocator's high-water mark), the time to bring them all to their wait, and the
 * time to approve and finish them all, per engine.
 *
 * Each engine runs in a process of its own.
 *
 *   node --expose-gc --import tsx bench/waiting-jobs.ts [--jobs N]
 *   node scripts/postgres.mjs --run node --expose-gc --import tsx bench/waiting-jobs.ts   (adds PostgreSQL)
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { parseHostConfig, startHost, type RunningHost } from '../src/host/index.js';
import type { HostTool } from '../src/runtime/tools.js';

const args = process.argv.slice(2);
const index = args.indexOf('--jobs');
const JOBS = index >= 0 ? Number(args[index + 1]) : 1000;
const TOKEN = randomBytes(24).toString('hex');
const env = { ...process.env, AD_BENCH_TOKEN: TOKEN };
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const gc = (globalThis as { gc?: () => void }).gc;
let executions = 0;
const guarded: HostTool = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => `executed ${++executions}` };

function config(dir: string, state: Record<string, unknown>) {
  return parseHostConfig(
    {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [{ id: 'bench', subject: 'bench', tokenRef: { env: 'AD_BENCH_TOKEN' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'], jobs: ['submit', 'read'] }],
      approvals: { interactive: true },
      jobs: { retentionMs: 600_000, interactive: true, maxJobs: 3 * JOBS, maxJobsPerSubject: 3 * JOBS },
      state,
    },
    join(dir, 'config.json'),
  );
}

const post = async (host: RunningHost, path: string, body: unknown) => (await fetch(`${host.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<Record<string, unknown>>;
const request = {
  provider: 'mock',
  model: 'demo',
  input: JSON.stringify({ mockScript: { steps: [{ actions: [{ toolCall: { name: 'guarded', arguments: {}, id: 'g1' } }] }, { actions: [{ echoToolResults: true }] }] } }),
  tools: ['guarded'],
  approvals: { mode: 'interactive', idlePolicy: 'pause' },
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function memory() {
  gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

/** Brings `count` jobs (keys prefixed `prefix`) to their wait, then approves them all. */
async function round(host: RunningHost, prefix: string, count: number) {
  const before = await host.store.checkpoints.waiting();
  const started = performance.now();
  for (let job = 0; job < count; job += 1) await post(host, '/v1/jobs/submit', { key: `${prefix}-${job}`, request });
  while ((await host.store.checkpoints.waiting()) < before + count) await sleep(20);
  const parkedMs = performance.now() - started;
  const waitingMemory = memory();
  const resumeStarted = performance.now();
  for (const { approval } of await host.store.approvals.pending(10 * count)) {
    await post(host, '/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
  }
  while ((await host.store.checkpoints.waiting()) > 0 || (await host.store.jobs.queued()) > 0) await sleep(20);
  return { parkedMs, resumedMs: performance.now() - resumeStarted, waitingMemory };
}

async function measure(engine: string, host: RunningHost) {
  // Warm-up: the code paths and the engine's caches, so the growth below is the waiting runs'.
  await round(host, 'warm', 50);
  const base = memory();
  const { parkedMs, resumedMs, waitingMemory } = await round(host, 'bench', JOBS);
  const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
  return {
    engine,
    jobs: JOBS,
    rssGrowthMiB: mib(waitingMemory.rss - base.rss),
    heapGrowthMiB: mib(waitingMemory.heapUsed - base.heapUsed),
    rssGrowthPerWaitingRunKiB: Math.round((waitingMemory.rss - base.rss) / JOBS / 102.4) / 10,
    // The same, once all of them finished: what stays is the allocator's high-water mark, not the waiting runs.
    rssGrowthAfterAllFinishedMiB: mib(memory().rss - base.rss),
    toWaitMs: Math.round(parkedMs),
    approveAndFinishMs: Math.round(resumedMs),
  };
}

/** One engine, in this process (so that one engine's memory never shows in the other's figures). */
async function one(engine: string): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'ad-bench-waiting-'));
  writeFileSync(join(dir, 'config.json'), '{}');
  try {
    if (engine === 'sqlite') {
      const host = await startHost({ config: config(dir, { directory: join(dir, 'state') }), env, tools: [guarded], logger: false });
      try {
        return await measure('sqlite', host);
      } finally {
        await host.close();
      }
    }
    const name = `bench_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.AGENTICDRIVER_TEST_POSTGRES_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const database = new URL(process.env.AGENTICDRIVER_TEST_POSTGRES_URL!);
    database.pathname = `/${name}`;
    const host = await startHost({ config: config(dir, { engine: 'postgres', urlRef: { env: 'AD_BENCH_DB' } }), env: { ...env, AD_BENCH_DB: database.toString() }, tools: [guarded], logger: false });
    try {
      return await measure('postgres', host);
    } finally {
      await host.close();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const engineIndex = args.indexOf('--engine');
if (engineIndex >= 0) {
  const row = await one(args[engineIndex + 1]!);
  if (executions !== JOBS + 50) throw new Error(`expected every approved tool to run once, ran ${executions}`);
  console.log(JSON.stringify(row));
} else {
  if (!gc) console.error('Run with --expose-gc for steadier memory figures.');
  const engines = process.env.AGENTICDRIVER_TEST_POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  if (engines.length === 1) console.error('PostgreSQL skipped: run through `node scripts/postgres.mjs --run node --expose-gc --import tsx bench/waiting-jobs.ts`.');
  const rows = engines.map((engine) => {
    const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args, '--engine', engine], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (child.status !== 0) throw new Error(`the ${engine} round failed (${child.status})`);
    return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  });
  console.log(JSON.stringify({ bench: 'waiting-jobs', rows }, null, 2));
}
