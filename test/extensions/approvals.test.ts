import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AuditRecord } from '../../src/store/audit-record.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { guardedTool, OTHER_TOKEN, script, sseEvents, startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { join } from 'node:path';
import { tempDir } from '../support/temp.js';

type Event = Record<string, unknown> & { type: string };

const effects: unknown[] = [];
const guarded = guardedTool(effects, (input: Record<string, unknown>) => ({ approved: true, arguments: input }));

const approvalsConfig = {
  approvals: { interactive: true, maxPending: 2 },
  tokens: [
    { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'] },
    { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'] },
    { id: 'other', subject: 'test-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], tools: ['guarded'] },
  ],
};
const reviewedRun = (extra: Record<string, unknown> = {}) => ({
  provider: 'mock',
  model: 'demo',
  input: script([{ toolCall: { name: 'guarded', arguments: { to: 'ada@example.com', nested: { ids: [1, 2] } } } }], [{ echoToolResults: true }]),
  tools: ['guarded'],
  approvals: { mode: 'interactive', idlePolicy: 'pause', ...extra },
});

/** Streams a run, answering the first approval.requested with `decide`; returns every event. */
async function streamWith(host: TestHost, body: unknown, decide?: (approval: Record<string, unknown>) => Promise<void>): Promise<Event[]> {
  const response = await host.post('/v1/runs', body, { accept: 'text/event-stream' });
  assert.equal(response.status, 200);
  const events: Event[] = [];
  for await (const event of sseEvents(response)) {
    events.push(event as Event);
    if (event.type === 'approval.requested' && decide) await decide(event.approval as Record<string, unknown>);
  }
  return events;
}

async function decide(host: TestHost, approval: Record<string, unknown>, decision: string, token = TOKEN, override: Record<string, unknown> = {}) {
  const response = await fetch(`${host.url}/v1/approvals/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision, ...override }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string } } };
}

describe('interactive approvals over HTTP', () => {
  let host: TestHost;
  let audit: AuditRecord[];
  before(async () => {
    host = await startTestHost(approvalsConfig, { tools: [guarded] });
    audit = [];
  });
  after(() => host.close());

  it('advertises the feature', async () => {
    const protocol = (await (await fetch(`${host.url}/v1/protocol`, { headers: host.headers() })).json()) as { features: string[] };
    assert.ok(protocol.features.includes('interactive-approvals'));
  });

  it('approves exactly the reviewed call once; other subjects, altered bindings and repeats are refused', async () => {
    effects.length = 0;
    const rejections: [number, string | undefined][] = [];
    const events = await streamWith(host, reviewedRun(), async (approval) => {
      assert.equal(effects.length, 0, 'nothing runs before the decision');
      const restricted = await decide(host, approval, 'approve', 'restricted-token-0123456789abcdefghij');
      rejections.push([restricted.status, restricted.body.error?.code]);
      const noGrant = await decide(host, approval, 'approve', OTHER_TOKEN);
      rejections.push([noGrant.status, noGrant.body.error?.code]);
      const altered = await decide(host, approval, 'approve', TOKEN, { call: { ...(approval.call as object), arguments: { to: 'eve@example.com', nested: { ids: [1, 2] } } } });
      rejections.push([altered.status, altered.body.error?.code]);
      const wrongRun = await decide(host, approval, 'approve', TOKEN, { runId: 'another-run' });
      rejections.push([wrongRun.status, wrongRun.body.error?.code]);
      const malformed = await decide(host, approval, 'maybe');
      rejections.push([malformed.status, malformed.body.error?.code]);
      const ok = await decide(host, approval, 'approve');
      assert.equal(ok.status, 200);
      assert.equal(ok.body.outcome, 'approved');
      assert.equal(ok.body.callId, (approval.call as { id: string }).id);
      const again = await decide(host, approval, 'approve');
      rejections.push([again.status, again.body.error?.code]);
    });
    assert.deepEqual(rejections, [
      [404, 'APPROVAL_NOT_FOUND'],
      [403, 'FORBIDDEN'],
      [409, 'APPROVAL_MISMATCH'],
      [409, 'APPROVAL_MISMATCH'],
      [400, 'INVALID_APPROVAL'],
      [404, 'APPROVAL_NOT_FOUND'],
    ]);
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(types.indexOf('tool.called')), ['tool.called', 'approval.requested', 'approval.resolved', 'tool.completed', 'step.started', 'text.delta', 'run.completed']);
    assert.deepEqual(effects, [{ to: 'ada@example.com', nested: { ids: [1, 2] } }]);
    const records = await host.store.audit.read(50);
    assert.ok(records.some((r) => r.kind === 'approval.resolved' && r.outcome === 'approved' && r.tokenId === 'main'));
    assert.ok(records.filter((r) => r.kind === 'approval.rejected').length >= 5);
  });

  it('deny fails the run with APPROVAL_DENIED and no effect; cancel ends it cancelled', async () => {
    effects.length = 0;
    const denied = await streamWith(host, reviewedRun(), async (approval) => void (await decide(host, approval, 'deny')));
    assert.equal(denied.at(-1)!.type, 'run.failed');
    assert.deepEqual(denied.at(-1)!.error, { code: 'APPROVAL_DENIED', message: 'The call to guarded was denied.', retryable: false });
    const cancelled = await streamWith(host, reviewedRun(), async (approval) => void (await decide(host, approval, 'cancel')));
    assert.equal(cancelled.at(-1)!.type, 'run.cancelled');
    assert.equal((cancelled.at(-1)!.error as { code: string }).code, 'CANCELLED');
    assert.equal((cancelled.find((e) => e.type === 'approval.resolved')!.resolution as { outcome: string }).outcome, 'cancelled');
    assert.deepEqual(effects, []);
  });

  it('expires an undecided approval', async () => {
    const events = await streamWith(host, reviewedRun({ expiresAfterMs: 30 }));
    assert.equal((events.find((e) => e.type === 'approval.requested')!.approval as { expiresAt?: string }).expiresAt !== undefined, true);
    assert.equal((events.find((e) => e.type === 'approval.resolved')!.resolution as { outcome: string }).outcome, 'expired');
    assert.equal((events.at(-1)!.error as { code: string }).code, 'APPROVAL_EXPIRED');
  });

  it('pause stops the idle timer while a person decides; continue does not', async () => {
    const paused = await streamWith(host, { ...reviewedRun(), idleTimeoutMs: 100 }, async (approval) => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await decide(host, approval, 'approve');
    });
    assert.equal(paused.at(-1)!.type, 'run.completed');
    const running = await streamWith(host, { ...reviewedRun(), approvals: { mode: 'interactive', idlePolicy: 'continue' }, idleTimeoutMs: 100 });
    assert.equal(running.at(-1)!.type, 'run.cancelled');
    assert.equal((running.at(-1)!.error as { code: string }).code, 'IDLE_TIMEOUT');
    assert.equal((running.find((e) => e.type === 'approval.resolved')!.resolution as { outcome: string }).outcome, 'cancelled');
    assert.ok(!running.some((e) => e.type === 'run.progress'), 'human review is not progress');
  });

  it('resolves a pending approval as cancelled when the client disconnects, freeing capacity', async () => {
    const response = await host.post('/v1/runs', reviewedRun(), { accept: 'text/event-stream' });
    let approval: Record<string, unknown> | undefined;
    for await (const event of sseEvents(response)) {
      if (event.type === 'approval.requested') {
        approval = event.approval as Record<string, unknown>;
        break;
      }
    }
    assert.ok(approval);
    let late = { status: 0, body: {} as Record<string, unknown> & { error?: { code: string } } };
    for (let i = 0; i < 50; i += 1) {
      late = await decide(host, approval, 'approve');
      if (late.status === 404) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(late.body.error?.code, 'APPROVAL_NOT_FOUND');
    assert.equal(host.approvals!.size, 0);
  });

  it('refuses interactive approvals on JSON runs', async () => {
    const response = await host.post('/v1/runs', reviewedRun());
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'APPROVAL_STREAM_REQUIRED');
  });

  it('enforces pending capacity with a retryable 429-class error', async () => {
    const holds = await Promise.all([0, 1].map(() => host.post('/v1/runs', reviewedRun(), { accept: 'text/event-stream' })));
    const readers = holds.map((r) => sseEvents(r));
    for (const reader of readers) {
      for (;;) {
        const { value } = await reader.next();
        if (value?.type === 'approval.requested') break;
      }
    }
    const third = await streamWith(host, reviewedRun());
    assert.deepEqual(third.at(-1)!.error, { code: 'APPROVAL_CAPACITY', message: 'Too many approvals are pending on this host.', retryable: true });
    await Promise.all(readers.map((reader) => reader.return(undefined)));
  });
});

describe('approval policy and audit failures', () => {
  it('reports APPROVAL_UNAVAILABLE without opt-in and APPROVAL_POLICY when pause is not allowed', async () => {
    const off = await startTestHost({ tokens: approvalsConfig.tokens }, { tools: [guarded] });
    const refused = await off.post('/v1/runs', reviewedRun(), { accept: 'text/event-stream' });
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'APPROVAL_UNAVAILABLE');
    const noReview = await off.post('/v1/runs', { ...reviewedRun(), approvals: undefined });
    assert.equal(((await noReview.json()) as { error: { code: string } }).error.code, 'APPROVAL_REQUIRED');
    await off.close();
    const strict = await startTestHost({ ...approvalsConfig, approvals: { interactive: true, allowIdlePause: false } }, { tools: [guarded] });
    const policy = await strict.post('/v1/runs', reviewedRun(), { accept: 'text/event-stream' });
    assert.equal(policy.status, 400);
    assert.equal(((await policy.json()) as { error: { code: string } }).error.code, 'APPROVAL_POLICY');
    await strict.close();
  });

  it('fails closed with APPROVAL_AUDIT_FAILED when the audit record cannot be written', async () => {
    const store = await openSqliteStore(tempDir('ad-audit-'));
    let failDecisions = false;
    const resolveApproval = store.approvals.resolve.bind(store.approvals);
    // The decision and its audit record commit together; the disk fills up just then.
    store.approvals.resolve = async (resolution, audit) => {
      if (failDecisions) throw new Error('disk full');
      return resolveApproval(resolution, audit);
    };
    const host = await startTestHost(approvalsConfig, { tools: [guarded], store });
    effects.length = 0;
    let answer: { status: number; body: Record<string, unknown> & { error?: { code: string } } } | undefined;
    const events = await streamWith(host, reviewedRun(), async (approval) => {
      failDecisions = true;
      answer = await decide(host, approval, 'approve');
    });
    assert.equal(answer?.status, 503);
    assert.equal(answer?.body.error?.code, 'APPROVAL_AUDIT_FAILED');
    assert.equal((events.at(-1)!.error as { code: string }).code, 'APPROVAL_AUDIT_FAILED');
    assert.deepEqual(effects, []);
    await host.close();
  });
});
