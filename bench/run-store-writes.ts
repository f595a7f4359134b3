/**
 * What the durable records of one attached run cost the SQLite store (issue 30, item 1): C runs at
 * a time, each written as the host writes it — its start record (awaited), its events queued for
 * the group commit, its terminal event (awaited) and its usage record in the same turn — and
 * counted: statements and transactions per run, and the process's CPU per run. `--tree DIR` runs
 * the same writes against another checkout's store (e.g. main) in the same way, for a before/after.
 *
 *   npx tsx bench/run-store-writes.ts [--runs N] [--concurrency C] [--tree DIR]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1]! : fallback;
};
const RUNS = Number(option('runs', '4000'));
const CONCURRENCY = Number(option('concurrency', '32'));
const TREE = option('tree', new URL('..', import.meta.url).pathname);

interface Store {
  usage: { runStarted(record: object): Promise<void>; record(record: object): Promise<void> };
  runs: { record(write: object, done?: (error?: unknown) => void): void };
  start(options: { leaseMs: number; onLeaseLost(): void }): Promise<unknown>;
  close(): Promise<void>;
}

// Counts every statement better-sqlite3 runs (BEGIN and COMMIT apart: each BEGIN is a transaction).
let statements = 0;
let transactions = 0;
const sqlite = (await import(pathToFileURL(join(TREE, 'node_modules/better-sqlite3/lib/index.js')).href)) as { default: new (file: string) => Record<string, (...args: unknown[]) => unknown> };
const Database = sqlite.default as unknown as { prototype: Record<string, (...args: unknown[]) => unknown>; new (file: string): { prepare(sql: string): object; close(): void } };
const probe = new Database(':memory:');
const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
probe.close();
const count = (sql: string) => {
  if (/^BEGIN/i.test(sql)) transactions += 1;
  else if (!/^(COMMIT|ROLLBACK)/i.test(sql)) statements += 1;
};
for (const method of ['run', 'all', 'get'] as const) {
  const original = proto[method]!;
  proto[method] = function (this: { source: string }, ...params: unknown[]) {
    count(this.source);
    return original.apply(this, params);
  };
}
const exec = Database.prototype.exec!;
Database.prototype.exec = function (this: unknown, sql: unknown) {
  count(String(sql));
  return exec.call(this, sql);
};

const { openSqliteStore } = (await import(pathToFileURL(join(TREE, 'src/store/sqlite/sqlite-store.ts')).href)) as { openSqliteStore(dir: string): Promise<Store> };
const dir = mkdtempSync(join(tmpdir(), 'ad-bench-store-'));
const store = await openSqliteStore(dir);
await store.start({ leaseMs: 60_000, onLeaseLost: () => undefined });

const at = () => new Date().toISOString();
let made = 0;
async function oneRun(): Promise<void> {
  const runId = `bench-${process.pid}-${(made += 1)}`;
  const base = { runId, subject: 'bench', provider: 'mock', model: 'demo' };
  await store.usage.runStarted({ ...base, schema: 'agenticdriver.usage.v2', recordId: runId, hostId: 'bench', vendor: 'mock', authMode: 'none', source: 'synthetic', startedAt: at() });
  const payloads = [
    { type: 'run.started', provider: 'mock', model: 'demo' },
    { type: 'step.started', step: 1 },
    { type: 'text.delta', text: 'Hello, this is the answer of a benchmark run.' },
    { type: 'usage.reported', step: 1, usage: { inputTokens: 10, outputTokens: 9 } },
  ];
  let sequence = 0;
  const write = (payload: object) => ({ ...base, retentionMs: 86_400_000, event: { ...payload, runId, sequence: (sequence += 1), timestamp: at() } });
  for (const payload of payloads) store.runs.record(write(payload));
  const terminal = new Promise<void>((resolve, reject) => store.runs.record(write({ type: 'run.completed', result: { runId, text: 'Hello', steps: 1 } }), (error) => (error ? reject(error) : resolve())));
  const usage = store.usage.record({ ...base, schema: 'agenticdriver.usage.v2', recordId: runId, status: 'completed', startedAt: at(), finishedAt: at(), durationMs: 1, steps: 1 });
  await Promise.all([terminal, usage]);
}

async function load(runs: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, runs) }, async () => {
      while (next < runs) {
        next += 1;
        await oneRun();
      }
    }),
  );
}

try {
  await load(Math.min(500, RUNS)); // warm-up: statements prepared, pages cached
  statements = 0;
  transactions = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await load(RUNS);
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  console.log(`store writes of ${RUNS} runs at c=${CONCURRENCY} (${TREE}):`);
  console.log(`  statements per run    ${(statements / RUNS).toFixed(2)}`);
  console.log(`  transactions per run  ${(transactions / RUNS).toFixed(3)} (${(RUNS / transactions).toFixed(1)} runs a commit)`);
  console.log(`  CPU per run           ${((used.user + used.system) / 1000 / RUNS).toFixed(3)} ms`);
  console.log(`  runs/s                ${Math.round(RUNS / (elapsed / 1000))}`);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
