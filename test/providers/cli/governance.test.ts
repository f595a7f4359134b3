/**
 * A subscription CLI run under a budget (docs/governance.md, `cliCost`): the real Codex CLI from
 * npm, against a loopback Responses server, through a host with `cliCost: "api-equivalent"`. The
 * CLI reports tokens but no charge; the budget counts them at the operator's price table, and
 * once that spent the budget the next run is refused BUDGET_EXCEEDED before any model call.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { RESTRICTED_TOKEN, startTestHost, type TestHost } from '../../support/host.js';
import { API_KEY, binary, codexAccount, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 90_000 };
/** $1 per million input tokens, $5 per million output: 100,000 in and 20,000 out cost $0.20. */
const PRICES = [{ vendor: 'codex', model: 'gpt-5.5', inputUsdPerMTok: 1, outputUsdPerMTok: 5 }];
/** Less than one run's $0.20, more than a run's estimate before it starts (about $0.005). */
const BUDGET_USD = 0.15;

describe('a CLI run counted at its API-equivalent cost', () => {
  let host: TestHost;
  let server: VendorServer;
  let proxy: RefusingProxy;
  let scratch: { path: string; remove(): Promise<void> };

  before(async () => {
    proxy = await startRefusingProxy();
    scratch = await scratchDirectory('governance');
    server = await startOpenAIResponsesServer({ apiKey: API_KEY });
    host = await startTestHost({
      providers: [
        {
          kind: 'codex',
          id: 'codex',
          models: ['gpt-5.5'],
          binary: binary('codex'),
          accountDirectory: await codexAccount(await mkdtemp(join(scratch.path, 'codex-')), server.url),
          environment: { LOOPBACK_OPENAI_KEY: API_KEY, HTTPS_PROXY: proxy.url, https_proxy: proxy.url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
        },
      ],
      usage: { prices: PRICES },
      limits: { cliCost: 'api-equivalent', subjects: { 'test-user': { budgets: [{ period: 'day', usd: BUDGET_USD }] } } },
      tokens: [
        { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['codex'] },
        { id: 'ops', subject: 'operator', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: [], operator: true },
      ],
    });
  });
  after(async () => {
    await host?.close();
    await server?.close();
    await proxy?.close();
    await scratch?.remove();
    assert.deepEqual(proxy.attempts, [], 'no CLI traffic may leave for anywhere but the loopback model server');
  });

  const budget = async () => {
    const response = await fetch(`${host.url}/v1/operator/limits`, { method: 'POST', headers: { authorization: `Bearer ${RESTRICTED_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'test-user' }) });
    const { limits } = (await response.json()) as { limits: { budgets: { limit: number; used: number; reserved: number; remaining: number }[] }[] };
    const { limit, used, reserved, remaining } = limits[0]!.budgets[0]!;
    return { limit, used, reserved, remaining };
  };

  test('the budget gets the price-table cost of the tokens the CLI reported, and a second run is refused once it is spent', TIMEOUT, async () => {
    server.push({ turn: { text: 'Counted.', usage: { input: 100_000, output: 20_000 } } });
    const response = await host.post('/v1/runs', { provider: 'codex', model: 'gpt-5.5', input: 'Say something worth $0.20.' });
    const result = (await response.json()) as { text: string; usage: { inputTokens?: number; outputTokens?: number; costUsd?: number } };
    assert.equal(response.status, 200, JSON.stringify(result));
    assert.equal(result.text, 'Counted.');
    assert.deepEqual([result.usage.inputTokens, result.usage.outputTokens, result.usage.costUsd], [100_000, 20_000, undefined], 'tokens reported, no charge');
    // What was spent is what the tokens cost at the price table; nothing is left reserved.
    assert.deepEqual(await budget(), { limit: BUDGET_USD, used: 0.2, reserved: 0, remaining: 0 });

    const requests = server.generations.length;
    const refused = await host.post('/v1/runs', { provider: 'codex', model: 'gpt-5.5', input: 'And again.' });
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    assert.equal(refused.status, 429);
    assert.equal(error.code, 'BUDGET_EXCEEDED');
    assert.match(error.message, /^This subject's day USD budget is spent; it resets at \d{4}-\d{2}-\d{2}T00:00:00\.000Z\.$/);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal(server.generations.length, requests, 'the refused run made no model request');
  });
});
