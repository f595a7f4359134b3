/** `StateStore.usageTotals` (what `agenticdriver usage` prints) on both engines, v1 records included. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import { ENGINES, openTestStore } from '../support/stores.js';

function record(runId: string, fields: Partial<UsageRecord>): UsageRecord {
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
    finishedAt: '2026-12-01T10:00:01.000Z',
    durationMs: 1000,
    steps: 1,
    observedUsage: {},
    coverage: { startedSteps: 1, completedSteps: 1, reportedSteps: 1 },
    ...fields,
  };
}

for (const engine of ENGINES) {
  describe(`usage totals (${engine})`, () => {
    it('sums observed tokens, counts statuses and incomplete runs, groups and filters by finish time', async () => {
      const store = await openTestStore(engine);
      try {
        await store.usage.record(record('00000000-0000-4000-8000-00000000000a', { usage: { inputTokens: 10, outputTokens: 2 }, observedUsage: { inputTokens: 10, outputTokens: 2 }, costUsd: 0.25 }));
        await store.usage.record(record('00000000-0000-4000-8000-00000000000b', { subject: 'bob', status: 'failed', errorCode: 'PROVIDER_ERROR', observedUsage: { inputTokens: 5 }, finishedAt: '2026-12-02T10:00:01.000Z' }));
        // A v1 record (before observedUsage existed): its usage counts as observed.
        const v1 = { ...record('00000000-0000-4000-8000-00000000000c', {}), schema: 'agenticdriver.usage.v1', usage: { inputTokens: 1, outputTokens: 1 } } as unknown as UsageRecord;
        delete (v1 as Partial<UsageRecord>).observedUsage;
        await store.usage.record(v1);

        const [all] = await store.usage.totals({});
        assert.deepEqual(
          [all!.runs, all!.completed, all!.failed, all!.incompleteRuns, all!.inputTokens, all!.outputTokens, all!.costUsd],
          [3, 2, 1, 1, 16, 3, 0.25],
        );
        const bySubject = await store.usage.totals({ by: 'subject' });
        assert.deepEqual(bySubject.map((row) => [row.key, row.runs, row.inputTokens]), [['alice', 2, 11], ['bob', 1, 5]]);
        const byDay = await store.usage.totals({ by: 'day' });
        assert.deepEqual(byDay.map((row) => [row.key, row.runs]), [['2026-12-01', 2], ['2026-12-02', 1]]);
        const byHour = await store.usage.totals({ by: 'hour' });
        assert.deepEqual(byHour.map((row) => [row.key, row.runs]), [['2026-12-01T10', 2], ['2026-12-02T10', 1]]);
        const since = await store.usage.totals({ since: '2026-12-02T00:00:00.000Z', by: 'model' });
        assert.deepEqual(since.map((row) => [row.key, row.runs, row.failed]), [['mock/demo', 1, 1]]);
      } finally {
        await store.close();
      }
    });
  });
}
