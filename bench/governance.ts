/**
 * What governance (config `limits`, issue 32) costs a run in host CPU: the governor's checks —
 * the charges of a run's scopes, its periods, the first step's estimate, the refusal test, the
 * settle after a step and the release — for a run under a full set of limits (host, subject and
 * token: requests and tokens per minute, concurrent runs, daily USD and token budgets, a monthly
 * token budget), over a store that answers at once; goal ≤ 0.02 ms per run. Baseline: a
 * one-step mock run through the in-process runtime, same process. Then the same checks on the
 * real SQLite store, whose transactions (three per run) are the rest of the price.
 *
 *   npx tsx bench/governance.ts [--runs N] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { Governor, type GovernanceLimits, type GovernedRunInfo } from '../src/http/limits/governor.js';
import { MockProvider } from '../src/providers/mock.js';
import { AgenticDriver } from '../src/runtime/driver.js';
import { systemClock } from '../src/shared/clock.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { LimitStore } from '../src/store/store.js';
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const RUNS = Number(option('--runs') ?? 20_000);
const GOAL_MS = 0.02;

const LIMITS: GovernanceLimits = {
  timeZone: 'Europe/Berlin',
  host: { requestsPerMinute: 10_000_000, concurrentRuns: 100_000, budgets: [{ period: 'day', usd: 1_000_000 }] },
  subjects: { '*': { requestsPerMinute: 10_000_000, tokensPerMinute: 1_000_000_000_000, budgets: [{ period: 'day', usd: 1_000_000, tokens: 1_000_000_000_000 }] } },
  tokens: { app: { budgets: [{ period: 'month', tokens: 1_000_000_000_000 }] } },
};

const RUN: GovernedRunInfo = {
  subject: 'acme',
  tokenId: 'app',
  provider: 'mock',
  request: { provider: 'mock', model: 'demo', input: 'Summarize the meeting notes in three bullet points.' } as GovernedRunInfo['request'],
  vendor: 'mock',
  model: 'demo',
  authMode: 'none',
  maxOutputTokens: 1024,
  priceUsd: (usage) => ((usage.inputTokens ?? 0) * 2.5 + (usage.outputTokens ?? 0) * 10) / 1_000_000,
};
const STEP_USAGE = { inputTokens: 1200, outputTokens: 300 };

/** A store that answers at once: what is left is the governor's own work. */
const instant: LimitStore = {
  take: async () => undefined,
  settle: async () => undefined,
  release: async () => undefined,
  read: async () => ({ used: 0, reserved: 0 }),
  prune: async () => undefined,
};

async function governedRuns(store: LimitStore, runs: number): Promise<void> {
  const governor = new Governor(store, systemClock, LIMITS);
  for (let index = 0; index < runs; index += 1) {
    const run = (await governor.admit(RUN))!;
    await run.steps.before(1);
    await run.steps.after(STEP_USAGE);
    await run.end();
  }
}

async function mockRuns(runs: number): Promise<void> {
  const driver = new AgenticDriver({ providers: [new MockProvider()] });
  for (let index = 0; index < runs; index += 1) await driver.run({ provider: 'mock', model: 'demo', input: 'Summarize the meeting notes in three bullet points.' });
  await driver.close();
}

/** CPU ms per run (user + system), after a warm-up of a tenth of the runs. */
async function cpuPerRun(work: (runs: number) => Promise<void>, runs: number): Promise<number> {
  await work(Math.max(1, Math.floor(runs / 10)));
  const start = process.cpuUsage();
  await work(runs);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / runs;
}

const checks = await cpuPerRun((runs) => governedRuns(instant, runs), RUNS);
const baseline = await cpuPerRun(mockRuns, Math.floor(RUNS / 4));
const dir = mkdtempSync(join(tmpdir(), 'agenticdriver-bench-governance-'));
let sqlite: number;
try {
  const store = await openSqliteStore(dir);
  try {
    sqlite = await cpuPerRun((runs) => governedRuns(store.limits, runs), Math.floor(RUNS / 10));
  } finally {
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const rows = [
  { metric: 'governance-checks-cpu-ms-per-run', value: checks, baseline, goal: GOAL_MS, met: checks <= GOAL_MS },
  { metric: 'governance-with-sqlite-cpu-ms-per-run', value: sqlite, baseline },
];
const ms = (value: number) => `${value.toFixed(4)} ms`;
console.log(`governance checks, CPU per run (${RUNS} runs, 3 scopes, 8 counters)`);
console.log(`  figure   ${ms(checks)}  (the governor's checks over a store that answers at once)`);
console.log(`  baseline ${ms(baseline)}  (a one-step mock run through the in-process runtime)`);
console.log(`  ratio    ${(checks / baseline).toFixed(3)}× of a mock run`);
console.log(`  goal     ≤ ${ms(GOAL_MS)}: ${checks <= GOAL_MS ? 'met' : `missed by ${ms(checks - GOAL_MS)}`}`);
console.log(`  with the SQLite store's three transactions: ${ms(sqlite)} per run (${(sqlite / baseline).toFixed(2)}× of a mock run)`);
const json = option('--json');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
