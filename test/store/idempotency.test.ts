/**
 * Idempotent runs over real HTTP, on every store engine: the first accepted request owns the
 * key, a repeat replays the record without calling the provider or running a tool, a changed
 * request conflicts, a duplicate in flight is told to retry, a refusal does not consume the key.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { HostTool } from '../../src/runtime/tools.js';
import { parseSse, script, startTestHost, type TestHost } from '../support/host.js';
import { ENGINES, openTestStore } from '../support/stores.js';

/** The usage-record count once it stops changing (records are written just after the response). */
async function settledRuns(host: TestHost): Promise<number> {
  let last = -1;
  for (;;) {
    const runs = (await host.store.usage.summary()).runs;
    if (runs === last) return runs;
    last = runs;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

for (const engine of ENGINES) {
  describe(`idempotency keys (${engine})`, () => {
    const hosts: TestHost[] = [];
    let calls = 0;
    const counter: HostTool = {
      name: 'count',
      description: 'Counts its executions.',
      inputSchema: { type: 'object' },
      execute: () => ({ calls: ++calls }),
    };
    after(async () => {
      for (const host of hosts) await host.close();
    });
    async function host(overrides: Record<string, unknown> = {}): Promise<TestHost> {
      const started = await startTestHost(
        { tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['count', 'guarded'], approveTools: ['guarded'] }], ...overrides },
        { tools: [counter], store: await openTestStore(engine) },
      );
      hosts.push(started);
      return started;
    }
    const toolRun = (key: string) => ({
      provider: 'mock',
      model: 'demo',
      input: script([{ toolCall: { name: 'count', arguments: {} } }], [{ text: 'counted' }]),
      tools: ['count'],
      idempotencyKey: key,
    });
    const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string; retryable: boolean; outcome?: string } } });

    it('replays a completed run without calling the provider or running the tool again', async () => {
      const h = await host();
      const protocol = (await (await fetch(`${h.url}/v1/protocol`, { headers: h.headers() })).json()) as { features: string[] };
      assert.ok(protocol.features.includes('idempotency'));
      calls = 0;
      const first = await json(await h.post('/v1/runs', toolRun('order-1')));
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const runs = await settledRuns(h);
      assert.equal(runs, 1);
      // The same request with its keys in another order is the same request.
      const reordered = JSON.parse(JSON.stringify(toolRun('order-1'), Object.keys(toolRun('order-1')).reverse())) as unknown;
      const second = await json(await h.post('/v1/runs', reordered));
      assert.deepEqual(second, first);
      const streamed = await h.post('/v1/runs', toolRun('order-1'), { accept: 'text/event-stream' });
      assert.equal(streamed.status, 200);
      const events = parseSse(await streamed.text());
      assert.deepEqual(
        events.map((event) => event.type),
        ['run.started', 'step.started', 'tool.called', 'tool.completed', 'step.started', 'run.completed'],
      );
      assert.deepEqual(events.map((event) => event.sequence), [1, 2, 3, 4, 5, 6]);
      assert.ok(events.every((event) => event.runId === first.body.runId));
      assert.equal(calls, 1, 'the tool ran once');
      assert.equal(await settledRuns(h), runs, 'no new run was executed');
    });

    it('answers IDEMPOTENCY_CONFLICT for the same key with a different request, per subject', async () => {
      const h = await host();
      assert.equal((await h.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'a', idempotencyKey: 'k-conflict' })).status, 200);
      const changed = await json(await h.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'b', idempotencyKey: 'k-conflict' }));
      assert.equal(changed.status, 409);
      assert.equal(changed.body.error?.code, 'IDEMPOTENCY_CONFLICT');
      assert.equal(changed.body.error?.retryable, false);
    });

    it('answers OPERATION_IN_PROGRESS (retryable) while the first run is still going', async () => {
      const h = await host();
      const slow = { provider: 'mock', model: 'demo', input: script([{ stallMs: 1500 }, { text: 'late' }]), idempotencyKey: 'k-slow' };
      const first = h.post('/v1/runs', slow);
      // Once the first request owns the key (a loaded machine may take a while to get there).
      while ((await h.store.operations.find('test-user', 'k-slow'))?.state !== 'running') await new Promise((resolve) => setTimeout(resolve, 20));
      const duplicate = await json(await h.post('/v1/runs', slow));
      assert.equal(duplicate.status, 409);
      assert.deepEqual([duplicate.body.error?.code, duplicate.body.error?.retryable], ['OPERATION_IN_PROGRESS', true]);
      const done = await json(await first);
      assert.equal(done.status, 200);
      assert.deepEqual(await json(await h.post('/v1/runs', slow)), done);
    });

    it('replays a failure as the same failure, and a refusal before acceptance does not consume the key', async () => {
      const h = await host({ limits: { maxConcurrentRunsPerSubject: 1 } });
      const failing = { provider: 'mock', model: 'demo', input: script([{ error: { code: 'PROVIDER_ERROR', message: 'vendor down' } }]), idempotencyKey: 'k-fail' };
      const failed = await json(await h.post('/v1/runs', failing));
      assert.equal(failed.body.error?.code, 'PROVIDER_ERROR');
      assert.deepEqual(await json(await h.post('/v1/runs', failing)), failed);

      const blocker = h.post('/v1/runs', { provider: 'mock', model: 'demo', input: script([{ stallMs: 600 }, { text: 'x' }]) });
      await new Promise((resolve) => setTimeout(resolve, 150));
      const busy = await json(await h.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'after busy', idempotencyKey: 'k-busy' }));
      assert.equal(busy.status, 429);
      await blocker;
      const ran = await json(await h.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'after busy', idempotencyKey: 'k-busy' }));
      assert.equal(ran.status, 200, JSON.stringify(ran.body));
      assert.equal(ran.body.text, 'after busy');
    });

    it('never re-issues approval requests on replay', async () => {
      const h = await host({ approvals: { interactive: true } });
      const guarded: HostTool = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => 'done' };
      await h.close();
      const g = await startTestHost(
        { tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'] }], approvals: { interactive: true } },
        { tools: [guarded], store: await openTestStore(engine) },
      );
      hosts.push(g);
      const body = {
        provider: 'mock',
        model: 'demo',
        input: script([{ toolCall: { name: 'guarded', arguments: {}, id: 'c1' } }], [{ text: 'approved and done' }]),
        tools: ['guarded'],
        approvals: { mode: 'interactive', idlePolicy: 'pause' },
        idempotencyKey: 'k-approval',
      };
      const response = await g.post('/v1/runs', body, { accept: 'text/event-stream' });
      const reader = response.body!.getReader();
      let text = '';
      while (!text.includes('approval.requested')) text += new TextDecoder().decode((await reader.read()).value);
      const approval = parseSse(text.slice(0, text.lastIndexOf('\n\n') + 2)).find((event) => event.type === 'approval.requested')!.approval as { approvalId: string; runId: string; call: unknown };
      const decided = await g.post('/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
      assert.equal(decided.status, 200);
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
      assert.equal(parseSse(text).at(-1)!.type, 'run.completed');
      const replay = parseSse(await (await g.post('/v1/runs', body, { accept: 'text/event-stream' })).text());
      assert.deepEqual(
        replay.map((event) => event.type),
        ['run.started', 'step.started', 'tool.called', 'tool.completed', 'step.started', 'run.completed'],
      );
    });

    it('bounds the record: a run whose record outgrows maxRecordBytes fails OPERATION_RECORD_LIMIT', async () => {
      const h = await host({ idempotency: { maxRecordBytes: 1024 } });
      const big = script(
        [{ toolCall: { name: 'count', arguments: { pad: 'x'.repeat(600) } } }],
        [{ toolCall: { name: 'count', arguments: { pad: 'y'.repeat(600) } } }],
        [{ text: 'never' }],
      );
      const limited = await json(await h.post('/v1/runs', { provider: 'mock', model: 'demo', input: big, tools: ['count'], idempotencyKey: 'k-big' }));
      assert.equal(limited.status, 503);
      assert.deepEqual([limited.body.error?.code, limited.body.error?.outcome], ['OPERATION_RECORD_LIMIT', 'uncertain']);
    });

    it('1,000 concurrent duplicates of one key: exactly one run executes', async () => {
      const h = await host({ limits: { maxConcurrentRuns: 2000, maxConcurrentRunsPerSubject: 2000 } });
      calls = 0;
      const runsBefore = await settledRuns(h);
      const responses = await Promise.all(Array.from({ length: 1000 }, () => h.post('/v1/runs', toolRun('k-storm')).then(json)));
      const statuses = new Map<string, number>();
      for (const { status, body } of responses) {
        const label = status === 200 ? '200' : `${status} ${body.error?.code}`;
        statuses.set(label, (statuses.get(label) ?? 0) + 1);
      }
      assert.deepEqual(
        [...statuses.keys()].filter((label) => label !== '200' && label !== '409 OPERATION_IN_PROGRESS'),
        [],
        JSON.stringify([...statuses]),
      );
      assert.equal(calls, 1, 'the tool ran once');
      assert.equal((await settledRuns(h)) - runsBefore, 1, 'one provider run');
      const completed = responses.filter((response) => response.status === 200);
      assert.ok(completed.length >= 1);
      assert.ok(completed.every((response) => response.body.runId === completed[0]!.body.runId));
    });
  });
}
