/**
 * Background runs that wait for people (feature `interactive-jobs`), on every store engine:
 * a job that reaches a call needing approval, or an application tool, is checkpointed and holds
 * no worker and no admission slot while it waits; the decision or result posted to the host
 * queues it again and it goes on from its checkpoint. With the feature off, such a job is refused
 * as before. Every wait is fenced on the store (the job's row `waiting`), never on wall time.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import type { HostTool } from '../../src/runtime/tools.js';
import type { StateStore } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';
import { OTHER_TOKEN, script, sseEvents, startTestHost, type TestHost } from '../support/host.js';
import { ENGINES, openTestStore } from '../support/stores.js';
import { tempDir } from '../support/temp.js';

const TERMINAL = ['completed', 'failed', 'cancelled', 'interrupted'];
const lookup = { name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' } };
type Body = Record<string, unknown> & { error?: { code: string } };
type Event = Record<string, unknown> & { type: string; sequence: number };

for (const engine of ENGINES) {
  describe(`background runs that wait for people (${engine})`, () => {
    const hosts: TestHost[] = [];
    after(async () => {
      for (const host of hosts) await host.close();
    });

    let executions = 0;
    const guarded: HostTool = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => `executed ${++executions}` };

    async function start(store: StateStore | undefined, jobs: Record<string, unknown> = { interactive: true }, clock?: FakeClock): Promise<TestHost> {
      const host = await startTestHost(
        {
          tokens: [
            {
              id: 'main',
              subject: 'waiting-user',
              tokenRef: { env: 'AD_TEST_TOKEN' },
              providers: ['mock'],
              tools: ['guarded'],
              approveTools: ['guarded', 'lookup'],
              applicationTools: [{ name: 'lookup', requiresApproval: false }],
              jobs: ['submit', 'read', 'cancel'],
            },
            // The console's token: an operator of every subject.
            { id: 'ops', subject: 'operator-1', tokenRef: { env: 'AD_TEST_OTHER' }, providers: [], operator: true },
          ],
          approvals: { interactive: true },
          applicationTools: { enabled: true, requireApproval: false },
          // One run at a time on the whole host, one worker: a waiting job holding either would block everything else.
          limits: { maxConcurrentRuns: 1 },
          jobs: { retentionMs: 60_000, workers: 1, pollIntervalMs: 60_000, ...jobs },
        },
        { tools: [guarded], ...(store ? { store } : {}), ...(clock ? { clock } : {}) },
      );
      hosts.push(host);
      return host;
    }
    const post = async (host: TestHost, path: string, body: unknown): Promise<{ status: number; body: Body }> => {
      const response = await host.post(path, body);
      return { status: response.status, body: (await response.json()) as Body };
    };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    /** Fence: the job's row in the store is `waiting` (checkpointed); bounded only by the test's timeout. */
    async function waiting(store: StateStore, count = 1): Promise<void> {
      while ((await store.checkpoints.waiting()) < count) await sleep(10);
    }
    async function finished(host: TestHost, id: string): Promise<Body> {
      for (;;) {
        const { body } = await post(host, '/v1/jobs/read', { id });
        if (TERMINAL.includes(body.state as string)) return body;
        await sleep(10);
      }
    }
    async function events(host: TestHost, id: string): Promise<Event[]> {
      const all: Event[] = [];
      for (let after = 0; ; ) {
        const { body } = await post(host, '/v1/jobs/events', { id, after });
        all.push(...(body.events as Event[]));
        after = body.nextCursor as number;
        if (!body.hasMore) return all;
      }
    }
    const reviewed = (key: string) => ({
      key,
      request: {
        provider: 'mock',
        model: 'demo',
        input: script([{ toolCall: { name: 'guarded', arguments: { n: 1 }, id: 'g1' } }], [{ echoToolResults: true }]),
        tools: ['guarded'],
        approvals: { mode: 'interactive', idlePolicy: 'pause' },
      },
    });
    const plain = (key: string) => ({ key, request: { provider: 'mock', model: 'demo', input: `plain ${key}` } });
    function assertContiguous(seen: Event[]): void {
      assert.deepEqual(
        seen.map((event) => event.sequence),
        seen.map((_, index) => index + 1),
        'every sequence is contiguous',
      );
    }
    async function approvalOf(host: TestHost, id: string): Promise<{ approvalId: string; runId: string; call: unknown }> {
      const requested = (await events(host, id)).find((event) => event.type === 'approval.requested');
      assert.ok(requested, 'the job asked for approval');
      const { approvalId, runId, call } = requested.approval as { approvalId: string; runId: string; call: unknown };
      return { approvalId, runId, call };
    }

    it('in the store: a park hands the approval to the checkpoint, or queues the job at once when it was decided first', async () => {
      const store = await openTestStore(engine);
      try {
        await store.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
        const request = { provider: 'mock', model: 'demo', input: 'x' } as never;
        const submit = async (key: string) =>
          (await store.jobs.submit({ subject: 's', key, fingerprint: key, tokenId: 'main', request, retentionMs: 60_000, maxJobs: 10, maxJobsPerSubject: 10 })).job;
        const approve = async (runId: string, approvalId: string) => {
          const call = { id: 'c1', name: 'guarded', arguments: {} };
          const at = new Date().toISOString();
          await store.approvals.open(
            { approval: { approvalId, runId, call, requestedAt: at, idlePolicy: 'pause' }, subject: 's', provider: 'mock', call: JSON.stringify(call), expiresAt: undefined },
            { kind: 'approval.requested', at, subject: 's', approvalId },
          );
          return async () => store.approvals.resolve({ approvalId, runId, callId: 'c1', outcome: 'approved', decidedAt: at }, { kind: 'approval.resolved', at, subject: 's', approvalId });
        };
        const stateOf = async (id: string) => (await store.jobs.list(10)).find((job) => job.info.id === id);

        // Pending at the park: the job waits, owned by nobody's lease; the decision queues it again.
        const first = await submit('first');
        assert.equal((await store.jobs.claim())?.info.id, first.info.id);
        const decideFirst = await approve(first.info.runId, '00000000-0000-4000-8000-000000000001');
        await store.checkpoints.park(first.info.id, { kind: 'approval', id: '00000000-0000-4000-8000-000000000001' }, { step: 1 }, undefined);
        assert.equal(await store.checkpoints.waiting(), 1);
        assert.equal((await stateOf(first.info.id))?.owner, '(checkpoint)');
        assert.equal((await store.approvals.read('00000000-0000-4000-8000-000000000001'))?.ownerAlive, true, 'a checkpoint’s approval can be decided');
        assert.equal(await decideFirst(), true);
        assert.deepEqual([await store.checkpoints.waiting(), await store.jobs.queued()], [0, 1]);
        const resumed = await store.jobs.claim();
        assert.equal(resumed?.info.id, first.info.id);
        assert.deepEqual(await store.checkpoints.read(first.info.id), { wait: { kind: 'approval', id: '00000000-0000-4000-8000-000000000001' }, checkpoint: { step: 1 } });

        // Decided before the park committed: the job is queued at once, never left waiting.
        const second = await submit('second');
        assert.equal((await store.jobs.claim())?.info.id, second.info.id);
        const decideSecond = await approve(second.info.runId, '00000000-0000-4000-8000-000000000002');
        assert.equal(await decideSecond(), true);
        await store.checkpoints.park(second.info.id, { kind: 'approval', id: '00000000-0000-4000-8000-000000000002' }, { step: 1 }, undefined);
        assert.equal((await stateOf(second.info.id))?.info.state, 'queued');
        assert.equal(await store.checkpoints.waiting(), 0);

        // A deadline passed (on the caller's clock): due() queues the waiting job.
        // Jobs are taken oldest first by their millisecond: the third is submitted in a later one.
        const secondAt = Date.now();
        while (Date.now() <= secondAt) await new Promise((resolve) => setTimeout(resolve, 1));
        const third = await submit('third');
        assert.equal((await store.jobs.claim())?.info.id, second.info.id, 'the older queued job first');
        assert.equal((await store.jobs.claim())?.info.id, third.info.id);
        await approve(third.info.runId, '00000000-0000-4000-8000-000000000003');
        await store.checkpoints.park(third.info.id, { kind: 'approval', id: '00000000-0000-4000-8000-000000000003' }, { step: 1 }, 5_000);
        assert.equal(await store.checkpoints.due(4_999), 0);
        assert.equal(await store.checkpoints.due(5_000), 1);
        assert.equal((await stateOf(third.info.id))?.info.state, 'queued');

        // Refused when it was about to go on: the job ends, and what it waited for is left to the reaper.
        assert.equal((await store.jobs.claim())?.info.id, third.info.id);
        assert.equal((await store.approvals.read('00000000-0000-4000-8000-000000000003'))?.ownerAlive, true, 'taken back by the claim');
        await store.jobs.fail(third.info.id, { code: 'FORBIDDEN', message: 'refused', retryable: false });
        assert.equal(await store.checkpoints.read(third.info.id), undefined);
        assert.equal((await store.approvals.read('00000000-0000-4000-8000-000000000003'))?.ownerAlive, false, 'nobody owns it: the next reaping interrupts it');
      } finally {
        await store.close();
      }
    });

    it('with the feature off, refuses a job that would wait for people, as before', async () => {
      const host = await start(undefined, {});
      const protocol = (await (await fetch(`${host.url}/v1/protocol`, { headers: host.headers() })).json()) as { features: string[] };
      assert.ok(!protocol.features.includes('interactive-jobs'));
      for (const request of [reviewed('off').request, { provider: 'mock', model: 'demo', input: 'x', tools: ['lookup'], applicationTools: [lookup] }]) {
        const refused = await post(host, '/v1/jobs/submit', { key: 'off', request });
        assert.deepEqual([refused.status, refused.body.error?.code], [400, 'JOB_REQUEST_UNSUPPORTED']);
        assert.match((refused.body.error as unknown as { message: string }).message, /nobody is connected to answer for it/);
      }
    });

    it('waits for an approval holding no worker and no slot; approved, it completes; denied, it fails as a connected run does', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      const protocol = (await (await fetch(`${host.url}/v1/protocol`, { headers: host.headers() })).json()) as { features: string[] };
      assert.ok(protocol.features.includes('interactive-jobs'));
      executions = 0;

      const job = await post(host, '/v1/jobs/submit', reviewed('approve-me'));
      assert.equal(job.status, 200, JSON.stringify(job.body));
      const id = job.body.id as string;
      await waiting(store);
      assert.equal((await post(host, '/v1/jobs/read', { id })).body.state, 'running', 'a waiting job reads as running on the wire');
      // The host allows one run and has one worker: both are free while the job waits.
      const connected = await post(host, '/v1/runs', { provider: 'mock', model: 'demo', input: 'while it waits' });
      assert.equal(connected.status, 200, JSON.stringify(connected.body));
      const other = await post(host, '/v1/jobs/submit', plain('meanwhile'));
      assert.equal((await finished(host, other.body.id as string)).state, 'completed', 'the one worker ran another job meanwhile');
      assert.equal(executions, 0, 'nothing ran before the decision');

      const approval = await approvalOf(host, id);
      const decided = await post(host, '/v1/approvals/decisions', { ...approval, decision: 'approve' });
      assert.deepEqual([decided.status, decided.body.outcome], [200, 'approved']);
      const done = await finished(host, id);
      assert.equal(done.state, 'completed');
      assert.equal(executions, 1, 'the approved tool ran once');
      const seen = await events(host, id);
      assertContiguous(seen);
      assert.deepEqual(
        seen.map((event) => event.type),
        ['run.started', 'step.started', 'tool.called', 'approval.requested', 'approval.resolved', 'tool.completed', 'step.started', 'text.delta', 'run.completed'],
      );
      assert.equal((seen.at(-1)!.result as { text: string }).text, '["executed 1"]');
      assert.equal((seen.at(-1)!.result as { steps: number }).steps, 2, 'the step counter went on from the checkpoint');
      const again = await post(host, '/v1/approvals/decisions', { ...approval, decision: 'approve' });
      assert.equal(again.status, 404, 'decided once');

      const denied = await post(host, '/v1/jobs/submit', reviewed('deny-me'));
      await waiting(store);
      await post(host, '/v1/approvals/decisions', { ...(await approvalOf(host, denied.body.id as string)), decision: 'deny' });
      const failed = await finished(host, denied.body.id as string);
      assert.equal(failed.state, 'failed');
      const deniedEvents = await events(host, denied.body.id as string);
      assertContiguous(deniedEvents);
      assert.equal((deniedEvents.at(-2)!.resolution as { outcome: string }).outcome, 'denied');
      assert.equal((deniedEvents.at(-1)!.error as { code: string }).code, 'APPROVAL_DENIED');
      assert.equal(executions, 1, 'the denied call never ran');

      // One usage record per run, spanning its wait.
      let records: string[] = [];
      while ((records = (await store.usage.finished({ limit: 100 })).records.map((record) => record.runId)).length < 4) await sleep(10);
      assert.equal(records.filter((runId) => runId === job.body.runId).length, 1);
    });

    it('the operator (the console) lists a waiting background run, with its approval, reads and watches it from the store, and decides it; the job goes on', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      executions = 0;
      const job = await post(host, '/v1/jobs/submit', reviewed('operator-decides'));
      const id = job.body.id as string;
      await waiting(store);
      const asOperator = { authorization: `Bearer ${OTHER_TOKEN}` };
      const listed = (await (await host.post('/v1/operator/approvals', {}, asOperator)).json()) as { approvals: { approval: { approvalId: string; runId: string; call: unknown }; subject: string }[] };
      const approval = await approvalOf(host, id);
      assert.deepEqual(
        listed.approvals.map((row) => [row.approval.approvalId, row.subject]),
        [[approval.approvalId, 'waiting-user']],
        'the waiting job\'s approval is listed, with its subject',
      );
      // Checkpointed, it is no replica's run: the run list, its page and its watch come from the store.
      const runs = (await (await host.post('/v1/operator/runs', { finished: 0 }, asOperator)).json()) as { active: Record<string, unknown>[] };
      assert.deepEqual(
        runs.active.map((run) => [run.runId, run.state, run.jobId, run.subject, (run.waiting as { kind: string; id: string; tool: string }).kind, (run.waiting as { id: string }).id, (run.waiting as { tool: string }).tool]),
        [[approval.runId, 'running', id, 'waiting-user', 'approval', approval.approvalId, 'guarded']],
      );
      const page = (await (await fetch(`${host.url}/v1/operator/runs/${approval.runId}`, { headers: asOperator })).json()) as { run: Record<string, unknown>; steps: { step: number; tools: { name: string; approval?: unknown }[] }[] };
      assert.equal(page.run.jobId, id);
      assert.deepEqual((page.run.waiting as { id: string }).id, approval.approvalId);
      assert.deepEqual(page.steps.map((step) => [step.step, step.tools.map((tool) => [tool.name, Boolean(tool.approval)])]), [[1, [['guarded', true]]]]);
      const watch = await fetch(`${host.url}/v1/operator/runs/${approval.runId}/events`, { headers: asOperator });
      assert.equal(watch.status, 200);
      const watched = sseEvents(watch);
      const seen: Event[] = [];
      for (let next = await watched.next(); !next.done; next = await watched.next()) {
        seen.push(next.value as Event);
        if (next.value.type === 'approval.requested') break;
      }
      assert.deepEqual(seen, (await events(host, id)).slice(0, seen.length), 'the watch replays the committed events');

      const decided = await host.post('/v1/operator/approvals/decisions', { ...approval, decision: 'approve' }, asOperator);
      assert.equal(decided.status, 200, await decided.clone().text());
      assert.equal(((await decided.json()) as { outcome: string }).outcome, 'approved');
      // The watch goes on with the run, wherever it goes on, to its end.
      for await (const event of watched) seen.push(event as Event);
      assert.equal(seen.at(-1)!.type, 'run.completed');
      assertContiguous(seen);
      assert.equal((await finished(host, id)).state, 'completed');
      assert.equal(executions, 1, 'the approved tool ran once');
    });

    it('an application tool job completes with the result posted to the host; the tool runs exactly once', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      const job = await post(host, '/v1/jobs/submit', {
        key: 'ticket',
        request: { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'lookup', arguments: {} } }], [{ echoToolResults: true }]), tools: ['lookup'], applicationTools: [lookup] },
      });
      assert.equal(job.status, 200, JSON.stringify(job.body));
      const id = job.body.id as string;
      await waiting(store);
      const requested = (await events(host, id)).filter((event) => event.type === 'tool.execution.requested');
      assert.equal(requested.length, 1);
      const execution = requested[0]!.execution as { executionId: string; runId: string; call: { id: string } };
      const identity = { executionId: execution.executionId, runId: execution.runId, callId: execution.call.id };
      const accepted = await post(host, '/v1/tool-executions/results', { ...identity, output: { answer: 42 } });
      assert.equal(accepted.body.status, 'accepted', JSON.stringify(accepted.body));
      assert.equal((await finished(host, id)).state, 'completed');
      const seen = await events(host, id);
      assertContiguous(seen);
      assert.equal(seen.filter((event) => event.type === 'tool.execution.requested').length, 1, 'one ticket: the tool ran once');
      assert.equal((seen.at(-1)!.result as { text: string }).text, '[{"answer":42}]');
      const twice = await post(host, '/v1/tool-executions/results', { ...identity, output: { answer: 43 } });
      assert.equal(twice.body.error?.code, 'TOOL_EXECUTION_NOT_FOUND');
    });

    it('an approval that expires while its job waits ends the job as it ends a connected run (fake clock)', async () => {
      const store = await openTestStore(engine);
      const clock = new FakeClock();
      // The workers look every 10 ms: the deadline is found on the fake clock, whenever they look after it moved.
      const host = await start(store, { interactive: true, pollIntervalMs: 10 }, clock);
      executions = 0;
      const job = await post(host, '/v1/jobs/submit', {
        key: 'expire-me',
        request: { ...reviewed('expire-me').request, approvals: { mode: 'interactive', idlePolicy: 'pause', expiresAfterMs: 60_000 } },
      });
      const id = job.body.id as string;
      await waiting(store);
      await sleep(50);
      assert.equal((await post(host, '/v1/jobs/read', { id })).body.state, 'running', 'not expired before its time');
      await clock.advance(60_000);
      assert.equal((await finished(host, id)).state, 'failed');
      const seen = await events(host, id);
      assertContiguous(seen);
      assert.equal((seen.at(-2)!.resolution as { outcome: string }).outcome, 'expired');
      assert.equal((seen.at(-1)!.error as { code: string }).code, 'APPROVAL_EXPIRED');
      assert.equal(executions, 0);
    });

    it('a job cancelled while it waits ends cancelled, its approval cancelled first', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      executions = 0;
      const job = await post(host, '/v1/jobs/submit', reviewed('cancel-me'));
      const id = job.body.id as string;
      await waiting(store);
      await post(host, '/v1/jobs/cancel', { id });
      assert.equal((await finished(host, id)).state, 'cancelled');
      const seen = await events(host, id);
      assertContiguous(seen);
      assert.deepEqual(
        seen.slice(-2).map((event) => event.type),
        ['approval.resolved', 'run.cancelled'],
      );
      assert.equal((seen.at(-2)!.resolution as { outcome: string }).outcome, 'cancelled');
      assert.equal(executions, 0);
    });
  });
}

describe('background runs that wait for people across a restart (sqlite)', () => {
  it('a host stopped while its job waits resumes it after the decision, once started again on the same state', async () => {
    const state = tempDir('agenticdriver-waiting-restart-');
    let executions = 0;
    const guarded: HostTool = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => `executed ${++executions}` };
    const config = {
      tokens: [{ id: 'main', subject: 'waiting-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'], jobs: ['submit', 'read'] }],
      approvals: { interactive: true },
      jobs: { retentionMs: 60_000, interactive: true },
      state: { directory: state },
    };
    try {
      const first = await startTestHost(config, { tools: [guarded] });
      const submitted = (await (
        await first.post('/v1/jobs/submit', {
          key: 'restart',
          request: {
            provider: 'mock',
            model: 'demo',
            input: script([{ toolCall: { name: 'guarded', arguments: {}, id: 'g1' } }], [{ echoToolResults: true }]),
            tools: ['guarded'],
            approvals: { mode: 'interactive', idlePolicy: 'pause' },
          },
        })
      ).json()) as { id: string };
      while ((await first.store.checkpoints.waiting()) < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      const page = (await (await first.post('/v1/jobs/events', { id: submitted.id, after: 0 })).json()) as { events: { type: string; approval?: { approvalId: string; runId: string; call: unknown } }[] };
      const { approvalId, runId, call } = page.events.find((event) => event.type === 'approval.requested')!.approval!;
      await first.close();

      const second = await startTestHost(config, { tools: [guarded] });
      try {
        assert.equal(await second.store.checkpoints.waiting(), 1, 'the restart kept the waiting job');
        const decided = await second.post('/v1/approvals/decisions', { approvalId, runId, call, decision: 'approve' });
        assert.equal(decided.status, 200, await decided.clone().text());
        let state: string;
        while (!TERMINAL.includes((state = ((await (await second.post('/v1/jobs/read', { id: submitted.id })).json()) as { state: string }).state))) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.equal(state, 'completed');
        assert.equal(executions, 1);
        const events = ((await (await second.post('/v1/jobs/events', { id: submitted.id, after: 0 })).json()) as { events: { sequence: number }[] }).events;
        assert.deepEqual(
          events.map((event) => event.sequence),
          events.map((_, index) => index + 1),
        );
      } finally {
        await second.close();
      }
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});

for (const engine of ENGINES) {
  describe(`1,000 background runs waiting for approval (${engine})`, () => {
    it('hold no worker and no admission slot while they wait, and each approved later completes', async () => {
      const COUNT = 1000;
      let executions = 0;
      const guarded: HostTool = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => `executed ${++executions}` };
      const store = await openTestStore(engine);
      const host = await startTestHost(
        {
          tokens: [{ id: 'main', subject: 'waiting-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'], jobs: ['submit', 'read'] }],
          approvals: { interactive: true },
          // One run at a time on the host, one worker: a single waiting job holding either would block the checks below.
          limits: { maxConcurrentRuns: 1 },
          jobs: { retentionMs: 600_000, interactive: true, workers: 1, maxJobs: 2 * COUNT, maxJobsPerSubject: 2 * COUNT, pollIntervalMs: 60_000 },
        },
        { tools: [guarded], store },
      );
      try {
        const input = script([{ toolCall: { name: 'guarded', arguments: {}, id: 'g1' } }], [{ echoToolResults: true }]);
        const request = { provider: 'mock', model: 'demo', input, tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } };
        for (let index = 0; index < COUNT; index += 1) {
          const submitted = await host.post('/v1/jobs/submit', { key: `wait-${index}`, request });
          assert.equal(submitted.status, 200);
        }
        // Fence: every job is checkpointed in the store.
        while ((await store.checkpoints.waiting()) < COUNT) await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(await store.jobs.queued(), 0);
        const connected = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'while 1,000 wait' });
        assert.equal(connected.status, 200, 'the host’s one admission slot is free');
        const plain = (await (await host.post('/v1/jobs/submit', { key: 'plain', request: { provider: 'mock', model: 'demo', input: 'plain' } })).json()) as { id: string };
        while (((await (await host.post('/v1/jobs/read', { id: plain.id })).json()) as { state: string }).state !== 'completed') await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(executions, 0);

        const pending = await store.approvals.pending(2 * COUNT);
        assert.equal(pending.length, COUNT, 'every waiting job’s approval is pending (and listed for operators)');
        for (const { approval } of pending) {
          const decided = await host.post('/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
          assert.equal(decided.status, 200);
        }
        // Fences: every approved tool ran (counted in process: free to watch), then every job is completed
        // (a page of 2,001 job rows: read seldom, not to compete with the worker for the CPU).
        while (executions < COUNT) await new Promise((resolve) => setTimeout(resolve, 50));
        while ((await store.jobs.list(2 * COUNT + 1, { state: 'completed' })).length < COUNT + 1) await new Promise((resolve) => setTimeout(resolve, 250));
        assert.equal(await store.checkpoints.waiting(), 0);
        assert.equal(executions, COUNT, 'each approved tool ran once');
      } finally {
        await host.close();
      }
    });
  });
}
