/**
 * The webhook spool is bounded (issue 25, item 7). While the webhook was down, the spool used to
 * take one fsynced file per run without limit, and every retry round read and sorted the whole
 * folder. It now holds at most `usage.webhook.maxSpoolRecords` records and `maxSpoolBytes`
 * bytes (waiting and refused together); past the bound a record is not spooled — counted as
 * dropped, logged with its id — and stays in the state store. `doctor` and `/metrics` show it.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import type { SinkFailure } from '../../src/extensions/usage/sink.js';
import { WebhookSink } from '../../src/extensions/usage/webhook-sink.js';
import { CLI_MAIN, cliAsync, killAll, spawnHost, type HostProcess } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'spool-token-0123456789abcdefghijklmnopq';

/** A loopback webhook that answers 503 while down and records what it accepted. */
class Receiver {
  readonly accepted: string[] = [];
  up = false;
  url = '';
  private readonly server = createServer((request, response) => void this.handle(request, response));

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/usage`;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    for await (const _chunk of request);
    if (!this.up) {
      response.writeHead(503).end();
      return;
    }
    this.accepted.push(String(request.headers['idempotency-key']));
    response.writeHead(204).end();
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function metric(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('a bounded webhook spool (issue 25, item 7)', () => {
  const dir = tempDir('agenticdriver-spool-');
  const config = join(dir, 'config.json');
  const receiver = new Receiver();
  const children: ChildProcess[] = [];
  const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_SPOOL_TOKEN: TOKEN };
  let host: HostProcess;
  let stderr = '';

  before(async () => {
    await receiver.listen();
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [{ id: 'main', subject: 'tenant', tokenRef: { env: 'AD_SPOOL_TOKEN' }, providers: ['mock'] }],
        metrics: { enabled: true },
        usage: { webhook: { url: receiver.url, maxAttempts: 1, retryIntervalMs: 100, maxSpoolRecords: 3 } },
      }),
      { mode: 0o600 },
    );
    host = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--json'], env, children, { onStderr: (text) => (stderr += text) });
  });
  after(async () => {
    killAll(children);
    await receiver.close();
  });

  it('holds at most maxSpoolRecords while the webhook is down, drops the rest visibly, and delivers what it held once it is back', async () => {
    const runIds: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const response = await fetch(`${host.url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ provider: 'mock', model: 'demo', input: `run ${index}` }) });
      assert.equal(response.status, 200, 'a full spool never changes a run');
      runIds.push(((await response.json()) as { runId: string }).runId);
    }
    const pending = join(dir, 'state', 'usage-spool', 'pending');
    const waiting = () => readdirSync(pending).filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length));
    await until(() => stderr.split('\n').filter((line) => line.includes('the spool is full')).length === 2 && waiting().length === 3, 'three spooled and two dropped records');
    const spooled = waiting();
    const drops = stderr.split('\n').filter((line) => line.includes('the spool is full')).map((line) => JSON.parse(line) as { code: string; recordId: string });
    const dropped = drops.map((line) => line.recordId);
    assert.equal(spooled.length, 3, 'three records wait');
    assert.deepEqual(drops.map((line) => line.code), ['USAGESTAT_ERROR', 'USAGESTAT_ERROR']);
    assert.deepEqual([...spooled, ...dropped].sort(), [...runIds].sort(), 'every run is either spooled or logged as dropped, by id');

    const metrics = await (await fetch(`${host.url}/metrics`)).text();
    assert.equal(metric(metrics, 'agenticdriver_usage_spool_records', '{folder="pending"}'), 3);
    assert.equal(metric(metrics, 'agenticdriver_usage_spool_records', '{folder="rejected"}'), 0);
    assert.equal(metric(metrics, 'agenticdriver_usage_spool_max_records'), 3);
    assert.equal(metric(metrics, 'agenticdriver_usage_spool_max_bytes'), 256 * 1024 * 1024);
    assert.equal(metric(metrics, 'agenticdriver_usage_spool_dropped_total'), 2);
    assert.ok((metric(metrics, 'agenticdriver_usage_spool_bytes') ?? 0) > 0);

    const doctor = await cliAsync(['doctor', '--config', config, '--json'], env);
    assert.equal(doctor.status, 1, 'a full spool fails doctor');
    assert.notEqual(doctor.stdout, '', `doctor printed no report: ${doctor.stderr}`);
    const report = JSON.parse(doctor.stdout) as { ok: boolean; usage: { ok: boolean; spool: Record<string, unknown> } };
    assert.equal(report.usage.ok, false);
    assert.deepEqual(
      { ...report.usage.spool, bytes: undefined },
      { directory: join(dir, 'state', 'usage-spool'), pending: 3, rejected: 0, bytes: undefined, maxRecords: 3, maxBytes: 256 * 1024 * 1024, full: true, dropped: 2 },
    );

    // The webhook is back: what was spooled is delivered, and the spool has room again.
    receiver.up = true;
    await until(() => receiver.accepted.length === 3, 'the three spooled records');
    assert.deepEqual([...receiver.accepted].sort(), [...spooled].sort());
    await until(async () => metric(await (await fetch(`${host.url}/metrics`)).text(), 'agenticdriver_usage_spool_records', '{folder="pending"}') === 0, 'an empty spool');
    const next = await fetch(`${host.url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ provider: 'mock', model: 'demo', input: 'after' }) });
    const nextId = ((await next.json()) as { runId: string }).runId;
    await until(() => receiver.accepted.includes(nextId), 'the next record');

    // The state store kept every run, the dropped ones included.
    host.child.kill('SIGTERM');
    assert.equal(await host.exited, 0);
    const usage = await cliAsync(['usage', '--config', config, '--json'], env);
    assert.equal(usage.status, 0, usage.stderr);
    assert.equal((JSON.parse(usage.stdout) as { rows: { runs: number }[] }).rows[0]!.runs, 6);
  });
});

describe('WebhookSink bounds and index', () => {
  const record = (id: number, padding = 0): UsageRecord =>
    ({ schema: 'agenticdriver.usage.v2', recordId: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`, runId: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`, note: 'x'.repeat(padding) }) as unknown as UsageRecord;

  it('counts bytes against maxSpoolBytes, waiting and refused records together, and indexes what an earlier process left oldest first', async () => {
    const spool = tempDir('agenticdriver-spool-unit-');
    // An earlier process left two waiting records and one refused one; the older waits first.
    mkdirSync(join(spool, 'pending'), { recursive: true });
    mkdirSync(join(spool, 'rejected'), { recursive: true });
    for (const [folder, id, age] of [['pending', 2, 10], ['pending', 1, 20], ['rejected', 3, 30]] as const) {
      const path = join(spool, folder, `${record(id).recordId}.json`);
      writeFileSync(path, JSON.stringify(record(id, 20_000)));
      utimesSync(path, new Date(Date.now() - age * 1000), new Date(Date.now() - age * 1000));
    }
    const failures: SinkFailure[] = [];
    const order: string[] = [];
    const server = createServer((request, response) => {
      order.push(String(request.headers['idempotency-key']));
      request.resume();
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const sink = new WebhookSink(
      { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, spoolDirectory: spool, maxSpoolBytes: 65_536, maxSpoolRecords: 100 },
      (failure) => failures.push(failure),
    );
    try {
      await sink.open();
      // Another 20 KB record does not fit: 3 × ~20 KB are there already (a delivery waits for the index).
      await assert.rejects(sink.deliver(record(4, 20_000)), /the spool is full/);
      const opened = sink.spool();
      assert.deepEqual([opened.pending, opened.rejected, opened.dropped], [2, 1, 1]);
      assert.ok(opened.bytes > 60_000 && opened.bytes < 65_536, String(opened.bytes));
      // A small one does.
      await sink.deliver(record(5, 10));
      sink.start();
      await sink.flush();
      assert.deepEqual(order, [record(1).recordId, record(2).recordId, record(5).recordId], 'oldest first, then in arrival order');
      assert.deepEqual([sink.spool().pending, sink.spool().rejected], [0, 1]);
      assert.deepEqual(sink.health().dropped, 1);
    } finally {
      await sink.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
