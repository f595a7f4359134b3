/**
 * Governance on a running host (config `limits`, docs/governance.md), over real HTTP on a fake
 * clock: 60 requests a minute answer 429 RATE_LIMITED with a correct Retry-After and the next
 * minute goes through; a spent daily budget answers 429 BUDGET_EXCEEDED with its reset time in
 * the configured time zone and resets at that boundary; a run crossing its budget stops at the
 * next step boundary, after its tool completed; a run whose steps reach its tokens-per-minute
 * limit waits at the step boundary for the next minute, or ends RATE_LIMITED when that minute is
 * full already; a refused job records why; the `limits` feature
 * is advertised only when limits are configured; a reload changes them, a bad config keeps them.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { parseHostConfig } from '../../src/host/config.js';
import { FakeClock } from '../support/fake-clock.js';
import { OTHER_TOKEN, parseSse, script, startTestHost, type TestHost } from '../support/host.js';

/** $1 per million tokens in and out: a step reporting 1,000 + 1,000 tokens costs $0.002. */
const PRICES = { prices: [{ vendor: 'mock', model: 'demo', inputUsdPerMTok: 1, outputUsdPerMTok: 1 }] };
const TOKENS = [
  { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock', 'second'], tools: ['echo'], jobs: ['submit', 'read'] },
  { id: 'other', subject: 'other-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'] },
];
const step = (text = 'ok') => [{ text }, { usage: { inputTokens: 1000, outputTokens: 1000 } }];
const run = (input = script(step())) => ({ provider: 'mock', model: 'demo', input });

describe('governance on a running host', () => {
  const hosts: TestHost[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close();
  });
  async function host(limits: Record<string, unknown>, clock = new FakeClock(), extra: Record<string, unknown> = {}): Promise<TestHost> {
    const started = await startTestHost({ tokens: TOKENS, usage: PRICES, limits: { maxOutputTokens: 100, ...limits }, ...extra }, { clock });
    hosts.push(started);
    return started;
  }
  const errorOf = async (response: Response) => ({ status: response.status, retryAfter: response.headers.get('retry-after'), ...((await response.json()) as { error: { code: string; message: string } }).error });

  it('answers the 61st request of a minute 429 RATE_LIMITED with Retry-After, and lets the next minute through', async () => {
    const clock = new FakeClock();
    const h = await host({ subjects: { '*': { requestsPerMinute: 60 } } }, clock);
    await clock.advance(15_000);
    for (let index = 0; index < 60; index += 1) {
      const response = await h.post('/v1/runs', run('hi'));
      assert.equal(response.status, 200, await response.text());
    }
    const refused = await h.post('/v1/runs', run('hi'));
    const error = await errorOf(refused);
    assert.deepEqual({ status: error.status, code: error.code, retryAfter: error.retryAfter }, { status: 429, code: 'RATE_LIMITED', retryAfter: '45' });
    assert.equal((await errorOf(await h.post('/v1/runs', run('hi')))).retryAfter, '45');
    // Another subject has its own minute.
    assert.equal((await h.post('/v1/runs', run('hi'), { authorization: `Bearer ${OTHER_TOKEN}` })).status, 200);
    await clock.advance(44_000);
    assert.equal((await errorOf(await h.post('/v1/runs', run('hi')))).retryAfter, '1');
    await clock.advance(1_000);
    assert.equal((await h.post('/v1/runs', run('hi'))).status, 200);
  });

  it('refuses a spent daily budget with its reset time in the time zone, and resets at the boundary', async () => {
    const clock = new FakeClock();
    const h = await host({ timeZone: 'America/New_York', subjects: { 'test-user': { budgets: [{ period: 'day', usd: 0.005 }] } } }, clock);
    // $0.002 a run, each reserved at its estimate (well under it): the third starts at $0.004 and
    // overruns by less than one step; the fourth is refused.
    for (let index = 0; index < 3; index += 1) assert.equal((await h.post('/v1/runs', run())).status, 200);
    const error = await errorOf(await h.post('/v1/runs', run()));
    // The fake clock stands at 2026-11-30T00:00Z: 19:00 in New York, five hours before its midnight.
    assert.deepEqual({ status: error.status, code: error.code, retryAfter: error.retryAfter }, { status: 429, code: 'BUDGET_EXCEEDED', retryAfter: '18000' });
    assert.equal(error.message, "This subject's day USD budget is spent; it resets at 2026-11-30T05:00:00.000Z.");
    assert.equal((await h.post('/v1/runs', run(), { authorization: `Bearer ${OTHER_TOKEN}` })).status, 200, 'a subject without a budget is not governed by another');
    await clock.advance(5 * 3_600_000 - 1);
    assert.equal((await h.post('/v1/runs', run())).status, 429);
    await clock.advance(1);
    assert.equal((await h.post('/v1/runs', run())).status, 200);
  });

  it('stops a run that crosses its budget at the next step boundary, never mid-tool', async () => {
    const h = await host({ tokens: { main: { budgets: [{ period: 'month', tokens: 2500 }] } } });
    const input = script([{ toolCall: { name: 'echo', arguments: { text: 'x' } } }, { usage: { inputTokens: 1000, outputTokens: 1000 } }], step('never'));
    const events = parseSse(await (await h.post('/v1/runs', { ...run(input), tools: ['echo'] }, { accept: 'text/event-stream' })).text());
    assert.deepEqual(
      events.map((event) => event.type),
      ['run.started', 'step.started', 'usage.reported', 'tool.called', 'tool.completed', 'run.failed'],
    );
    const failure = events.at(-1)!.error as { code: string; message: string };
    assert.equal(failure.code, 'BUDGET_EXCEEDED');
    assert.match(failure.message, /^This token's month token budget is spent; it resets at 2026-12-01T00:00:00\.000Z\.$/);
  });

  it('holds a running run that reached its tokens per minute at the step boundary until the next minute, never mid-tool', async () => {
    const clock = new FakeClock();
    const h = await host({ subjects: { '*': { tokensPerMinute: 1500 } } }, clock);
    await clock.advance(15_000);
    // Step one reports 2,000 tokens and calls a tool: the minute is spent once the step is settled.
    const input = script([{ toolCall: { name: 'echo', arguments: { text: 'x' } } }, { usage: { inputTokens: 1000, outputTokens: 1000 } }], step('after the wait'));
    const body = h.post('/v1/runs', { ...run(input), tools: ['echo'] }, { accept: 'text/event-stream' }).then((response) => response.text());
    const nextMinute = Date.UTC(2026, 10, 30, 0, 1);
    await clock.timerAt(nextMinute);
    // Another run of the subject is refused meanwhile, with the seconds to the next minute.
    const refused = await errorOf(await h.post('/v1/runs', run()));
    assert.deepEqual({ status: refused.status, code: refused.code, retryAfter: refused.retryAfter }, { status: 429, code: 'RATE_LIMITED', retryAfter: '45' });
    await clock.advance(45_000);
    const events = parseSse(await body);
    assert.deepEqual(
      events.map((event) => event.type),
      ['run.started', 'step.started', 'usage.reported', 'tool.called', 'tool.completed', 'step.started', 'text.delta', 'usage.reported', 'run.completed'],
    );
    assert.equal(events.find((event) => event.type === 'tool.completed')!.timestamp, '2026-11-30T00:00:15.000Z');
    assert.equal(events[5]!.timestamp, '2026-11-30T00:01:00.000Z', 'the second step began when the minute turned');
  });

  it('ends a waiting run RATE_LIMITED when the next minute is full too', async () => {
    const clock = new FakeClock();
    const h = await host({ subjects: { '*': { tokensPerMinute: 1500 } } }, clock);
    const input = script([{ toolCall: { name: 'echo', arguments: { text: 'x' } } }, { usage: { inputTokens: 1000, outputTokens: 1000 } }], step('never'));
    const body = h.post('/v1/runs', { ...run(input), tools: ['echo'] }, { accept: 'text/event-stream' }).then((response) => response.text());
    const nextMinute = Date.UTC(2026, 10, 30, 0, 1);
    await clock.timerAt(nextMinute);
    // Another replica's runs spend the next minute's tokens before this one wakes.
    await h.store.limits.settle('another-replica', [{ scope: 'subject:test-user', metric: 'tokens-minute', window: nextMinute, amount: 1500 }], []);
    await clock.advance(60_000);
    const events = parseSse(await body);
    assert.deepEqual(events.map((event) => event.type), ['run.started', 'step.started', 'usage.reported', 'tool.called', 'tool.completed', 'run.failed']);
    const error = events.at(-1)!.error as { code: string; message: string; retryable: boolean };
    assert.deepEqual(error, { code: 'RATE_LIMITED', message: "This run would exceed this subject's limit of tokens per minute; try again in 60 s.", retryable: true });
  });

  it('caps a provider instance for every subject together; another instance goes on', async () => {
    const h = await host({ providers: { mock: { requestsPerMinute: 2 } } });
    const second = { ...run(), provider: 'second' };
    const other = { authorization: `Bearer ${OTHER_TOKEN}` };
    assert.equal((await h.post('/v1/runs', run())).status, 200);
    assert.equal((await h.post('/v1/runs', run(), other)).status, 200);
    const refused = await errorOf(await h.post('/v1/runs', run(), other));
    assert.deepEqual({ status: refused.status, code: refused.code }, { status: 429, code: 'RATE_LIMITED' });
    assert.match(refused.message, /^This run would exceed this provider's limit of requests per minute; try again in 60 s\.$/);
    assert.equal((await h.post('/v1/runs', second)).status, 200);
  });

  it('fails a job refused by a budget with the refusal, before any model call', async () => {
    const h = await host({ subjects: { '*': { budgets: [{ period: 'week', tokens: 1000 }] } } }, new FakeClock(), { jobs: { retentionMs: 60_000, pollIntervalMs: 20 } });
    assert.equal((await h.post('/v1/runs', run())).status, 200);
    const submitted = (await (await h.post('/v1/jobs/submit', { key: 'refused-1', request: run() })).json()) as { id: string };
    let job: { state: string };
    for (;;) {
      job = (await (await h.post('/v1/jobs/read', { id: submitted.id })).json()) as typeof job;
      if (job.state !== 'queued' && job.state !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(job.state, 'failed');
    const page = (await (await h.post('/v1/jobs/events', { id: submitted.id, after: 0 })).json()) as { events: { type: string; error?: { code: string; message: string } }[] };
    // No step started: no model was called.
    assert.deepEqual(page.events.map((event) => event.type), ['run.started', 'run.failed']);
    assert.equal(page.events[1]!.error?.code, 'BUDGET_EXCEEDED');
    // 2026-11-30 is a Monday: the week resets on the next one.
    assert.match(page.events[1]!.error!.message, /^This subject's week token budget is spent; it resets at 2026-12-07T00:00:00\.000Z\.$/);
  });

  it('advertises limits only when configured, and reloads them; a bad config keeps the old ones', async () => {
    const h = await host({});
    const features = async () => ((await (await fetch(`${h.url}/v1/protocol`, { headers: h.headers() })).json()) as { features: string[] }).features;
    assert.ok(!(await features()).includes('limits'));
    const raw = (limits: Record<string, unknown>) => ({
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [
        { kind: 'mock', id: 'mock', models: ['demo'] },
        { kind: 'mock', id: 'second', models: ['demo'] },
      ],
      tokens: TOKENS,
      usage: PRICES,
      state: { directory: join(h.dir, 'state') },
      limits: { maxOutputTokens: 100, ...limits },
    });
    const configPath = join(h.dir, 'config.json');
    const result = await h.reload(parseHostConfig(raw({ tokens: { main: { requestsPerMinute: 1 } } }), configPath));
    assert.deepEqual(result.changed, ['limits']);
    assert.ok((await features()).includes('limits'));
    assert.equal((await h.post('/v1/runs', run('hi'))).status, 200);
    assert.equal((await h.post('/v1/runs', run('hi'))).status, 429);
    // Bad limits never become a config: the reload does not happen, and the running limits stay.
    assert.throws(() => parseHostConfig(raw({ timeZone: 'Mars/Olympus' }), configPath), /limits\.timeZone "Mars\/Olympus" is not an IANA time zone/);
    assert.throws(() => parseHostConfig(raw({ tokens: { nobody: { requestsPerMinute: 1 } } }), configPath), /limits\.tokens names token nobody, which is not configured/);
    assert.throws(() => parseHostConfig(raw({ providers: { elsewhere: { requestsPerMinute: 1 } } }), configPath), /limits\.providers names provider elsewhere, which is not configured/);
    assert.throws(() => parseHostConfig(raw({ host: { budgets: [{ period: 'day' }] } }), configPath), /A budget caps usd, tokens or both/);
    // A reload another part refuses changes no limit either.
    await assert.rejects(h.reload(parseHostConfig({ ...raw({}), limits: { maxBodyBytes: 4096 } }, configPath)), /maxBodyBytes takes effect only at a restart/);
    assert.equal((await h.post('/v1/runs', run('hi'))).status, 429);
    await h.reload(parseHostConfig(raw({}), configPath));
    assert.ok(!(await features()).includes('limits'));
    assert.equal((await h.post('/v1/runs', run('hi'))).status, 200);
  });
});
