/**
 * The parts behind the operator's live view, without HTTP: a run's timeline folded from its
 * events (steps, tokens, tool calls, approvals, what it waits for), and the update feed (one
 * store read per check whatever the number of listeners, a listener that stops reading is
 * dropped and nothing waits for it).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FEED_QUEUE_LIMIT, OperatorFeed } from '../../src/extensions/operator/operator-feed.js';
import { RunMonitor } from '../../src/extensions/operator/run-monitor.js';
import { RunTimeline } from '../../src/extensions/operator/run-timeline.js';
import type { OperatorUpdate, RunEvent } from '../../src/protocol/schemas.js';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import type { ActiveRunRow, OperatorMarks, StateStore } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';

const RUN_ID = '00000000-0000-4000-8000-000000000001';
const call = { id: 'call-1', name: 'send', arguments: { to: 'ada' } };

/** Events one second apart from 12:00:00, numbered in order. */
function events(...payloads: Record<string, unknown>[]): RunEvent[] {
  return payloads.map((payload, index) => ({ runId: RUN_ID, sequence: index + 1, timestamp: new Date(Date.UTC(2026, 11, 1, 12, 0, index)).toISOString(), ...payload }) as RunEvent);
}

describe('run timeline', () => {
  it('folds steps, tokens, tool calls, an approval and an application tool, and knows what the run waits for', () => {
    const timeline = new RunTimeline();
    const stream = events(
      { type: 'run.started', provider: 'mock', model: 'demo' },
      { type: 'step.started', step: 1 },
      { type: 'usage.reported', step: 1, usage: { inputTokens: 10, outputTokens: 2 } },
      { type: 'tool.called', call },
      { type: 'approval.requested', approval: { approvalId: 'approval-1', runId: RUN_ID, call, requestedAt: '2026-12-01T12:00:04.000Z', idlePolicy: 'pause' } },
      { type: 'approval.resolved', resolution: { outcome: 'approved', approvalId: 'approval-1', runId: RUN_ID, callId: 'call-1', decidedAt: '2026-12-01T12:00:05.000Z' } },
      { type: 'tool.called', call: { id: 'call-2', name: 'lookup', arguments: {} } },
      { type: 'tool.execution.requested', execution: { executionId: 'execution-1', runId: RUN_ID, call: { id: 'call-2', name: 'lookup', arguments: {} } } },
      { type: 'tool.completed', callId: 'call-2', output: {} },
      { type: 'tool.completed', callId: 'call-1', output: {} },
      { type: 'step.started', step: 2 },
      { type: 'usage.reported', step: 2, usage: { inputTokens: 5, outputTokens: 1 } },
      { type: 'run.completed', result: {} },
    );
    const waits: unknown[] = [];
    for (const event of stream) {
      timeline.apply(event);
      waits.push(timeline.waiting && [timeline.waiting.kind, timeline.waiting.id]);
    }
    // Waiting for a person from the approval's request to its decision, for the application from the hand-off to the result.
    assert.deepEqual(waits, [undefined, undefined, undefined, undefined, ['approval', 'approval-1'], undefined, undefined, ['tool', 'execution-1'], undefined, undefined, undefined, undefined, undefined]);
    assert.deepEqual(timeline.usage, { inputTokens: 15, outputTokens: 3 });
    const [first, second] = timeline.snapshot();
    assert.deepEqual([first!.step, first!.durationMs, first!.usage], [1, 9000, { inputTokens: 10, outputTokens: 2 }]);
    assert.deepEqual([second!.step, second!.durationMs, second!.tools], [2, 2000, []]);
    assert.deepEqual(first!.tools, [
      { callId: 'call-1', name: 'send', calledAt: '2026-12-01T12:00:03.000Z', approval: { requestedAt: '2026-12-01T12:00:04.000Z', resolvedAt: '2026-12-01T12:00:05.000Z', outcome: 'approved' }, durationMs: 6000 },
      { callId: 'call-2', name: 'lookup', calledAt: '2026-12-01T12:00:06.000Z', executionRequestedAt: '2026-12-01T12:00:07.000Z', durationMs: 2000 },
    ]);
  });

  it('ends every wait and the last step when the run ends', () => {
    const timeline = new RunTimeline();
    for (const event of events(
      { type: 'step.started', step: 1 },
      { type: 'tool.called', call },
      { type: 'approval.requested', approval: { approvalId: 'approval-1', runId: RUN_ID, call, requestedAt: '2026-12-01T12:00:02.000Z', idlePolicy: 'pause' } },
      { type: 'run.cancelled', error: { code: 'CANCELLED', message: 'stopped', retryable: false } },
    )) {
      timeline.apply(event);
    }
    assert.equal(timeline.waiting, undefined);
    assert.equal(timeline.steps[0]!.durationMs, 3000);
    assert.equal(timeline.steps[0]!.tools[0]!.durationMs, undefined);
  });
});

/**
 * A store whose marks, runs of other replicas and usage records the test sets, counting the
 * reads of the marks; `announce` is another replica's commit of a run's events.
 */
function markStore(marks: OperatorMarks) {
  const listeners = new Set<(id: string) => void>();
  const store = {
    marks,
    reads: 0,
    active: [] as ActiveRunRow[],
    states: new Map<string, string>(),
    records: new Map<string, UsageRecord>(),
    operatorMarks: async () => (store.reads++, { ...store.marks }),
    runs: {
      active: async (limit: number) => store.active.slice(0, limit),
      read: async (runId: string) => (store.states.has(runId) ? ({ state: store.states.get(runId) } as Awaited<ReturnType<StateStore['runs']['read']>>) : undefined),
      onChange: (listener: (id: string) => void) => (listeners.add(listener), () => listeners.delete(listener)),
    } as unknown as StateStore['runs'],
    usage: {
      finished: async ({ runId }: { runId?: string }) => ({ records: runId && store.records.has(runId) ? [store.records.get(runId)!] : [] }),
    } as unknown as StateStore['usage'],
    announce: (id: string) => listeners.forEach((listener) => listener(id)),
  };
  return store;
}

async function take(updates: AsyncGenerator<OperatorUpdate>, count: number): Promise<OperatorUpdate[]> {
  const taken: OperatorUpdate[] = [];
  while (taken.length < count) {
    const next = await updates.next();
    assert.ok(!next.done, 'the feed ended');
    taken.push(next.value);
  }
  return taken;
}

describe('operator feed', () => {
  it('reads the marks once per check for every listener, and tells each one what changed', async () => {
    const store = markStore({ pendingApprovals: 2, lastFinishedAt: undefined, jobs: '0:' });
    const monitor = new RunMonitor();
    // A long interval: the test drives the checks through the run's changes.
    const feed = new OperatorFeed(store, monitor, { clock: new FakeClock(), intervalMs: 3_600_000, onError: (error) => assert.fail(String(error)) });
    const stop = new AbortController();
    const listeners = Array.from({ length: 5 }, () => feed.subscribe(stop.signal));
    try {
      for (const listener of listeners) {
        const [snapshot, approvals] = await take(listener, 2);
        assert.deepEqual([snapshot!.type, snapshot!.active, snapshot!.pendingApprovals], ['snapshot', [], undefined]);
        assert.deepEqual([approvals!.type, approvals!.pendingApprovals], ['approvals', 2]);
      }
      assert.equal(store.reads, 1);

      // A run starts (a check follows) while another replica finished a run and a job changed.
      store.marks = { pendingApprovals: 3, lastFinishedAt: '2026-12-01T12:00:00.000Z', jobs: '1:5' };
      const run = monitor.track(
        (async function* () {
          yield* events({ type: 'run.started', provider: 'mock', model: 'demo' });
        })(),
        { subject: 'ada' },
      );
      await run.next();
      for (const listener of listeners) {
        const changes = await take(listener, 4);
        assert.deepEqual(
          changes.map((update) => [update.type, update.run?.state ?? update.pendingApprovals ?? null]),
          [
            ['run', 'running'],
            ['approvals', 3],
            ['finished', null],
            ['jobs', null],
          ],
        );
      }
      assert.equal(store.reads, 2);
      await run.return(undefined);
    } finally {
      stop.abort();
      feed.close();
    }
  });

  it('drops a listener that stops reading, and goes on for the others', async () => {
    const store = markStore({ pendingApprovals: 0, lastFinishedAt: undefined, jobs: '0:' });
    const monitor = new RunMonitor();
    const feed = new OperatorFeed(store, monitor, { clock: new FakeClock(), intervalMs: 3_600_000, onError: (error) => assert.fail(String(error)) });
    const stop = new AbortController();
    const stalled = feed.subscribe(stop.signal);
    const reading = feed.subscribe(stop.signal);
    const received: OperatorUpdate[] = [];
    const reader = (async () => {
      for await (const update of reading) {
        received.push(update);
        if (update.run?.state === 'completed') return;
      }
    })();
    // A run with more summary changes than a listener may have queued.
    const steps = FEED_QUEUE_LIMIT + 10;
    const run = monitor.track(
      (async function* () {
        const payloads: Record<string, unknown>[] = [{ type: 'run.started', provider: 'mock', model: 'demo' }];
        for (let step = 1; step <= steps; step += 1) payloads.push({ type: 'step.started', step });
        payloads.push({ type: 'run.completed', result: {} });
        for (const event of events(...payloads)) {
          yield event;
          // Let the reading listener read, as a real connection would between events.
          await new Promise((resolve) => setImmediate(resolve));
        }
      })(),
      { subject: 'ada' },
    );
    for await (const _event of run);
    await reader;
    assert.equal(feed.dropped, 1);
    assert.equal(received.filter((update) => update.type === 'run').length, steps + 2);
    // The stalled one gets what it had queued, then its stream ends.
    let queued = 0;
    for await (const _update of stalled) queued += 1;
    assert.ok(queued <= FEED_QUEUE_LIMIT, `${queued} updates were queued`);
    stop.abort();
    feed.close();
  });

  it("announces other replicas' runs as they begin, start and stop waiting, and end, and leaves a run queued again after its wait listed", async () => {
    const store = markStore({ pendingApprovals: 0, lastFinishedAt: undefined, jobs: '0:' });
    const feed = new OperatorFeed(store, new RunMonitor(), { clock: new FakeClock(), intervalMs: 3_600_000, onError: (error) => assert.fail(String(error)) });
    const stop = new AbortController();
    const updates = feed.subscribe(stop.signal);
    const other = '00000000-0000-4000-8000-0000000000b1';
    const job = '00000000-0000-4000-8000-0000000000b2';
    const row = (runId: string, fields: Partial<ActiveRunRow> = {}): ActiveRunRow => ({ id: runId, runId, mode: 'attached', subject: 'bob', provider: 'mock', model: 'demo', state: 'running', createdAt: Date.UTC(2026, 11, 1, 12), ...fields });
    const runUpdates = async (count: number) => (await take(updates, count)).map((update) => [update.type, update.run?.runId.slice(-2), update.run?.state, update.run?.waiting?.id ?? null, update.run?.jobId ?? null]);
    try {
      // The first read: nothing of other replicas yet.
      assert.deepEqual((await take(updates, 2)).map((update) => update.type), ['snapshot', 'approvals']);

      // Another replica's run begins, and a background run waits checkpointed for an approval.
      store.active = [row(other), row(job, { id: 'job-1', mode: 'background', state: 'waiting', waiting: { kind: 'approval', id: 'approval-1', tool: 'send', since: Date.UTC(2026, 11, 1, 12, 1) } })];
      store.announce(other);
      assert.deepEqual(await runUpdates(2), [
        ['run', 'b1', 'running', null, null],
        ['run', 'b2', 'running', 'approval-1', 'job-1'],
      ]);
      // Commits of runs it already lists start no read.
      const reads = store.reads;
      store.announce(other);
      store.announce(job);
      assert.equal(store.reads, reads);

      // The approval is decided: the job is queued again (not active, not ended), then the other run ends.
      store.active = [row(other)];
      store.states.set(job, 'queued');
      // (A check reads the active runs as it starts: the next change waits for the next check.)
      store.announce('00000000-0000-4000-8000-0000000000c1');
      store.active = [];
      store.states.set(other, 'completed');
      store.records.set(other, { runId: other, subject: 'bob', provider: 'mock', model: 'demo', status: 'completed', startedAt: '2026-12-01T12:00:00.000Z', finishedAt: '2026-12-01T12:00:05.000Z', durationMs: 5000, steps: 1 } as UsageRecord);
      store.announce('00000000-0000-4000-8000-0000000000c2');
      assert.deepEqual(await runUpdates(1), [['run', 'b1', 'completed', null, null]]);
      // A new listener's snapshot still lists the job that waits to go on.
      const late = feed.subscribe(stop.signal);
      const [snapshot] = await take(late, 1);
      assert.deepEqual(snapshot!.active!.map((run) => [run.runId.slice(-2), run.waiting?.id]), [['b2', 'approval-1']]);
    } finally {
      stop.abort();
      feed.close();
    }
  });

  it('ends a subscription after its lifetime, so the reader subscribes again', async () => {
    const store = markStore({ pendingApprovals: 0, lastFinishedAt: undefined, jobs: '0:' });
    const feed = new OperatorFeed(store, new RunMonitor(), { clock: new FakeClock(), intervalMs: 3_600_000, maxSubscriptionMs: 20, onError: (error) => assert.fail(String(error)) });
    const stop = new AbortController();
    const received: string[] = [];
    for await (const update of feed.subscribe(stop.signal)) received.push(update.type);
    assert.equal(received[0], 'snapshot');
    assert.ok(!stop.signal.aborted);
    feed.close();
  });
});
