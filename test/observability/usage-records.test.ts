/**
 * Usage records through a real host on loopback: one record per run whatever its terminal
 * status, totals only when every step reported them, the JSONL file sink, and the webhook
 * sink surviving an outage and a host restart with every record delivered exactly once.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import type { SinkFailure } from '../../src/extensions/usage/sink.js';
import { readUsageHealth } from '../../src/extensions/usage/pipeline.js';
import { script, startTestHost, TOKEN } from '../support/host.js';
import { tempDir } from '../support/temp.js';
import { startChatCompletionsServer } from '../vendors/index.js';

const SECRET_PROMPT = 'planted-prompt-7f3a9c-never-in-a-record';
const WEBHOOK_SECRET = 'webhook-secret-0123456789abcdefghijklmnop';
const run = { provider: 'mock', model: 'demo' };

/** A loopback webhook that can be switched down (503) and counts what it accepted per record id. */
class Webhook {
  readonly accepted = new Map<string, number>();
  readonly bodies: string[] = [];
  readonly authorizations = new Set<string>();
  up = false;
  attempts = 0;
  private readonly server: Server;
  url = '';

  constructor() {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/usage`;
  }

  private async handle(request: IncomingMessage, response: import('node:http').ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    this.attempts += 1;
    if (!this.up) {
      response.writeHead(503).end();
      return;
    }
    const body = Buffer.concat(chunks).toString('utf8');
    const record = JSON.parse(body) as UsageRecord;
    assert.equal(request.headers['idempotency-key'], record.recordId);
    this.authorizations.add(String(request.headers.authorization));
    this.bodies.push(body);
    this.accepted.set(record.recordId, (this.accepted.get(record.recordId) ?? 0) + 1);
    response.writeHead(204).end();
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function untilTrue(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('usage records', () => {
  const failures: SinkFailure[] = [];
  const webhook = new Webhook();
  after(() => webhook.close());

  test('one record per terminal status, with coverage; totals only when every step reported them', async () => {
    const records: UsageRecord[] = [];
    const host = await startTestHost(
      { usage: { hostId: 'host-a', labels: { team: 'ops' } } },
      { onUsage: (record) => void records.push(record), logUsageSinkFailure: (failure) => void failures.push(failure) },
    );
    try {
      const usage = { inputTokens: 10, outputTokens: 4 };
      // completed, every step reported
      assert.equal((await host.post('/v1/runs', { ...run, input: script([{ text: SECRET_PROMPT }, { usage }]) })).status, 200);
      // completed, step 2 reported nothing: totals omitted, observed sums kept
      const twoSteps = script([{ toolCall: { name: 'echo', arguments: { text: SECRET_PROMPT } } }, { usage }], [{ text: 'done' }]);
      assert.equal((await host.post('/v1/runs', { ...run, input: twoSteps, tools: ['echo'] })).status, 200);
      // failed
      assert.equal((await host.post('/v1/runs', { ...run, input: script([{ usage }, { error: { code: 'PROVIDER_ERROR', message: SECRET_PROMPT } }]) })).status, 502);
      // cancelled (idle timeout)
      const cancelled = await host.post('/v1/runs', { ...run, input: script([{ hang: true }]), idleTimeoutMs: 100 });
      assert.equal(cancelled.status >= 400, true);
      await untilTrue(() => records.length === 4);

      const [complete, partial, failed, idle] = records as [UsageRecord, UsageRecord, UsageRecord, UsageRecord];
      for (const record of records) {
        assert.equal(record.schema, 'agenticdriver.usage.v2');
        assert.equal(record.recordId, record.runId);
        assert.equal(record.hostId, 'host-a');
        assert.equal(record.tokenId, 'main');
        assert.equal(record.subject, 'test-user');
        assert.equal(record.source, 'synthetic');
        assert.deepEqual(record.labels, { team: 'ops' });
        assert.equal(record.costUsd, undefined);
        assert.equal(JSON.stringify(record).includes(SECRET_PROMPT), false);
        assert.equal(JSON.stringify(record).includes(TOKEN), false);
      }
      assert.equal(complete.status, 'completed');
      assert.deepEqual(complete.usage, usage);
      assert.deepEqual(complete.coverage, { startedSteps: 1, completedSteps: 1, reportedSteps: 1 });

      assert.equal(partial.status, 'completed');
      assert.equal(partial.usage, undefined, 'a step without usage leaves no totals');
      assert.deepEqual(partial.observedUsage, usage);
      assert.deepEqual(partial.coverage, { startedSteps: 2, completedSteps: 2, reportedSteps: 1 });

      assert.equal(failed.status, 'failed');
      assert.equal(failed.errorCode, 'PROVIDER_ERROR');
      assert.equal(failed.usage, undefined);
      assert.deepEqual(failed.coverage, { startedSteps: 1, completedSteps: 0, reportedSteps: 0 });

      assert.equal(idle.status, 'cancelled');
      assert.equal(idle.errorCode, 'IDLE_TIMEOUT');
      assert.deepEqual(failures, []);
    } finally {
      await host.close();
    }
  });

  test('the provider charge and the labelled API-equivalent estimate from the operator price table', async () => {
    const records: UsageRecord[] = [];
    const host = await startTestHost(
      { usage: { prices: [{ vendor: 'mock', model: 'demo', inputUsdPerMTok: 2, outputUsdPerMTok: 8 }] } },
      { onUsage: (record) => void records.push(record) },
    );
    try {
      await host.post('/v1/runs', { ...run, input: script([{ usage: { inputTokens: 1_000_000, outputTokens: 500_000, costUsd: 0.25 } }]) });
      await host.post('/v1/runs', { ...run, input: script([{ usage: { inputTokens: 100, outputTokens: 5, apiEquivalentCostUsd: 0.5 } }]) });
      await untilTrue(() => records.length === 2);
      assert.equal(records[0]!.costUsd, 0.25);
      assert.deepEqual(records[0]!.apiEquivalentCostUsd, { usd: 6, estimate: true, basis: 'price-table', priceTable: 'operator' });
      assert.equal(records[1]!.costUsd, undefined);
      assert.deepEqual(records[1]!.apiEquivalentCostUsd, { usd: 0.5, estimate: true, basis: 'provider' });
    } finally {
      await host.close();
    }
  });

  test('an API provider kind: source provider-reported, auth mode api-key, totals from the vendor', async () => {
    const vendor = await startChatCompletionsServer({ apiKey: 'vendor-key-usage-records-0123456789', models: ['m'] });
    const records: UsageRecord[] = [];
    const host = await startTestHost(
      {
        providers: [{ kind: 'openai-compatible', id: 'vendor', models: ['m'], baseUrl: vendor.url, apiKeyRef: { env: 'AD_USAGE_VENDOR' } }],
        tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['vendor'] }],
      },
      { onUsage: (record) => void records.push(record), env: { ...process.env, AD_TEST_TOKEN: TOKEN, AD_USAGE_VENDOR: 'vendor-key-usage-records-0123456789' } },
    );
    try {
      vendor.push({ turn: { text: 'hi', usage: { input: 12, output: 4 } } });
      assert.equal((await host.post('/v1/runs', { provider: 'vendor', model: 'm', input: SECRET_PROMPT })).status, 200);
      vendor.push({ error: { status: 500, message: 'down' } });
      assert.equal((await host.post('/v1/runs', { provider: 'vendor', model: 'm', input: SECRET_PROMPT })).status, 502);
      await untilTrue(() => records.length === 2);
    } finally {
      await host.close();
      await vendor.close();
    }
    const [ok, failed] = records as [UsageRecord, UsageRecord];
    assert.equal(ok.source, 'provider-reported');
    assert.equal(ok.authMode, 'api-key');
    assert.equal(ok.vendor, 'openai-compatible');
    assert.equal(ok.usage?.inputTokens, 12);
    assert.equal(ok.usage?.outputTokens, 4);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.usage, undefined);
    assert.equal(JSON.stringify(records).includes(SECRET_PROMPT), false);
  });

  test('a failing callback never changes the run, and is logged USAGESTAT_ERROR and kept for doctor', async () => {
    const seen: SinkFailure[] = [];
    const host = await startTestHost({}, {
      onUsage: () => {
        throw new Error(SECRET_PROMPT);
      },
      logUsageSinkFailure: (failure) => void seen.push(failure),
    });
    try {
      const response = await host.post('/v1/runs', { ...run, input: 'hello' });
      assert.equal(response.status, 200);
      await untilTrue(() => seen.length === 1);
      assert.equal(seen[0]!.code, 'USAGESTAT_ERROR');
      assert.equal(JSON.stringify(seen).includes(SECRET_PROMPT), false);
      const health = await untilHealth(join(host.dir, 'state'));
      assert.equal(health.sinks.find((sink) => sink.sink === 'callback')?.ok, false);
    } finally {
      await host.close();
    }
  });

  test('JSONL file: one private line per run, rotated by size', async () => {
    const dir = tempDir('agenticdriver-usage-file-');
    const path = join(dir, 'usage', 'records.jsonl');
    const host = await startTestHost({ usage: { file: { path, maxBytes: 4096, keep: 2 } } });
    try {
      for (let index = 0; index < 12; index += 1) {
        assert.equal((await host.post('/v1/runs', { ...run, input: SECRET_PROMPT })).status, 200);
      }
    } finally {
      await host.close();
    }
    const files = [path, `${path}.1`, `${path}.2`].filter((file) => {
      try {
        return statSync(file).isFile();
      } catch {
        return false;
      }
    });
    assert.ok(files.length >= 2, 'the file rotated');
    const lines = files.flatMap((file) => readFileSync(file, 'utf8').trim().split('\n'));
    for (const file of files) assert.equal(statSync(file).mode & 0o777, 0o600);
    const ids = lines.map((line) => (JSON.parse(line) as UsageRecord).recordId);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.length >= 8 && ids.length <= 12);
    assert.equal(lines.join('\n').includes(SECRET_PROMPT), false);
  });

  test('webhook down for a while, host restarted: every record delivered exactly once', async () => {
    await webhook.listen();
    const dir = tempDir('agenticdriver-usage-webhook-');
    const overrides = {
      state: { directory: join(dir, 'state') },
      usage: {
        hostId: 'host-w',
        webhook: { url: webhook.url, tokenRef: { env: 'AD_TEST_WEBHOOK' }, maxAttempts: 2, retryIntervalMs: 100 },
      },
    };
    process.env.AD_TEST_WEBHOOK = WEBHOOK_SECRET;
    const seen: SinkFailure[] = [];
    const runIds: string[] = [];
    const first = await startTestHost(overrides, { logUsageSinkFailure: (failure) => void seen.push(failure) });
    try {
      for (let index = 0; index < 5; index += 1) {
        const response = await first.post('/v1/runs', { ...run, input: SECRET_PROMPT });
        assert.equal(response.status, 200, 'a down webhook never changes the run');
        runIds.push(((await response.json()) as { runId: string }).runId);
      }
      await untilTrue(() => seen.some((failure) => failure.code === 'USAGESTAT_ERROR'));
      assert.equal(first.usage.health().find((sink) => sink.sink === 'webhook')?.ok, false);
    } finally {
      await first.close();
    }
    assert.equal(webhook.accepted.size, 0);
    const health = await readUsageHealth(join(dir, 'state'));
    assert.equal(health?.sinks.find((sink) => sink.sink === 'webhook')?.ok, false);

    // Back up; a new host process delivers what the first one spooled, and its own records.
    webhook.up = true;
    const second = await startTestHost(overrides);
    try {
      const response = await second.post('/v1/runs', { ...run, input: SECRET_PROMPT });
      runIds.push(((await response.json()) as { runId: string }).runId);
      await untilTrue(() => webhook.accepted.size === runIds.length);
      await second.usage.flush();
    } finally {
      await second.close();
    }
    // A third start finds nothing left to send.
    const third = await startTestHost(overrides);
    await third.usage.flush();
    await third.close();
    assert.deepEqual([...webhook.accepted.keys()].sort(), [...runIds].sort());
    for (const count of webhook.accepted.values()) assert.equal(count, 1, 'delivered exactly once');
    assert.deepEqual([...webhook.authorizations], [`Bearer ${WEBHOOK_SECRET}`]);
    for (const body of webhook.bodies) {
      assert.equal(body.includes(SECRET_PROMPT), false);
      assert.equal(body.includes(WEBHOOK_SECRET), false);
      assert.equal(body.includes(TOKEN), false);
    }
    assert.equal(JSON.stringify(seen).includes(WEBHOOK_SECRET), false);
    delete process.env.AD_TEST_WEBHOOK;
  });

  test('after a crash, the journal sends a run that never finished as interrupted, and a finished record its sinks missed as it was', async () => {
    const dir = tempDir('agenticdriver-usage-journal-');
    const path = join(dir, 'records.jsonl');
    const overrides = { state: { directory: join(dir, 'state') }, usage: { hostId: 'host-j', file: { path } } };
    // What a crashed process leaves in the journal: one run in flight, one finished but not yet delivered.
    const journal = join(dir, 'state', 'usage-runs');
    mkdirSync(journal, { recursive: true });
    const start = {
      schema: 'agenticdriver.usage.v2', recordId: '00000000-0000-4000-8000-000000000001', hostId: 'host-j', runId: '00000000-0000-4000-8000-000000000001',
      subject: 'test-user', tokenId: 'main', provider: 'mock', vendor: 'mock', model: 'demo', authMode: 'none', source: 'synthetic', startedAt: '2026-12-01T00:00:00.000Z',
    };
    const finished = {
      ...start, recordId: '00000000-0000-4000-8000-000000000002', runId: '00000000-0000-4000-8000-000000000002', status: 'completed',
      finishedAt: '2026-12-01T00:00:01.000Z', durationMs: 1000, steps: 1, usage: { inputTokens: 1, outputTokens: 1 }, observedUsage: { inputTokens: 1, outputTokens: 1 },
      coverage: { startedSteps: 1, completedSteps: 1, reportedSteps: 1 },
    };
    writeFileSync(join(journal, `${start.runId}.json`), JSON.stringify(start));
    writeFileSync(join(journal, `${finished.runId}.json`), JSON.stringify(finished));
    writeFileSync(join(journal, `${finished.runId}.json.tmp`), '{"torn');
    for (let restart = 0; restart < 2; restart += 1) await (await startTestHost(overrides)).close();
    const records = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as UsageRecord);
    assert.deepEqual(records.map((record) => [record.runId, record.status]), [
      [start.runId, 'interrupted'],
      [finished.runId, 'completed'],
    ]);
    assert.equal(records[0]!.outcome, 'uncertain');
    assert.deepEqual(readdirSync(journal), []);
  });

  test('the config refuses a plain-HTTP webhook off loopback', async () => {
    await assert.rejects(
      startTestHost({ usage: { webhook: { url: 'http://usage.example.com/hook' } } }),
      (error: { code?: string }) => error.code === 'INVALID_CONFIG',
    );
  });
});

async function untilHealth(stateDirectory: string) {
  let health: Awaited<ReturnType<typeof readUsageHealth>>;
  await untilTrue(async () => (health = await readUsageHealth(stateDirectory)) !== undefined);
  return health!;
}
