/**
 * A budget shared by two host processes on one PostgreSQL database: 200 concurrent runs
 * against $0.50 never spend more than the budget plus the documented bound (each run in flight
 * overruns by at most its step's cost above its reservation; here every step is reserved at
 * least at its cost, so the bound is zero), every reservation is released at the end, and the
 * counter agrees with the usage records. Then SIGHUP: a bad config keeps the running limits
 * (and the log says why), a good one replaces them.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { script } from '../support/host.js';
import { freshDatabase } from '../support/postgres.js';
import { CLI_MAIN, killAll, spawnHost, type HostProcess } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'budget-token-0123456789abcdefghijklmnop';
const BUDGET_USD = 0.5;
/** $10 per million tokens: a step reporting 1,000 + 1,000 tokens costs $0.02. */
const STEP_USD = 0.02;
/** A step is reserved at its request's size plus `maxOutputTokens` (2,000): at least what it costs. */
const MAX_OUTPUT_TOKENS = 2000;
const RUNS = 200;

describe('a budget shared by two replica processes on PostgreSQL', () => {
  const dir = tempDir('agenticdriver-budget-replicas-');
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const waiters: (() => void)[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let env: NodeJS.ProcessEnv;
  let replicas: HostProcess[];

  const config = (budget: Record<string, unknown>, extraLimits: Record<string, unknown> = {}) => ({
    version: 1,
    listen: { host: '127.0.0.1', port: 0 },
    providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
    tokens: [{ id: 'app', subject: 'acme', tokenRef: { env: 'AD_BUDGET_TOKEN' }, providers: ['mock'] }],
    usage: { prices: [{ vendor: 'mock', model: 'demo', inputUsdPerMTok: 10, outputUsdPerMTok: 10 }] },
    limits: { maxOutputTokens: MAX_OUTPUT_TOKENS, maxConcurrentRuns: RUNS, maxConcurrentRunsPerSubject: RUNS, subjects: { acme: { budgets: [budget] } }, ...extraLimits },
    state: { engine: 'postgres', urlRef: { env: 'AD_BUDGET_DB' } },
  });
  // A rolling month, so that no calendar boundary falls inside the test.
  const monthly = { period: { rollingMs: 30 * 86_400_000 }, usd: BUDGET_USD };
  const writeConfig = (value: unknown) => writeFileSync(join(dir, 'config.json'), typeof value === 'string' ? value : JSON.stringify(value), { mode: 0o600 });

  before(async () => {
    database = await freshDatabase();
    env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_BUDGET_TOKEN: TOKEN, AD_BUDGET_DB: database.url };
    writeConfig(config(monthly));
    const serve = () =>
      spawnHost([CLI_MAIN, 'serve', '--config', join(dir, 'config.json'), '--json'], env, children, {
        onStderr: (text) => {
          logs.push(...text.split('\n').filter((line) => line.startsWith('{')));
          for (const wake of waiters.splice(0)) wake();
        },
      });
    replicas = [await serve(), await serve()];
  });
  after(async () => {
    killAll(children);
    await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined)));
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function query<T>(sql: string): Promise<T[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const post = (url: string) =>
    fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'mock', model: 'demo', input: script([{ text: 'ok' }, { usage: { inputTokens: 1000, outputTokens: 1000 } }]) }),
    });

  it('never spends more than the budget plus the bound, and releases every reservation', async (t) => {
    const answers = await Promise.all(
      Array.from({ length: RUNS }, async (_, index) => {
        const response = await post(replicas[index % 2]!.url);
        const body = (await response.json()) as { error?: { code: string } };
        return { status: response.status, code: body.error?.code ?? 'OK', retryAfter: response.headers.get('retry-after') };
      }),
    );
    const completed = answers.filter((answer) => answer.code === 'OK').length;
    const refused = answers.filter((answer) => answer.code === 'BUDGET_EXCEEDED');
    assert.equal(completed + refused.length, RUNS, JSON.stringify(answers.filter((answer) => answer.code !== 'OK' && answer.code !== 'BUDGET_EXCEEDED')));
    assert.ok(refused.every((answer) => answer.status === 429 && Number(answer.retryAfter) > 0));
    assert.ok(completed >= 1 && completed <= BUDGET_USD / STEP_USD, `completed ${completed}`);
    const [counter] = await query<{ used: string; reserved: string }>("SELECT SUM(used) AS used, SUM(reserved) AS reserved FROM limit_counters WHERE scope = 'subject:acme' AND metric LIKE 'usd:%'");
    const spent = Number(counter!.used) / 1e6;
    // The bound: runs in flight × max(0, step cost − its reservation) = 0 here.
    assert.ok(spent <= BUDGET_USD, `spent ${spent}`);
    assert.equal(Math.round(spent * 1e6), Math.round(completed * STEP_USD * 1e6), 'every completed run was settled once');
    assert.equal(Number(counter!.reserved), 0, 'no reservation is left behind');
    assert.deepEqual(await query('SELECT hold_id FROM limit_holds'), []);
    t.diagnostic(`${completed} runs completed, ${refused.length} refused BUDGET_EXCEEDED; spent $${spent} of $${BUDGET_USD}`);
    // The usage records agree (written off the request path: waited for).
    for (;;) {
      const [records] = await query<{ count: number }>("SELECT COUNT(*)::int AS count FROM usage_records WHERE status = 'completed'");
      if (records!.count === completed) break;
      assert.ok(records!.count < completed);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  /** Sends SIGHUP and resolves with the replica's verdict (its `config` log line). */
  async function reload(replica: HostProcess): Promise<{ msg: string; error?: { code: string; message: string } }> {
    const from = logs.length;
    replica.child.kill('SIGHUP');
    for (;;) {
      const found = logs.slice(from).map((line) => JSON.parse(line) as { kind?: string; msg: string }).find((line) => line.kind === 'config');
      if (found) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  }

  it('keeps the running limits on SIGHUP with a bad config, and applies a good one', async () => {
    const [first] = replicas;
    assert.equal((await post(first!.url)).status, 429);
    writeConfig(config(monthly, { timeZone: 'Nowhere/Atlantis' }));
    const refused = await reload(first!);
    assert.equal(refused.msg, 'config reload refused; the running config stays');
    assert.equal(refused.error?.code, 'INVALID_CONFIG');
    assert.match(refused.error!.message, /limits\.timeZone "Nowhere\/Atlantis" is not an IANA time zone/);
    assert.equal((await post(first!.url)).status, 429, 'the old budget still applies');
    writeConfig(config({ ...monthly, usd: 100 }));
    assert.equal((await reload(first!)).msg, 'config reloaded');
    assert.equal((await post(first!.url)).status, 200);
  });
});
