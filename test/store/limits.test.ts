/**
 * Governance counters (`limits` table) and the governor on both engines: the conditional update
 * holds under concurrency, a settled step replaces its reservation with what it used, a dead
 * replica's reservation is released by the reaper, periods reset at their boundary in the
 * configured time zone, and a subscription-CLI run counts at its API-equivalent cost only when
 * the config says so.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DriverError } from '../../src/protocol/errors.js';
import { Governor, type GovernanceLimits, type GovernedRunInfo } from '../../src/http/limits/governor.js';
import { periodWindow } from '../../src/http/limits/periods.js';
import { limitsReport, MAX_DEFAULT_SUBJECTS } from '../../src/http/limits/report.js';
import type { LimitCharge } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';
import { ENGINES, openTestStore, sharedState } from '../support/stores.js';

const charge = (overrides: Partial<LimitCharge> = {}): LimitCharge => ({ scope: 'subject:a', metric: 'usd:day', window: 1000, limit: 100, need: 10, use: 0, reserve: 10, ...overrides });

/** A run as the run service describes it: $1 per million input and output tokens. */
function runInfo(overrides: Partial<GovernedRunInfo> = {}): GovernedRunInfo {
  return {
    subject: 'acme',
    tokenId: 'main',
    provider: 'mock',
    request: { provider: 'mock', model: 'demo', input: 'hello' } as GovernedRunInfo['request'],
    vendor: 'mock',
    model: 'demo',
    authMode: 'none',
    maxOutputTokens: 1000,
    priceUsd: (usage) => ((usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)) / 1_000_000,
    ...overrides,
  };
}

describe('period windows', () => {
  it('aligns calendar periods in the configured time zone and rolls rolling ones by bucket', () => {
    // 2026-11-30T03:00Z is 22:00 on Sunday 29 November in New York (UTC-5).
    const now = Date.UTC(2026, 10, 30, 3);
    assert.deepEqual(periodWindow('day', now, 'America/New_York'), { window: Date.UTC(2026, 10, 29, 5), resetAt: Date.UTC(2026, 10, 30, 5) });
    assert.deepEqual(periodWindow('week', now, 'America/New_York'), { window: Date.UTC(2026, 10, 23, 5), resetAt: Date.UTC(2026, 10, 30, 5) });
    assert.deepEqual(periodWindow('month', now, 'America/New_York'), { window: Date.UTC(2026, 10, 1, 4), resetAt: Date.UTC(2026, 11, 1, 5) });
    assert.deepEqual(periodWindow('day', now, 'UTC'), { window: Date.UTC(2026, 10, 30), resetAt: Date.UTC(2026, 11, 1) });
    // Across the spring change in Berlin the day is 23 hours long.
    const spring = periodWindow('day', Date.UTC(2026, 2, 29, 12), 'Europe/Berlin');
    assert.equal(spring.resetAt - spring.window, 23 * 3_600_000);
    const rolling = periodWindow({ rollingMs: 3_600_000 }, Date.UTC(2026, 10, 30, 3, 0, 30), 'UTC');
    assert.deepEqual(rolling, { window: Date.UTC(2026, 10, 30, 3), since: Date.UTC(2026, 10, 30, 2), resetAt: Date.UTC(2026, 10, 30, 3, 1) });
  });
});

for (const engine of ENGINES) {
  describe(`limit counters (${engine})`, () => {
    it('admits concurrent charges only while they fit, all of a run\'s charges or none', async () => {
      const store = await openTestStore(engine);
      try {
        const results = await Promise.all(Array.from({ length: 25 }, (_, index) => store.limits.take(`run-${index}`, [charge({ metric: 'requests', need: 1, use: 1, reserve: 0, limit: 1000 }), charge()])));
        const admitted = results.flatMap((refusal, index) => (refusal === undefined ? [`run-${index}`] : []));
        assert.equal(admitted.length, 10);
        const refusal = results.find((found) => found !== undefined)!;
        assert.equal(refusal.charge.metric, 'usd:day');
        assert.deepEqual(await store.limits.read('subject:a', 'usd:day', 1000), { used: 0, reserved: 100 });
        // The refused runs' request charges were rolled back with them.
        assert.deepEqual(await store.limits.read('subject:a', 'requests', 1000), { used: 10, reserved: 0 });
        // A step settles: its reservation goes, what it used stays.
        await store.limits.settle(admitted[0]!, [{ scope: 'subject:a', metric: 'usd:day', window: 1000, amount: 4 }], ['usd:day']);
        assert.deepEqual(await store.limits.read('subject:a', 'usd:day', 1000), { used: 4, reserved: 90 });
        await store.limits.release(admitted[1]!);
        await store.limits.release(admitted[1]!);
        assert.deepEqual(await store.limits.read('subject:a', 'usd:day', 1000), { used: 4, reserved: 80 });
        // Pruning forgets per-minute counters of past minutes only.
        await store.limits.prune(1000);
        assert.equal((await store.limits.read('subject:a', 'requests', 1000)).used, 10);
        await store.limits.prune(1001);
        assert.equal((await store.limits.read('subject:a', 'requests', 1000)).used, 0);
        assert.equal((await store.limits.read('subject:a', 'usd:day', 1000)).used, 4);
      } finally {
        await store.close();
      }
    });

    it('sums a rolling period over the buckets still inside it', async () => {
      const store = await openTestStore(engine);
      try {
        const rolling = (window: number, since: number) => charge({ metric: 'tokens:rolling-60000', window, since, limit: 10, need: 4, reserve: 0, use: 4 });
        assert.equal(await store.limits.take('a', [rolling(0, -60_000)]), undefined);
        assert.equal(await store.limits.take('b', [rolling(1000, -59_000)]), undefined);
        assert.equal((await store.limits.take('c', [rolling(2000, -58_000)]))?.used, 8);
        // The first bucket has left the period.
        assert.equal(await store.limits.take('d', [rolling(61_000, 1000)]), undefined);
        assert.deepEqual(await store.limits.read('subject:a', 'tokens:rolling-60000', 61_000, 1000), { used: 8, reserved: 0 });
      } finally {
        await store.close();
      }
    });

    it('releases what a dead replica reserved when the reaper runs', async () => {
      const state = await sharedState(engine);
      const first = await state.open();
      await first.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
      assert.equal(await first.limits.take('crashed-run', [charge({ metric: 'runs', window: 0, limit: 1, need: 1, reserve: 1 })]), undefined);
      // A clean stop gives the lease up; the hold is left for whoever reaps. (PostgreSQL: the
      // second replica is opened first, as the database lives while one of them is open.)
      const second = engine === 'postgres' ? await state.open() : undefined;
      await first.close();
      const reaper = second ?? (await state.open());
      try {
        assert.equal((await reaper.limits.read('subject:a', 'runs', 0)).reserved, 1);
        await reaper.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
        assert.deepEqual(await reaper.limits.read('subject:a', 'runs', 0), { used: 0, reserved: 0 });
      } finally {
        await reaper.close();
      }
    });
  });

  describe(`governor (${engine})`, () => {
    it('refuses a spent budget with its reset time, and admits again after the period boundary', async () => {
      const store = await openTestStore(engine);
      const clock = new FakeClock();
      const refused: string[] = [];
      const limits: GovernanceLimits = { timeZone: 'America/New_York', subjects: { '*': { budgets: [{ period: 'day', usd: 0.01 }] } } };
      const governor = new Governor(store.limits, clock, limits, (code) => refused.push(code));
      try {
        // Each run: one step of 2,500 tokens at $1 per million = $0.0025, reserved at its estimate first.
        for (let index = 0; index < 4; index += 1) {
          const run = (await governor.admit(runInfo()))!;
          await run.steps.before(1);
          await run.steps.after({ inputTokens: 1500, outputTokens: 1000 });
          await run.end();
        }
        const status = await governor.budgetStatus('subject', 'acme');
        assert.deepEqual(status, [{ unit: 'usd', period: 'day', limit: 0.01, used: 0.01, reserved: 0, remaining: 0, resetsAt: '2026-11-30T05:00:00.000Z' }]);
        // FakeClock starts at 2026-11-30T00:00Z, 19:00 the day before in New York.
        const error = await governor.admit(runInfo()).then(() => undefined, (failure: unknown) => failure);
        assert.ok(error instanceof DriverError);
        assert.equal(error.code, 'BUDGET_EXCEEDED');
        assert.equal(error.retryAfterSeconds, 5 * 3600);
        assert.match(error.message, /This subject's day USD budget is spent; it resets at 2026-11-30T05:00:00\.000Z\./);
        assert.doesNotMatch(error.message, /0\.01/);
        // Another subject has its own counter.
        assert.ok(await governor.admit(runInfo({ subject: 'other' })));
        await clock.advance(5 * 3_600_000);
        assert.ok(await governor.admit(runInfo()));
        assert.deepEqual(refused, ['BUDGET_EXCEEDED']);
      } finally {
        await store.close();
      }
    });

    it('stops a run at the step boundary once its budget is spent, and reserves the largest step so far', async () => {
      const store = await openTestStore(engine);
      const governor = new Governor(store.limits, new FakeClock(), { tokens: { main: { budgets: [{ period: 'month', tokens: 5000 }] } } });
      try {
        const run = (await governor.admit(runInfo({ maxOutputTokens: 10 })))!;
        await run.steps.before(1);
        // The first step used more than its estimate: 3,000 tokens.
        await run.steps.after({ inputTokens: 2000, outputTokens: 1000 });
        // The next step reserves 3,000 too: 3,000 + 3,000 > 5,000.
        await assert.rejects(run.steps.before(2), (error: DriverError) => error.code === 'BUDGET_EXCEEDED' && /This token's month token budget is spent/.test(error.message));
        await run.end();
        assert.deepEqual((await governor.budgetStatus('token', 'main')).map(({ used, reserved }) => ({ used, reserved })), [{ used: 3000, reserved: 0 }]);
      } finally {
        await store.close();
      }
    });

    it('holds a later step at a spent tokens-per-minute limit until the next minute, and lets the run end while it waits', async () => {
      const store = await openTestStore(engine);
      const clock = new FakeClock();
      const governor = new Governor(store.limits, clock, { subjects: { '*': { tokensPerMinute: 1000 } } });
      try {
        const run = (await governor.admit(runInfo()))!;
        await run.steps.before(1);
        await run.steps.after({ inputTokens: 800, outputTokens: 400 });
        let started = false;
        const second = run.steps.before(2).then(() => (started = true));
        await clock.timerAt(Date.UTC(2026, 10, 30, 0, 1));
        assert.equal(started, false, 'the second step waits');
        await clock.advance(60_000);
        await second;
        assert.equal(started, true);
        await run.steps.after({ inputTokens: 800, outputTokens: 400 });
        // The run ends (cancelled, timed out) while it waits: the wait ends with it, at once.
        const cancel = new AbortController();
        const third = run.steps.before(3, cancel.signal);
        await clock.timerAt(Date.UTC(2026, 10, 30, 0, 2));
        cancel.abort(new DriverError('CANCELLED', 'The run was cancelled.'));
        await assert.rejects(third, (error: DriverError) => error.code === 'CANCELLED');
        assert.equal(clock.pendingTimers, 0, 'the wait left no timer behind');
        await run.end();
      } finally {
        await store.close();
      }
    });

    it('governs a provider instance across subjects, in the same transaction as their own limits', async () => {
      const store = await openTestStore(engine);
      const governor = new Governor(store.limits, new FakeClock(), {
        subjects: { '*': { budgets: [{ period: 'day', tokens: 10_000 }] } },
        providers: { mock: { concurrentRuns: 2, budgets: [{ period: 'day', tokens: 4000 }] } },
      });
      try {
        // Two subjects' runs on `mock` share its budget: 1,500 tokens each, reserved at ~1,000 first.
        for (const subject of ['acme', 'globex']) {
          const run = (await governor.admit(runInfo({ subject, maxOutputTokens: 1000 })))!;
          await run.steps.before(1);
          await run.steps.after({ inputTokens: 1000, outputTokens: 500 });
          await run.end();
        }
        assert.deepEqual((await governor.budgetStatus('provider', 'mock')).map(({ used, reserved, remaining }) => ({ used, reserved, remaining })), [{ used: 3000, reserved: 0, remaining: 1000 }]);
        // A third subject's run does not fit the provider's budget: refused, and none of its charges stay.
        await assert.rejects(governor.admit(runInfo({ subject: 'initech', maxOutputTokens: 1000 })), (error: DriverError) => error.code === 'BUDGET_EXCEEDED' && /^This provider's day token budget is spent/.test(error.message));
        assert.deepEqual((await governor.budgetStatus('subject', 'initech')).map(({ used, reserved }) => ({ used, reserved })), [{ used: 0, reserved: 0 }]);
        assert.equal((await store.limits.read('provider:mock', 'runs', 0)).reserved, 0);
        // Another provider instance is not governed by it.
        assert.ok(await governor.admit(runInfo({ subject: 'initech', provider: 'second', maxOutputTokens: 1000 })));
        // Its concurrency cap holds across subjects.
        const held = [await governor.admit(runInfo({ subject: 'a', maxOutputTokens: 1 })), await governor.admit(runInfo({ subject: 'b', maxOutputTokens: 1 }))];
        await assert.rejects(governor.admit(runInfo({ subject: 'c', maxOutputTokens: 1 })), (error: DriverError) => error.code === 'RATE_LIMITED' && /this provider's limit of concurrent runs/.test(error.message));
        for (const run of held) await run!.end();
      } finally {
        await store.close();
      }
    });

    it('reports named subjects always, and at most the first 1,000 by name of those under *', async () => {
      const store = await openTestStore(engine);
      const governor = new Governor(store.limits, new FakeClock(), { subjects: { '*': { requestsPerMinute: 5 }, zed: { requestsPerMinute: 9 } } });
      const seen = Array.from({ length: MAX_DEFAULT_SUBJECTS + 5 }, (_, index) => `s${String(index).padStart(5, '0')}`);
      const usage = { totals: async () => [...seen, 'zed'].reverse().map((key) => ({ key })) } as unknown as Parameters<typeof limitsReport>[0]['usage'];
      try {
        const report = await limitsReport({ usage }, governor);
        assert.equal(report.length, MAX_DEFAULT_SUBJECTS + 1);
        assert.deepEqual([report[0]!.name, report.at(-2)!.name, report.at(-1)], [seen[0], seen[MAX_DEFAULT_SUBJECTS - 1], { scope: 'subject', name: 'zed', requestsPerMinute: 9, budgets: [] }]);
        // One left out is there when asked for.
        assert.deepEqual(await limitsReport({ usage }, governor, seen.at(-1)), [{ scope: 'subject', name: seen.at(-1), requestsPerMinute: 5, budgets: [] }]);
      } finally {
        await store.close();
      }
    });

    it('counts a subscription CLI run at its API-equivalent cost only when the config says so', async () => {
      const store = await openTestStore(engine);
      const budget = { subjects: { acme: { budgets: [{ period: 'week' as const, usd: 100 }] } } };
      try {
        for (const [cliCost, expected] of [['api-equivalent', 0.003], ['reported', 0]] as const) {
          const governor = new Governor(store.limits, new FakeClock(), { ...budget, cliCost });
          const before = (await governor.budgetStatus('subject', 'acme'))[0]!.used;
          const run = (await governor.admit(runInfo({ authMode: 'cli-session' })))!;
          await run.steps.before(1);
          // A CLI reports tokens but no charge: 3,000 tokens at $1 per million.
          await run.steps.after({ inputTokens: 2000, outputTokens: 1000 });
          await run.end();
          assert.equal(Math.round(((await governor.budgetStatus('subject', 'acme'))[0]!.used - before) * 1e6) / 1e6, expected, cliCost);
        }
        // A reported charge is what counts, whatever the price table says.
        const governor = new Governor(store.limits, new FakeClock(), budget);
        const run = (await governor.admit(runInfo({ authMode: 'cli-session' })))!;
        await run.steps.after({ inputTokens: 2000, outputTokens: 1000, costUsd: 0.5 });
        await run.end();
        assert.equal((await governor.budgetStatus('subject', 'acme'))[0]!.used, 0.503);
      } finally {
        await store.close();
      }
    });

    it('caps concurrent runs across every replica and answers RATE_LIMITED with Retry-After', async () => {
      const state = await sharedState(engine);
      const first = await state.open();
      const second = engine === 'postgres' ? await state.open() : first;
      const limits: GovernanceLimits = { host: { concurrentRuns: 2 } };
      try {
        const one = new Governor(first.limits, new FakeClock(), limits);
        const two = new Governor(second.limits, new FakeClock(), limits);
        const held = await Promise.all([one.admit(runInfo()), two.admit(runInfo())]);
        await assert.rejects(one.admit(runInfo()), (error: DriverError) => error.code === 'RATE_LIMITED' && error.retryAfterSeconds === 1 && /the host's limit of concurrent runs/.test(error.message));
        await held[0]!.end();
        assert.ok(await two.admit(runInfo()));
      } finally {
        if (second !== first) await second.close();
        await first.close();
      }
    });
  });
}
