/**
 * `POST /v1/operator/limits` on both engines, over real HTTP on a fake clock: every configured
 * scope (the host, each named subject, each subject under `*` that has used the host, each token,
 * each provider instance)
 * with its rate limits and each budget's limit, used, reserved, remaining and reset time, as the
 * counters in the store hold them; one subject on its own; an empty list without limits.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { FakeClock } from '../support/fake-clock.js';
import { OTHER_TOKEN, RESTRICTED_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { ENGINES, stateConfig } from '../support/stores.js';
import { tempDir } from '../support/temp.js';

/** $1 per million tokens in and out: a step reporting 1,000 + 1,000 tokens costs $0.002. */
const PRICES = { prices: [{ vendor: 'mock', model: 'demo', inputUsdPerMTok: 1, outputUsdPerMTok: 1 }] };
const OPERATOR_TOKEN = RESTRICTED_TOKEN;
const TOKENS = [
  { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'] },
  { id: 'other', subject: 'other-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'] },
  { id: 'ops', subject: 'operator-1', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: [], operator: true },
];
const LIMITS = {
  maxOutputTokens: 100,
  host: { requestsPerMinute: 600, budgets: [{ period: 'month', usd: 10 }] },
  subjects: {
    '*': { requestsPerMinute: 60, budgets: [{ period: 'day', usd: 0.5, tokens: 100_000 }] },
    acme: { concurrentRuns: 3, budgets: [{ period: 'week', usd: 20 }] },
  },
  tokens: { main: { tokensPerMinute: 50_000, budgets: [{ period: { rollingMs: 3_600_000 }, tokens: 30_000 }] } },
  providers: { mock: { concurrentRuns: 8, budgets: [{ period: 'day', tokens: 1_000_000 }] } },
};
const run = { provider: 'mock', model: 'demo', input: script([{ text: 'ok' }, { usage: { inputTokens: 1000, outputTokens: 1000 } }]) };

for (const engine of ENGINES) {
  describe(`operator limits (${engine})`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function host(limits: Record<string, unknown> | undefined, clock: FakeClock): Promise<TestHost> {
      const state = await stateConfig(engine, tempDir('agenticdriver-limits-view-'));
      cleanups.push(state.cleanup);
      // The host reads its database URL from the environment (PostgreSQL only).
      for (const [name, value] of Object.entries(state.env)) {
        process.env[name] = value;
        cleanups.push(async () => delete process.env[name]);
      }
      const started = await startTestHost({ tokens: TOKENS, usage: PRICES, state: state.config, ...(limits ? { limits } : {}) }, { clock });
      cleanups.push(() => started.close());
      return started;
    }
    const limitsOf = async (h: TestHost, body: unknown = {}, token = OPERATOR_TOKEN) => {
      const response = await fetch(`${h.url}/v1/operator/limits`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as any };
    };

    it('shows every scope with its rate limits and budgets: limit, used, reserved, remaining, reset time', async () => {
      const clock = new FakeClock();
      const h = await host(LIMITS, clock);
      // Nobody ran yet: the host, the named subject and the token are listed; no subject under `*`.
      const empty = await limitsOf(h);
      assert.equal(empty.status, 200);
      assert.deepEqual(
        empty.body.limits.map((entry: { scope: string; name?: string }) => `${entry.scope}:${entry.name ?? ''}`),
        ['host:', 'subject:acme', 'token:main', 'provider:mock'],
      );
      await clock.advance(3_600_000);
      for (let index = 0; index < 2; index += 1) assert.equal((await h.post('/v1/runs', run)).status, 200);
      assert.equal((await h.post('/v1/runs', run, { authorization: `Bearer ${OTHER_TOKEN}` })).status, 200);

      const { status, body } = await limitsOf(h);
      assert.equal(status, 200);
      const byScope = new Map<string, any>(body.limits.map((entry: { scope: string; name?: string }) => [`${entry.scope}:${entry.name ?? ''}`, entry]));
      assert.deepEqual([...byScope.keys()], ['host:', 'subject:acme', 'subject:other-user', 'subject:test-user', 'token:main', 'provider:mock']);
      // Every subject's runs on the provider instance count together.
      assert.deepEqual(byScope.get('provider:mock'), {
        scope: 'provider',
        name: 'mock',
        concurrentRuns: 8,
        budgets: [{ unit: 'tokens', period: 'day', limit: 1_000_000, used: 6000, reserved: 0, remaining: 994_000, resetsAt: '2026-12-01T00:00:00.000Z' }],
      });
      // The fake clock stands at 2026-11-30T01:00Z, a Monday: the month ends on Dec 1, the day at midnight UTC.
      assert.deepEqual(byScope.get('host:'), {
        scope: 'host',
        requestsPerMinute: 600,
        budgets: [{ unit: 'usd', period: 'month', limit: 10, used: 0.006, reserved: 0, remaining: 9.994, resetsAt: '2026-12-01T00:00:00.000Z' }],
      });
      assert.deepEqual(byScope.get('subject:test-user'), {
        scope: 'subject',
        name: 'test-user',
        requestsPerMinute: 60,
        budgets: [
          { unit: 'usd', period: 'day', limit: 0.5, used: 0.004, reserved: 0, remaining: 0.496, resetsAt: '2026-12-01T00:00:00.000Z' },
          { unit: 'tokens', period: 'day', limit: 100_000, used: 4000, reserved: 0, remaining: 96_000, resetsAt: '2026-12-01T00:00:00.000Z' },
        ],
      });
      assert.equal(byScope.get('subject:other-user').budgets[1].used, 2000, 'each subject under * has its own counters');
      assert.deepEqual(byScope.get('subject:acme'), {
        scope: 'subject',
        name: 'acme',
        concurrentRuns: 3,
        budgets: [{ unit: 'usd', period: 'week', limit: 20, used: 0, reserved: 0, remaining: 20, resetsAt: '2026-12-07T00:00:00.000Z' }],
      });
      const token = byScope.get('token:main');
      assert.equal(token.tokensPerMinute, 50_000);
      assert.deepEqual(
        { ...token.budgets[0], resetsAt: undefined },
        { unit: 'tokens', period: 'rolling-3600000', limit: 30_000, used: 4000, reserved: 0, remaining: 26_000, resetsAt: undefined },
      );

      // One subject: its own rule, else the `*` default's on its own counters, even before it ran.
      assert.deepEqual((await limitsOf(h, { subject: 'test-user' })).body.limits, [byScope.get('subject:test-user')]);
      const newcomer = (await limitsOf(h, { subject: 'newcomer' })).body.limits;
      assert.deepEqual(newcomer.map((entry: { name: string; budgets: { used: number }[] }) => [entry.name, entry.budgets.map((budget) => budget.used)]), [['newcomer', [0, 0]]]);

      // A client mistake is a typed 400; an application token is refused.
      const invalid = await limitsOf(h, { subject: '' });
      assert.deepEqual([invalid.status, invalid.body.error.code], [400, 'INVALID_OPERATOR_REQUEST']);
      const forbidden = await limitsOf(h, {}, TOKEN);
      assert.deepEqual([forbidden.status, forbidden.body.error.code], [403, 'FORBIDDEN']);
    });

    it('answers an empty list when no limit is configured', async () => {
      const h = await host(undefined, new FakeClock());
      assert.equal((await h.post('/v1/runs', run)).status, 200);
      assert.deepEqual(await limitsOf(h), { status: 200, body: { limits: [] } });
    });
  });
}
