/**
 * The operator endpoints over real HTTP: only a token with the operator grant opens them; the
 * live run list and a run's watched events; pending approvals of another subject decided by the
 * operator and audited with the operator's token; any subject's jobs and their stream; usage
 * totals; audit pages; and a watcher that stops reading never slows the run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ENDPOINTS } from '../../src/protocol/endpoints.js';
import { RunMonitor, WATCHER_QUEUE_LIMIT } from '../../src/extensions/operator/run-monitor.js';
import type { RunEvent } from '../../src/protocol/schemas.js';
import { script, sseEvents, startTestHost, TOKEN, OTHER_TOKEN, type TestHost } from '../support/host.js';

type Event = Record<string, unknown> & { type: string };

const OPERATOR_ENDPOINTS = ENDPOINTS.filter((entry) => entry.feature === 'operator-endpoints');
const RUN_ID = '00000000-0000-4000-8000-000000000000';

const guarded = {
  name: 'guarded',
  description: 'An effect that needs a person to agree.',
  inputSchema: { type: 'object' },
  requiresApproval: true,
  execute: (input: Record<string, unknown>) => ({ done: true, input }),
};

const config = {
  approvals: { interactive: true },
  jobs: { retentionMs: 60_000, pollIntervalMs: 20 },
  tokens: [
    { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], jobs: ['submit', 'read'] },
    { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: [] },
    { id: 'ops', subject: 'operator-1', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], operator: true },
  ],
};

function call(host: TestHost, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${host.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

const operator = (host: TestHost, path: string, body: unknown) => call(host, OTHER_TOKEN, 'POST', path, body).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('operator endpoints', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost(config, { tools: [guarded] });
  });
  after(async () => {
    await host?.close();
  });

  it('are advertised, and refuse an application token with FORBIDDEN on every one of them', async () => {
    const protocol = (await (await call(host, TOKEN, 'GET', '/v1/protocol')).json()) as { features: string[] };
    assert.ok(protocol.features.includes('operator-endpoints'));
    assert.ok(OPERATOR_ENDPOINTS.length >= 8);
    for (const entry of OPERATOR_ENDPOINTS) {
      const path = entry.path.replace('{id}', RUN_ID);
      // Even a body that would be invalid is refused for the grant first.
      const response = await call(host, TOKEN, entry.method, path, entry.method === 'POST' ? { nonsense: true } : undefined);
      assert.equal(response.status, 403, `${entry.operationId}`);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'FORBIDDEN');
    }
  });

  it('lists an active run with its steps and tokens so far, streams its events to a watcher, then lists it finished', async () => {
    const input = script([{ usage: { inputTokens: 7, outputTokens: 3 } }, { text: 'first ' }, { toolCall: { name: 'guarded', arguments: { note: 'x' } } }], [{ text: 'done' }]);
    const running = await call(host, TOKEN, 'POST', '/v1/runs', { provider: 'mock', model: 'demo', input, tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } }, { accept: 'text/event-stream' });
    const events = sseEvents(running);
    let approval: Record<string, any> | undefined;
    // Read by hand: leaving a for-await loop would close the stream, which cancels the run.
    while (!approval) {
      const next = await events.next();
      assert.ok(!next.done);
      if (next.value.type === 'approval.requested') approval = next.value.approval as Record<string, any>;
    }
    assert.ok(approval);

    const listed = await operator(host, '/v1/operator/runs', {});
    assert.equal(listed.status, 200);
    const active = listed.body.active.find((run: { runId: string }) => run.runId === approval!.runId);
    assert.equal(active.subject, 'test-user');
    assert.equal(active.state, 'running');
    assert.equal(active.steps, 1);
    assert.equal(active.usage.inputTokens, 7);

    const watching = await call(host, OTHER_TOKEN, 'GET', `/v1/operator/runs/${approval.runId}/events`, undefined, { accept: 'text/event-stream' });
    assert.equal(watching.status, 200);
    assert.match(watching.headers.get('content-type') ?? '', /text\/event-stream/);
    const watched: Event[] = [];
    const watcher = (async () => {
      for await (const event of sseEvents(watching)) watched.push(event as Event);
    })();

    const pending = await operator(host, '/v1/operator/approvals', {});
    assert.equal(pending.status, 200);
    const entry = pending.body.approvals.find((item: { approval: { approvalId: string } }) => item.approval.approvalId === approval!.approvalId);
    assert.equal(entry.subject, 'test-user');
    assert.deepEqual(entry.approval.call, approval.call);

    const decided = await operator(host, '/v1/operator/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
    assert.equal(decided.status, 200);
    assert.equal(decided.body.outcome, 'approved');
    const rest: Event[] = [];
    for await (const event of events) rest.push(event as Event);
    assert.equal(rest.at(-1)!.type, 'run.completed');
    await watcher;
    // The watcher saw the run from its start (the recent events first) to its terminal event.
    assert.equal(watched[0]!.type, 'run.started');
    assert.equal(watched.at(-1)!.type, 'run.completed');
    assert.ok(watched.some((event) => event.type === 'approval.resolved'));

    const audit = await operator(host, '/v1/operator/audit', { limit: 5 });
    assert.equal(audit.status, 200);
    const resolved = audit.body.records.find((record: { kind: string; approvalId?: string }) => record.kind === 'approval.resolved' && record.approvalId === approval!.approvalId);
    assert.equal(resolved.tokenId, 'ops');
    assert.equal(resolved.operator, 'operator-1');
    assert.equal(resolved.subject, 'test-user');

    const finished = await waitFor(async () => {
      const now = await operator(host, '/v1/operator/runs', { finished: 5 });
      return now.body.finished.find((run: { runId: string }) => run.runId === approval!.runId);
    }, 'the finished run');
    assert.equal(finished.state, 'completed');
    assert.equal(finished.usage.inputTokens, 7);
    const after = await operator(host, '/v1/operator/runs', {});
    assert.ok(!after.body.active.some((run: { runId: string }) => run.runId === approval!.runId));
  });

  it('pages the audit log with nextBefore', async () => {
    const first = await operator(host, '/v1/operator/audit', { limit: 1 });
    assert.equal(first.body.records.length, 1);
    assert.equal(typeof first.body.nextBefore, 'number');
    const second = await operator(host, '/v1/operator/audit', { limit: 1, before: first.body.nextBefore });
    assert.equal(second.body.records.length, 1);
    assert.ok(second.body.records[0].id < first.body.records[0].id);
  });

  it('answers an unknown run with RUN_NOT_FOUND and a bad body with INVALID_OPERATOR_REQUEST', async () => {
    const missing = await call(host, OTHER_TOKEN, 'GET', `/v1/operator/runs/${RUN_ID}/events`, undefined, { accept: 'text/event-stream' });
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'RUN_NOT_FOUND');
    const bad = await operator(host, '/v1/operator/runs', { finished: 1000 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'INVALID_OPERATOR_REQUEST');
    const extra = await operator(host, '/v1/operator/usage', { by: 'week' });
    assert.equal(extra.body.error.code, 'INVALID_OPERATOR_REQUEST');
  });

  it('lists every subject\'s jobs and streams any job to its terminal event', async () => {
    const input = script([{ text: 'job for the operator' }, { stallMs: 400 }, { text: ' done' }]);
    const submitted = await call(host, TOKEN, 'POST', '/v1/jobs/submit', { key: 'op-job-1', request: { provider: 'mock', model: 'demo', input } });
    assert.equal(submitted.status, 200);
    const job = (await submitted.json()) as { id: string; runId: string };
    // While it runs, the active list names its job.
    const active = await waitFor(async () => {
      const runs = await operator(host, '/v1/operator/runs', { finished: 0 });
      return runs.body.active.find((run: { runId: string }) => run.runId === job.runId);
    }, 'the running job');
    assert.equal(active.jobId, job.id);
    assert.equal(active.subject, 'test-user');
    const list = await operator(host, '/v1/operator/jobs', { limit: 10 });
    assert.equal(list.status, 200);
    assert.equal(list.body.jobs.find((item: { job: { id: string } }) => item.job.id === job.id).subject, 'test-user');
    const stream = await call(host, OTHER_TOKEN, 'GET', `/v1/operator/jobs/${job.id}/stream`, undefined, { accept: 'text/event-stream' });
    assert.equal(stream.status, 200);
    const events: Event[] = [];
    for await (const event of sseEvents(stream)) events.push(event as Event);
    assert.equal(events[0]!.type, 'run.started');
    assert.equal(events.at(-1)!.type, 'run.completed');
    const completed = await operator(host, '/v1/operator/jobs', { state: 'completed' });
    assert.ok(completed.body.jobs.every((item: { job: { state: string } }) => item.job.state === 'completed'));
    const unknown = await call(host, OTHER_TOKEN, 'GET', `/v1/operator/jobs/${RUN_ID}/stream`, undefined, { accept: 'text/event-stream' });
    assert.equal(unknown.status, 404);
  });

  it('sums usage per provider, model and day', async () => {
    const total = await operator(host, '/v1/operator/usage', {});
    assert.equal(total.status, 200);
    assert.ok(total.body.totals[0].runs >= 2);
    const byModel = await operator(host, '/v1/operator/usage', { by: 'model' });
    assert.equal(byModel.body.totals[0].key, 'mock/demo');
    const byDay = await operator(host, '/v1/operator/usage', { by: 'day' });
    assert.match(byDay.body.totals[0].key, /^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('operator endpoints without an operator token', () => {
  it('are neither advertised nor served', async () => {
    const host = await startTestHost();
    try {
      const protocol = (await (await call(host, TOKEN, 'GET', '/v1/protocol')).json()) as { features: string[] };
      assert.ok(!protocol.features.includes('operator-endpoints'));
      const response = await call(host, TOKEN, 'POST', '/v1/operator/runs', {});
      assert.equal(response.status, 404);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
    } finally {
      await host.close();
    }
  });
});

describe('run monitor', () => {
  it('drops a watcher that falls behind and never holds the run', async () => {
    const monitor = new RunMonitor();
    const count = WATCHER_QUEUE_LIMIT * 3;
    const runId = RUN_ID;
    async function* run(): AsyncGenerator<RunEvent> {
      yield { type: 'run.started', runId, sequence: 1, timestamp: new Date().toISOString(), provider: 'mock', model: 'demo' } as RunEvent;
      for (let sequence = 2; sequence < count; sequence += 1) yield { type: 'text.delta', runId, sequence, timestamp: new Date().toISOString(), text: 'x' } as RunEvent;
      yield { type: 'run.completed', runId, sequence: count, timestamp: new Date().toISOString(), result: {} } as unknown as RunEvent;
    }
    const tracked = monitor.track(run(), { subject: 'someone' });
    const first = await tracked.next();
    assert.equal(first.value?.type, 'run.started');
    assert.equal(monitor.list()[0]!.runId, runId);
    // A watcher that never reads while the run produces every other event.
    const watcher = monitor.watch(runId, new AbortController().signal);
    let passed = 1;
    for await (const _event of tracked) passed += 1;
    assert.equal(passed, count);
    assert.equal(monitor.dropped, 1);
    assert.deepEqual(monitor.list(), []);
    // What it had queued is bounded, and it ends without the run's terminal event.
    let received = 0;
    let last: RunEvent | undefined;
    for await (const event of watcher) {
      received += 1;
      last = event;
    }
    assert.ok(received <= WATCHER_QUEUE_LIMIT + 1);
    assert.notEqual(last?.type, 'run.completed');
  });
});
