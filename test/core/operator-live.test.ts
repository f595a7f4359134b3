/**
 * The operator's live view over real HTTP: the update feed (a snapshot, then a run that
 * starts, waits for a person, is approved and finishes, with the pending count), a run's page
 * (steps, tools, approval, tokens, timing), reasons for failed and interrupted runs, filters,
 * search and paging of finished runs, changes another replica made (seen through the store),
 * and usage per hour.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { INTERRUPTED_REASON } from '../../src/extensions/operator/run-reasons.js';
import { interruptedRecord, USAGE_RECORD_SCHEMA, type UsageRecord } from '../../src/runtime/usage-record.js';
import { script, sseEvents, startTestHost, TOKEN, OTHER_TOKEN, type TestHost } from '../support/host.js';

type Json = Record<string, any>;

const guarded = {
  name: 'guarded',
  description: 'An effect that needs a person to agree.',
  inputSchema: { type: 'object' },
  requiresApproval: true,
  execute: () => ({ done: true }),
};

const config = {
  approvals: { interactive: true },
  jobs: { retentionMs: 60_000, pollIntervalMs: 20 },
  tokens: [
    { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock', 'second'], tools: ['guarded'], jobs: ['submit', 'read'] },
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

const operator = async (host: TestHost, path: string, body: unknown) => {
  const response = await call(host, OTHER_TOKEN, 'POST', path, body);
  return { status: response.status, body: (await response.json()) as Json };
};

const readRun = async (host: TestHost, runId: string) => {
  const response = await call(host, OTHER_TOKEN, 'GET', `/v1/operator/runs/${runId}`);
  return { status: response.status, body: (await response.json()) as Json };
};

/** The operator's update feed, read one update at a time (leaving a for-await loop would close it). */
async function openFeed(host: TestHost) {
  const response = await call(host, OTHER_TOKEN, 'GET', '/v1/operator/updates', undefined, { accept: 'text/event-stream' });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
  const updates = sseEvents(response);
  const seen: Json[] = [];
  /** Read but not yet matched: waits need not follow the order updates arrive in. */
  const unmatched: Json[] = [];
  return {
    seen,
    /** The first update not matched before that satisfies `match`. */
    async until(match: (update: Json) => boolean, what: string): Promise<Json> {
      const earlier = unmatched.findIndex(match);
      if (earlier >= 0) return unmatched.splice(earlier, 1)[0]!;
      for (;;) {
        const next = await updates.next();
        assert.ok(!next.done, `the feed ended before ${what}`);
        seen.push(next.value);
        if (match(next.value)) return next.value;
        unmatched.push(next.value);
      }
    },
    close: async () => {
      await updates.return(undefined);
    },
  };
}

function record(runId: string, finishedAt: string, fields: Partial<UsageRecord> = {}): UsageRecord {
  return {
    schema: USAGE_RECORD_SCHEMA,
    recordId: runId,
    hostId: 'another-replica',
    runId,
    subject: 'elsewhere',
    provider: 'mock',
    vendor: 'mock',
    model: 'demo',
    authMode: 'none',
    source: 'synthetic',
    status: 'completed',
    startedAt: finishedAt,
    finishedAt,
    durationMs: 0,
    steps: 1,
    observedUsage: {},
    coverage: { startedSteps: 1, completedSteps: 1, reportedSteps: 1 },
    ...fields,
  };
}

describe('operator live view', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost(config, { tools: [guarded], operatorMarksIntervalMs: 50 });
  });
  after(async () => {
    await host?.close();
  });

  it('streams a snapshot, then a run that waits for approval and finishes, with the pending count; the run page has its steps, tools and timing', async () => {
    const feed = await openFeed(host);
    try {
      const snapshot = await feed.until(() => true, 'the snapshot');
      assert.equal(snapshot.type, 'snapshot');
      assert.deepEqual(snapshot.active, []);
      await feed.until((update) => update.type === 'approvals' && update.pendingApprovals === 0, 'the pending count');

      const input = script(
        [{ usage: { inputTokens: 11, outputTokens: 4 } }, { text: 'asking ' }, { toolCall: { name: 'guarded', arguments: { to: 'ada' } } }],
        [{ usage: { inputTokens: 20, outputTokens: 6 } }, { text: 'done' }],
      );
      const running = await call(host, TOKEN, 'POST', '/v1/runs', { provider: 'mock', model: 'demo', input, tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } }, { accept: 'text/event-stream' });
      const events = sseEvents(running);
      let approval: Json | undefined;
      while (!approval) {
        const next = await events.next();
        assert.ok(!next.done);
        if (next.value.type === 'approval.requested') approval = next.value.approval as Json;
      }
      const runId = approval.runId as string;

      const started = await feed.until((update) => update.type === 'run' && update.run.runId === runId, 'the run starting');
      assert.equal(started.run.state, 'running');
      const waiting = await feed.until((update) => update.type === 'run' && update.run.runId === runId && update.run.waiting !== undefined, 'the run waiting');
      assert.deepEqual({ ...waiting.run.waiting, since: undefined }, { kind: 'approval', tool: 'guarded', id: approval.approvalId, since: undefined });
      await feed.until((update) => update.type === 'approvals' && update.pendingApprovals === 1, 'one pending approval');

      // The list and the run page say the same while it waits.
      const listed = await operator(host, '/v1/operator/runs', { finished: 0 });
      assert.equal(listed.body.active.find((run: Json) => run.runId === runId).waiting.kind, 'approval');
      const waitingPage = await readRun(host, runId);
      assert.equal(waitingPage.status, 200);
      assert.equal(waitingPage.body.run.state, 'running');
      assert.equal(waitingPage.body.steps.length, 1);
      const [pendingCall] = waitingPage.body.steps[0].tools;
      assert.equal(pendingCall.name, 'guarded');
      assert.equal(typeof pendingCall.approval.requestedAt, 'string');
      assert.equal(pendingCall.approval.outcome, undefined);

      const decided = await operator(host, '/v1/operator/approvals/decisions', { approvalId: approval.approvalId, runId, call: approval.call, decision: 'approve' });
      assert.equal(decided.status, 200);
      for await (const _event of events);

      const ended = await feed.until((update) => update.type === 'run' && update.run.runId === runId && update.run.state !== 'running', 'the run ending');
      assert.equal(ended.run.state, 'completed');
      assert.equal(ended.run.waiting, undefined);
      const finished = await feed.until((update) => update.type === 'finished' && update.run?.runId === runId, 'the finished record');
      assert.equal(finished.run.state, 'completed');
      assert.equal(typeof finished.run.durationMs, 'number');
      assert.deepEqual(finished.run.usage, { inputTokens: 31, outputTokens: 10 });
      await feed.until((update) => update.type === 'approvals' && update.pendingApprovals === 0, 'no pending approval');
      assert.ok(feed.seen.every((update) => typeof update.at === 'string'));

      const page = await readRun(host, runId);
      assert.equal(page.body.run.state, 'completed');
      assert.equal(page.body.run.steps, 2);
      assert.deepEqual(
        page.body.steps.map((step: Json) => [step.step, step.usage, typeof step.durationMs, step.tools.length]),
        [
          [1, { inputTokens: 11, outputTokens: 4 }, 'number', 1],
          [2, { inputTokens: 20, outputTokens: 6 }, 'number', 0],
        ],
      );
      const tool = page.body.steps[0].tools[0];
      assert.equal(tool.approval.outcome, 'approved');
      assert.equal(typeof tool.approval.resolvedAt, 'string');
      assert.equal(typeof tool.durationMs, 'number');
    } finally {
      await feed.close();
    }
  });

  it('gives a failed run a reason from its code (never its message), and an interrupted one its reason and an uncertain outcome', async () => {
    const failing = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: script([{ error: { code: 'PROVIDER_ERROR', message: 'The vendor refused: quota exhausted for ada@example.com.' } }]) });
    assert.equal(failing.status, 502);
    const failed = await operator(host, '/v1/operator/runs', { state: 'failed' });
    assert.equal(failed.body.active.length, 0);
    const run = failed.body.finished[0];
    assert.equal(run.errorCode, 'PROVIDER_ERROR');
    assert.equal(run.reason, 'The provider answered with an error.');
    const page = await readRun(host, run.runId);
    assert.equal(page.body.run.reason, run.reason);
    assert.ok(!JSON.stringify([failed.body, page.body]).includes('ada@example.com'), 'the error message reached an operator view');

    // The record a host writes at start-up for a run its previous process left in flight.
    const runId = randomUUID();
    const startedAt = new Date(Date.now() - 60_000).toISOString();
    await host.store.usage.record(
      interruptedRecord(
        { schema: USAGE_RECORD_SCHEMA, recordId: runId, hostId: 'h', runId, subject: 'test-user', provider: 'mock', vendor: 'mock', model: 'demo', authMode: 'none', source: 'synthetic', startedAt },
        new Date().toISOString(),
      ),
    );
    const interrupted = (await operator(host, '/v1/operator/runs', { state: 'interrupted' })).body.finished;
    assert.equal(interrupted.length, 1);
    assert.equal(interrupted[0].reason, INTERRUPTED_REASON);
    assert.equal(interrupted[0].outcome, 'uncertain');
    // Its page: the record only (this replica never served it), so no steps.
    const interruptedPage = await readRun(host, runId);
    assert.equal(interruptedPage.body.run.reason, INTERRUPTED_REASON);
    assert.equal(interruptedPage.body.steps, undefined);
  });

  it('filters, searches and pages finished runs, and refuses a cursor it did not issue', async () => {
    const ids: string[] = [];
    for (const provider of ['mock', 'second', 'second']) {
      const response = await host.post('/v1/runs', { provider, model: 'demo', input: `paged on ${provider}` });
      assert.equal(response.status, 200);
      ids.push(((await response.json()) as Json).runId);
    }
    const onSecond = await operator(host, '/v1/operator/runs', { provider: 'second' });
    assert.deepEqual(new Set(onSecond.body.finished.map((run: Json) => run.runId)), new Set(ids.slice(1)));

    // Page through everything two at a time: every run once, newest first.
    const everything = (await operator(host, '/v1/operator/runs', { finished: 100 })).body.finished.map((run: Json) => run.runId);
    const paged: string[] = [];
    let before: string | undefined;
    do {
      const page = await operator(host, '/v1/operator/runs', { finished: 2, ...(before ? { before } : {}) });
      assert.equal(page.status, 200);
      assert.ok(page.body.finished.length <= 2);
      paged.push(...page.body.finished.map((run: Json) => run.runId));
      before = page.body.nextBefore;
    } while (before);
    assert.deepEqual(paged, everything);
    assert.ok(ids.every((id) => paged.includes(id)));

    const searched = await operator(host, '/v1/operator/runs', { search: ids[0]!.slice(0, 13).toUpperCase() });
    assert.deepEqual(searched.body.finished.map((run: Json) => run.runId), [ids[0]]);
    assert.deepEqual((await operator(host, '/v1/operator/runs', { subject: 'nobody' })).body.finished, []);
    assert.deepEqual((await operator(host, '/v1/operator/runs', { state: 'running' })).body.finished, []);
    for (const cursor of ['garbage', Buffer.from('[1,2]').toString('base64url')]) {
      const refused = await operator(host, '/v1/operator/runs', { before: cursor });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error.code, 'INVALID_OPERATOR_REQUEST');
    }
  });

  it('tells the feed about runs another replica finished and jobs that change, and reads such a run from its record', async () => {
    const feed = await openFeed(host);
    try {
      await feed.until((update) => update.type === 'snapshot', 'the snapshot');
      await feed.until((update) => update.type === 'approvals', 'the pending count');
      // Written to the shared store as another replica would: no local run announced it.
      const runId = randomUUID();
      await host.store.usage.record(record(runId, new Date(Date.now() + 60_000).toISOString()));
      const finished = await feed.until((update) => update.type === 'finished', 'the other replica\'s run');
      assert.equal(finished.run, undefined);

      const submitted = await call(host, TOKEN, 'POST', '/v1/jobs/submit', { key: 'live-job', request: { provider: 'mock', model: 'demo', input: 'job' } });
      assert.equal(submitted.status, 200);
      await feed.until((update) => update.type === 'jobs', 'the job change');

      const page = await readRun(host, runId);
      assert.equal(page.status, 200);
      assert.equal(page.body.run.subject, 'elsewhere');
      assert.equal(page.body.steps, undefined);
    } finally {
      await feed.close();
    }
    const unknown = await readRun(host, randomUUID());
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'RUN_NOT_FOUND');
    const malformed = await readRun(host, 'not-a-run');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, 'INVALID_OPERATOR_REQUEST');
  });

  it('sums usage per hour', async () => {
    const byHour = await operator(host, '/v1/operator/usage', { by: 'hour' });
    assert.equal(byHour.status, 200);
    assert.ok(byHour.body.totals.length >= 1);
    for (const row of byHour.body.totals) assert.match(row.key, /^\d{4}-\d{2}-\d{2}T\d{2}$/);
  });
});
