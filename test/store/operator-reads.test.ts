/** The store reads behind the operator endpoints, on both engines: recent runs, audit pages, pending approvals, every subject's jobs. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import type { AuditRecord } from '../../src/store/audit-record.js';
import { ENGINES, openTestStore } from '../support/stores.js';

function usage(runId: string, finishedAt: string): UsageRecord {
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
  };
}

const audit = (subject: string, approvalId: string): AuditRecord => ({ kind: 'approval.requested', at: '2026-12-01T10:00:00.000Z', subject, approvalId, tool: 'guarded' });

for (const engine of ENGINES) {
  describe(`operator reads (${engine})`, () => {
    it('lists recent usage newest first, pages the audit log, lists pending approvals oldest first and every subject\'s jobs', async () => {
      const store = await openTestStore(engine);
      try {
        await store.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
        for (const [index, at] of ['2026-12-01T10:00:01.000Z', '2026-12-03T10:00:01.000Z', '2026-12-02T10:00:01.000Z'].entries()) {
          await store.recordUsage(usage(`00000000-0000-4000-8000-00000000000${index}`, at));
        }
        assert.deepEqual((await store.recentUsage(2)).map((record) => record.finishedAt), ['2026-12-03T10:00:01.000Z', '2026-12-02T10:00:01.000Z']);

        for (const [index, subject] of ['bob', 'alice'].entries()) {
          const approvalId = `approval-${index}`;
          await store.openApproval(
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
        await store.appendAudit(audit('carol', 'approval-x'));
        const pending = await store.pendingApprovals(10);
        assert.deepEqual(pending.map((row) => [row.subject, row.approval.approvalId]), [['alice', 'approval-1'], ['bob', 'approval-0']]);
        assert.equal((await store.pendingApprovals(1)).length, 1);

        const first = await store.auditPage(2);
        assert.deepEqual(first.map((entry) => entry.record.subject), ['carol', 'alice']);
        const second = await store.auditPage(2, first.at(-1)!.id);
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
        await store.jobs.submit(submission('alice', 'a'));
        await store.jobs.submit(submission('bob', 'b'));
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
