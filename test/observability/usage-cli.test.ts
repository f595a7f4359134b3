/** `agenticdriver usage`: totals from the state store, grouped, as a table and as JSON. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { readHostConfig } from '../../src/host/config.js';
import { startHost } from '../../src/host/index.js';
import type { UsageReport } from '../../src/cli/usage.js';
import { parseSince } from '../../src/cli/usage.js';
import { cli, terminalCli } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const TOKEN_A = 'usage-cli-token-a-0123456789abcdefghijkl';
const TOKEN_B = 'usage-cli-token-b-0123456789abcdefghijkl';

function script(...steps: unknown[][]): string {
  return JSON.stringify({ mockScript: { steps: steps.map((actions) => ({ actions })) } });
}

describe('agenticdriver usage', () => {
  const dir = tempDir('ad-usage-cli-');
  const config = join(dir, 'config.json');

  before(async () => {
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [
          { kind: 'mock', id: 'mock', models: ['demo'] },
          { kind: 'mock', id: 'other', models: ['demo'] },
        ],
        tokens: [
          { id: 'a', subject: 'alice', tokenRef: { env: 'AD_USAGE_A' }, providers: ['mock', 'other'] },
          { id: 'b', subject: 'bob', tokenRef: { env: 'AD_USAGE_B' }, providers: ['mock'] },
        ],
        usage: { prices: [{ vendor: 'mock', model: 'demo', inputUsdPerMTok: 1, outputUsdPerMTok: 2 }] },
      }),
    );
    const host = await startHost({ config: await readHostConfig(config), env: { ...process.env, AD_USAGE_A: TOKEN_A, AD_USAGE_B: TOKEN_B } });
    const post = (token: string, body: unknown) =>
      fetch(`${host.url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    try {
      const usage = { inputTokens: 1000, outputTokens: 100, cachedInputTokens: 10 };
      assert.equal((await post(TOKEN_A, { provider: 'mock', model: 'demo', input: script([{ text: 'x' }, { usage }]) })).status, 200);
      assert.equal((await post(TOKEN_A, { provider: 'other', model: 'demo', input: script([{ text: 'x' }, { usage }]) })).status, 200);
      assert.equal((await post(TOKEN_B, { provider: 'mock', model: 'demo', input: script([{ text: 'x' }, { usage: { costUsd: 0.5, inputTokens: 1 } }]) })).status, 200);
      assert.equal((await post(TOKEN_B, { provider: 'mock', model: 'demo', input: script([{ error: { code: 'PROVIDER_ERROR' } }]) })).status, 502);
    } finally {
      await host.close();
    }
  });

  it('groups by subject as JSON', () => {
    const result = cli(['usage', '--config', config, '--by', 'subject', '--json']);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(result.stdout) as UsageReport;
    assert.equal(report.by, 'subject');
    const [alice, bob] = report.rows;
    assert.equal(alice!.key, 'alice');
    assert.equal(alice!.runs, 2);
    assert.equal(alice!.inputTokens, 2000);
    assert.equal(alice!.outputTokens, 200);
    assert.equal(alice!.incompleteRuns, 0);
    assert.equal(alice!.apiEquivalentCostUsd, 0.0024);
    assert.equal(bob!.key, 'bob');
    assert.equal(bob!.runs, 2);
    assert.equal(bob!.completed, 1);
    assert.equal(bob!.failed, 1);
    assert.equal(bob!.incompleteRuns, 2);
    assert.equal(bob!.costUsd, 0.5);
  });

  it('prints totals as a table at a terminal (JSON in a pipe), by provider and by day', () => {
    const total = terminalCli(['usage', '--config', config]);
    assert.equal(total.status, 0, total.output);
    assert.match(total.output, /^Usage\n/);
    assert.match(total.output, /input tokens/);
    assert.match(total.output, /2,001/);
    const byProvider = terminalCli(['usage', '--config', config, '--by', 'provider']);
    assert.match(byProvider.output, /\nmock +3 /);
    assert.match(byProvider.output, /\nother +1 /);
    const piped = JSON.parse(cli(['usage', '--config', config, '--by', 'provider']).stdout) as UsageReport;
    assert.deepEqual(piped.rows.map((row) => [row.key, row.runs]), [['mock', 3], ['other', 1]]);
    const byDay = JSON.parse(cli(['usage', '--config', config, '--by', 'day', '--json']).stdout) as UsageReport;
    assert.equal(byDay.rows.length, 1);
    assert.match(byDay.rows[0]!.key!, /^\d{4}-\d{2}-\d{2}$/);
  });

  it('--since filters by finish time; bad arguments are INVALID_ARGUMENT', () => {
    const future = JSON.parse(cli(['usage', '--config', config, '--since', '2999-01-01', '--json']).stdout) as UsageReport;
    assert.equal(future.rows[0]!.runs, 0);
    const recent = JSON.parse(cli(['usage', '--config', config, '--since', '1h', '--json']).stdout) as UsageReport;
    assert.equal(recent.rows[0]!.runs, 4);
    for (const args of [['--since', 'yesterday'], ['--by', 'token']]) {
      const result = cli(['usage', '--config', config, ...args]);
      assert.equal(result.status, 1);
      assert.equal((JSON.parse(result.stderr.trim()) as { error: { code: string } }).error.code, 'INVALID_ARGUMENT');
    }
    assert.equal(parseSince('2d', Date.parse('2026-01-03T00:00:00Z')), '2026-01-01T00:00:00.000Z');
  });

  it('prints each subject\'s, token\'s and provider\'s limits and what their budgets have left', async () => {
    // The same state, now with limits; one more run of alice's is governed by them.
    const limited = join(dir, 'limited.json');
    const rolling = { rollingMs: 30 * 86_400_000 };
    const raw = JSON.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
    raw.limits = { subjects: { '*': { requestsPerMinute: 60, budgets: [{ period: rolling, usd: 1 }] } }, tokens: { a: { concurrentRuns: 2, budgets: [{ period: rolling, tokens: 100_000 }] } }, providers: { mock: { tokensPerMinute: 50_000, budgets: [{ period: rolling, tokens: 200_000 }] } } };
    writeFileSync(limited, JSON.stringify(raw));
    const host = await startHost({ config: await readHostConfig(limited), env: { ...process.env, AD_USAGE_A: TOKEN_A, AD_USAGE_B: TOKEN_B } });
    try {
      const response = await fetch(`${host.url}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' },
        body: JSON.stringify({ provider: 'mock', model: 'demo', input: script([{ text: 'x' }, { usage: { inputTokens: 1000, outputTokens: 100 } }]) }),
      });
      assert.equal(response.status, 200);
    } finally {
      await host.close();
    }
    const report = JSON.parse(cli(['usage', '--config', limited, '--json']).stdout) as UsageReport;
    const budget = (entry: NonNullable<UsageReport['limits']>[number]) => entry.budgets.map(({ unit, limit, used, reserved, remaining }) => ({ unit, limit, used, reserved, remaining }));
    assert.deepEqual(
      report.limits!.map((entry) => [entry.scope, entry.name, entry.requestsPerMinute, entry.concurrentRuns, budget(entry)]),
      [
        ['subject', 'alice', 60, undefined, [{ unit: 'usd', limit: 1, used: 0.0012, reserved: 0, remaining: 0.9988 }]],
        ['subject', 'bob', 60, undefined, [{ unit: 'usd', limit: 1, used: 0, reserved: 0, remaining: 1 }]],
        ['token', 'a', undefined, 2, [{ unit: 'tokens', limit: 100_000, used: 1100, reserved: 0, remaining: 98_900 }]],
        ['provider', 'mock', undefined, undefined, [{ unit: 'tokens', limit: 200_000, used: 1100, reserved: 0, remaining: 198_900 }]],
      ],
    );
    const table = terminalCli(['usage', '--config', limited]);
    assert.match(table.output, /\nsubject alice: 60 requests\/min\n +rolling-2592000000 budget \$1\.0000: used \$0\.0012, reserved \$0\.0000, remaining \$0\.9988, resets /);
    assert.match(table.output, /\ntoken a: 2 concurrent runs\n +rolling-2592000000 budget 100,000 tokens: used 1,100 tokens/);
    assert.match(table.output, /\nprovider mock: 50,000 tokens\/min\n +rolling-2592000000 budget 200,000 tokens: used 1,100 tokens/);
  });
});
