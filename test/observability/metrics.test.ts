/** `GET /metrics`: its own credential or loopback only, and a scrape that parses with the expected series. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../support/fake-clock.js';
import { script, sseEvents, startTestHost, TOKEN } from '../support/host.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdefghijklmnopq';
const PROMPT = 'planted-metrics-prompt-5b1e';
const run = { provider: 'mock', model: 'demo' };

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format, strictly: every line a comment (HELP/TYPE) or one sample. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || /^# (HELP|TYPE) [a-zA-Z_:][\w:]* .+$/.test(line)) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (-?[\d.e+-]+|[Nn]a[Nn]|[+-]Inf)$/.exec(line);
    assert.ok(match, `not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, expected]) => sample.labels[key] === expected))?.value;
}

describe('GET /metrics', () => {
  it('counts refusals by the host\'s limits by code, and shows what the host\'s and each provider instance\'s budgets have left', async () => {
    process.env.AD_TEST_METRICS = METRICS_TOKEN;
    const clock = new FakeClock();
    const host = await startTestHost(
      {
        metrics: { enabled: true, tokenRef: { env: 'AD_TEST_METRICS' } },
        usage: { prices: [{ vendor: 'mock', model: 'demo', inputUsdPerMTok: 1, outputUsdPerMTok: 1 }] },
        limits: {
          maxOutputTokens: 10,
          host: { budgets: [{ period: { rollingMs: 86_400_000 }, usd: 1, tokens: 3000 }] },
          subjects: { 'test-user': { requestsPerMinute: 2 } },
          providers: { mock: { budgets: [{ period: 'day', tokens: 10_000 }] } },
        },
      },
      { clock },
    );
    try {
      const scrape = async () => parseExposition(await (await fetch(`${host.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text());
      const codeOf = async (response: Response) => (response.status === 200 ? 'OK' : ((await response.json()) as { error: { code: string } }).error.code);
      // 2,000 tokens; the mock counts 'hi' as 1 + 1.
      const costly = { ...run, input: script([{ text: 'ok' }, { usage: { inputTokens: 1000, outputTokens: 1000 } }]) };
      assert.equal(await codeOf(await host.post('/v1/runs', costly)), 'OK');
      assert.equal(await codeOf(await host.post('/v1/runs', { ...run, input: 'hi' })), 'OK');
      assert.equal(await codeOf(await host.post('/v1/runs', { ...run, input: 'hi' })), 'RATE_LIMITED');
      await clock.advance(60_000);
      // Reserved at its small estimate, the step overruns the host's 3,000 tokens (the documented bound); then nothing fits.
      assert.equal(await codeOf(await host.post('/v1/runs', costly)), 'OK');
      assert.equal(await codeOf(await host.post('/v1/runs', { ...run, input: 'hi' })), 'BUDGET_EXCEEDED');
      const samples = await scrape();
      assert.equal(value(samples, 'agenticdriver_limit_refusals_total', { code: 'BUDGET_EXCEEDED' }), 1);
      assert.equal(value(samples, 'agenticdriver_limit_refusals_total', { code: 'RATE_LIMITED' }), 1);
      const period = 'rolling-86400000';
      assert.equal(value(samples, 'agenticdriver_host_budget_remaining', { unit: 'tokens', period }), 0);
      assert.equal(value(samples, 'agenticdriver_host_budget_remaining', { unit: 'usd', period }), 0.995998);
      // The three runs that were admitted: 2,000 + 2 + 2,000 tokens.
      assert.equal(value(samples, 'agenticdriver_provider_budget_remaining', { provider: 'mock', unit: 'tokens', period: 'day' }), 10_000 - 4_002);
    } finally {
      await host.close();
    }
  });

  it('answers only its own token, and counts runs, tokens, errors, streams and admission rejections', async () => {
    process.env.AD_TEST_METRICS = METRICS_TOKEN;
    const host = await startTestHost({ metrics: { enabled: true, tokenRef: { env: 'AD_TEST_METRICS' } }, limits: { maxConcurrentRunsPerSubject: 1 } });
    try {
      const scrape = (authorization?: string) => fetch(`${host.url}/metrics`, { headers: authorization ? { authorization } : {} });
      assert.equal((await scrape()).status, 401);
      assert.equal((await scrape(`Bearer ${TOKEN}`)).status, 401, 'a host token is not the metrics token');
      const misuse = await fetch(`${host.url}/v1/protocol`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.equal(misuse.status, 401, 'the metrics token opens nothing else');
      assert.equal((await fetch(`${host.url}/metrics?x=1`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status, 401);

      assert.equal((await host.post('/v1/runs', { ...run, input: script([{ text: PROMPT }, { usage: { inputTokens: 7, outputTokens: 3 } }]) })).status, 200);
      assert.equal((await host.post('/v1/runs', { ...run, input: script([{ error: { code: 'RATE_LIMITED', message: PROMPT } }]) })).status >= 400, true);
      // One stream open, then a second run of the same subject is refused at admission.
      const stream = await host.post('/v1/runs', { ...run, input: script([{ hang: true }]) }, { accept: 'text/event-stream' });
      const events = sseEvents(stream);
      assert.equal((await events.next()).value?.type, 'run.started');
      const busy = await host.post('/v1/runs', { ...run, input: PROMPT });
      assert.equal(busy.status, 429);

      const during = await scrape(`Bearer ${METRICS_TOKEN}`);
      assert.equal(during.status, 200);
      assert.match(during.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const live = parseExposition(await during.text());
      assert.equal(value(live, 'agenticdriver_active_streams'), 1);
      assert.equal(value(live, 'agenticdriver_active_runs'), 1);
      assert.equal(value(live, 'agenticdriver_admission_rejections_total', { reason: 'busy' }), 1);
      await events.return(undefined);

      let samples: Sample[] = [];
      const deadline = Date.now() + 5000;
      do {
        const text = await (await scrape(`Bearer ${METRICS_TOKEN}`)).text();
        assert.equal(text.includes(PROMPT), false);
        assert.equal(text.includes(TOKEN), false);
        assert.equal(text.includes('test-user'), false, 'no subjects in labels');
        samples = parseExposition(text);
      } while (value(samples, 'agenticdriver_runs_total', { status: 'cancelled' }) === undefined && Date.now() < deadline);
      assert.equal(value(samples, 'agenticdriver_runs_total', { provider: 'mock', model: 'demo', status: 'completed' }), 1);
      assert.equal(value(samples, 'agenticdriver_runs_total', { status: 'failed' }), 1);
      assert.equal(value(samples, 'agenticdriver_runs_total', { status: 'cancelled' }), 1);
      assert.equal(value(samples, 'agenticdriver_tokens_total', { kind: 'input' }), 7);
      assert.equal(value(samples, 'agenticdriver_tokens_total', { kind: 'output' }), 3);
      assert.equal(value(samples, 'agenticdriver_run_errors_total', { provider: 'mock', code: 'RATE_LIMITED' }), 1);
      assert.equal(value(samples, 'agenticdriver_run_duration_seconds_count', { status: 'completed' }), 1);
      assert.equal(value(samples, 'agenticdriver_active_streams'), 0);
      assert.ok(value(samples, 'agenticdriver_process_cpu_seconds_total') !== undefined);
    } finally {
      await host.close();
      delete process.env.AD_TEST_METRICS;
    }
  });

  it('reports the durable-job queue depth', async () => {
    const host = await startTestHost({
      metrics: { enabled: true },
      jobs: { retentionMs: 60_000, workers: 1, pollIntervalMs: 20 },
      tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], jobs: ['submit', 'read', 'cancel'] }],
    });
    try {
      const hang = { provider: 'mock', model: 'demo', input: script([{ hang: true }]) };
      const ids: string[] = [];
      for (const key of ['q1', 'q2', 'q3']) ids.push(((await (await host.post('/v1/jobs/submit', { key, request: hang })).json()) as { id: string }).id);
      // One worker: the first runs, the other two wait.
      for (let state = ''; state !== 'running'; ) state = ((await (await host.post('/v1/jobs/read', { id: ids[0] })).json()) as { state: string }).state;
      const samples = parseExposition(await (await fetch(`${host.url}/metrics`)).text());
      assert.equal(value(samples, 'agenticdriver_jobs_queued'), 2);
    } finally {
      await host.close();
    }
  });

  it('without a metrics token, loopback peers scrape without credentials; without the config there is no endpoint', async () => {
    const open = await startTestHost({ metrics: { enabled: true } });
    try {
      const response = await fetch(`${open.url}/metrics`);
      assert.equal(response.status, 200);
      parseExposition(await response.text());
    } finally {
      await open.close();
    }
    const none = await startTestHost();
    try {
      assert.equal((await fetch(`${none.url}/metrics`)).status, 401);
      assert.equal((await fetch(`${none.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
    } finally {
      await none.close();
    }
  });
});
