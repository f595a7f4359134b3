/**
 * The store reads behind the operator endpoints, on both engines: pages of finished runs
 * (filtered, searched, embedding calls left out), the feed's marks, audit pages, pending
 * approvals, every subject's jobs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import type { AuditRecord } from '../../src/store/audit-record.js';
import { ENGINES, openTestStore } from '../support/stores.js';

function usage(runId: string, finishedAt: string, fields: Partial<UsageRecord> = {}): UsageRecord {
  return {
    schema: 'agenticdriver.usage.v2',
    recordId: runId,
    hostId: 'h',
    runId,
    subject: 'alice',
    provider: 'mock',
    vendor: 'mock',
    model: 'demo',
    authMode: 'none',
    source: 'synthetic',
    status: 'completed',
    startedAt: '2026-12-01T10:00:00.000Z',
    finishedAt,
    durationMs: 1000,
    steps: 1,
    observedUsage: { inputTokens: 3 },
    coverage: { startedSteps: 1, completedSteps: 1, reportedSteps: 1 },
    ...fields,
  };
}

const audit = (subject: string, approvalId: string): AuditRecord => ({ kind: 'approval.requested', at: '2026-12-01T10:00:00.000Z', subject, approvalId, tool: 'guarded' });

for (const engine of ENGINES) {
  describe(`operator reads (${engine})`, () => {
    it('pages finished runs with filters and search, reads the marks, pages the audit log, lists pending approvals oldest first and every subject\'s jobs', async () => {
      const store = await openTestStore(engine);
      try {
        await store.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
        assert.deepEqual(await store.operatorMarks(), { pendingApprovals: 0, lastFinishedAt: undefined, jobs: '0:' });
        for (const [index, at] of ['2026-12-01T10:00:01.000Z', '2026-12-03T10:00:01.000Z', '2026-12-02T10:00:01.000Z'].entries()) {
          await store.usage.record(usage(`00000000-0000-4000-8000-00000000000${index}`, at));
        }
        // Two runs finishing at the same instant page by run id; an embedding call is not a run.
        await store.usage.record(usage('00000000-0000-4000-8000-00000000000a', '2026-12-02T10:00:01.000Z', { subject: 'bob', status: 'failed', errorCode: 'PROVIDER_ERROR', model: 'Big_Model%' }));
        await store.usage.record(usage('00000000-0000-4000-8000-0000000000e1', '2026-12-04T10:00:01.000Z', { operation: 'embedding', purpose: 'query' }));
        const ids = (page: { records: UsageRecord[] }) => page.records.map((record) => record.runId.slice(-2));
        const newest = await store.usage.finished({ limit: 2 });
        assert.deepEqual(ids(newest), ['01', '02']);
        assert.deepEqual(newest.next, { finishedAt: '2026-12-02T10:00:01.000Z', runId: '00000000-0000-4000-8000-000000000002' });
        const older = await store.usage.finished({ limit: 2, before: newest.next! });
        assert.deepEqual(ids(older), ['0a', '00']);
        assert.equal(older.next, undefined);
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, status: 'failed' })), ['0a']);
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, subject: 'alice', provider: 'mock' })), ['01', '02', '00']);
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, provider: 'other' })), []);
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, runId: '00000000-0000-4000-8000-000000000002' })), ['02']);
        // Search: case-insensitive, over id, subject, provider and model; `%` and `_` are literal.
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, search: 'BIG_model%' })), ['0a']);
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, search: 'g_m' })), ['0a']);
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, search: '%' })), ['0a']);
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, search: '0000000000' })), ['01', '02', '0a', '00']);
        assert.deepEqual(ids(await store.usage.finished({ limit: 10, search: 'BOB' })), ['0a']);
        // The newest record counts for the marks, embedding calls included (they are usage too).
        assert.equal((await store.operatorMarks()).lastFinishedAt, '2026-12-04T10:00:01.000Z');

        for (const [index, subject] of ['bob', 'alice'].entries()) {
          const approvalId = `approval-${index}`;
          await store.approvals.open(
            {
              approval: { approvalId, runId: `run-${index}`, call: { id: `call-${index}`, name: 'guarded', arguments: { n: index } }, requestedAt: `2026-12-01T10:00:0${5 - index}.000Z`, idlePolicy: 'pause' },
              subject,
              provider: 'mock',
              call: '{}',
              expiresAt: undefined,
            },
            audit(subject, approvalId),
          );
        }
        await store.audit.append(audit('carol', 'approval-x'));
        const pending = await store.approvals.pending(10);
        assert.deepEqual(pending.map((row) => [row.subject, row.approval.approvalId]), [['alice', 'approval-1'], ['bob', 'approval-0']]);
        assert.equal((await store.approvals.pending(1)).length, 1);
        assert.equal((await store.operatorMarks()).pendingApprovals, 2);

        const first = await store.audit.page(2);
        assert.deepEqual(first.map((entry) => entry.record.subject), ['carol', 'alice']);
        const second = await store.audit.page(2, first.at(-1)!.id);
        assert.deepEqual(second.map((entry) => entry.record.subject), ['bob']);
        assert.ok(second[0]!.id < first[1]!.id);

        const submission = (subject: string, key: string) => ({
          subject,
          key,
          fingerprint: key,
          tokenId: 't',
          request: { provider: 'mock', model: 'demo', input: key },
          retentionMs: 60_000,
          maxJobs: 100,
          maxJobsPerSubject: 100,
        });
        const before = (await store.operatorMarks()).jobs;
        await store.jobs.submit(submission('alice', 'a'));
        await store.jobs.submit(submission('bob', 'b'));
        assert.notEqual((await store.operatorMarks()).jobs, before);
        const jobs = await store.jobs.list(10);
        assert.deepEqual(jobs.map((job) => job.subject).sort(), ['alice', 'bob']);
        assert.equal((await store.jobs.list(1)).length, 1);
        assert.equal((await store.jobs.list(10, { state: 'queued' })).length, 2);
        assert.equal((await store.jobs.list(10, { state: 'completed' })).length, 0);
      } finally {
        await store.close();
      }
    });
  });
}
