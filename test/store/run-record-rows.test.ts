/**
 * An attached run's recorded events on both engines: the events of one commit share one row,
 * and pages read back the same events, sequences and cursors whatever row they sit in — a page
 * starting, ending (by count or by bytes) in the middle of a row.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunEvent } from '../../src/protocol/schemas.js';
import type { SqlEngine } from '../../src/store/sql/engine.js';
import type { StateStore } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../support/stores.js';

const RUN = '4f1c8a52-7b7e-4d0e-9a51-3c2f6f0d1a01';
const event = (sequence: number, type: string, fields: object = {}) => ({ type, runId: RUN, sequence, timestamp: `2026-12-03T09:00:00.00${sequence}Z`, ...fields }) as RunEvent;
const EVENTS = [
  event(1, 'run.started', { provider: 'mock', model: 'demo' }),
  event(2, 'step.started', { step: 1 }),
  event(3, 'text.delta', { text: 'héllo ' }),
  event(4, 'text.delta', { text: 'wörld' }),
  event(5, 'usage.reported', { step: 1, usage: { inputTokens: 1, outputTokens: 2 } }),
  event(6, 'text.delta', { text: '!' }),
  event(7, 'run.completed', { result: { runId: RUN, provider: 'mock', model: 'demo', text: 'héllo wörld!', usage: {}, steps: 1, finishReason: 'stop' } }),
];

/** Queues `events` in one turn, as a run's events reach the recorder; resolves once the last is committed. */
function record(store: StateStore, events: RunEvent[]): Promise<void> {
  return new Promise((resolve, reject) => {
    for (const [index, recorded] of events.entries()) {
      const last = index === events.length - 1;
      store.runs.record({ runId: RUN, subject: 'alice', provider: 'mock', model: 'demo', event: recorded, retentionMs: 60_000 }, last ? (error) => (error ? reject(error) : resolve()) : undefined);
    }
  });
}

for (const engine of ENGINES) {
  describe(`recorded events, a row per commit (${engine})`, () => {
    it('stores one row per commit and pages the same events across and inside rows', async () => {
      const store = await openTestStore(engine);
      try {
        await record(store, EVENTS.slice(0, 5));
        await record(store, EVENTS.slice(5));
        const sql = (store as unknown as { engine: SqlEngine }).engine;
        const rows = await sql.all<{ seq: number }>('SELECT seq FROM run_events WHERE id = ? ORDER BY seq', [RUN]);
        assert.deepEqual(rows.map((row) => Number(row.seq)), [5, 7]);

        const row = (await store.runs.read(RUN))!;
        assert.equal(row.state, 'completed');
        assert.equal(row.cursor, 7);
        const page = (after: number, limit = 100, maxBytes = 1_000_000) => store.runs.events(row, after, limit, maxBytes);
        assert.deepEqual(await page(0), EVENTS);
        assert.deepEqual(await page(2, 2), EVENTS.slice(2, 4));
        assert.deepEqual(await page(4, 2), EVENTS.slice(4, 6));
        assert.deepEqual(await page(5), EVENTS.slice(5));
        assert.deepEqual(await page(7), []);
        // By bytes: at least one event, then only whole events within the bound.
        const sizes = EVENTS.map((recorded) => Buffer.byteLength(JSON.stringify(recorded)));
        assert.deepEqual(await page(1, 100, 1), EVENTS.slice(1, 2));
        assert.deepEqual(await page(1, 100, sizes[1]! + sizes[2]! + sizes[3]!), EVENTS.slice(1, 4));
        assert.deepEqual(await page(1, 100, sizes[1]! + sizes[2]! + sizes[3]! - 1), EVENTS.slice(1, 3));
      } finally {
        await store.close();
      }
    });
  });
}
