/**
 * Operation records at the store seam, on both engines: one claim per key, appends only by the
 * owner while running, a terminal state closes the record, retention drops finished records
 * only, and a replica whose lease lapsed is fenced out once another reaps its work.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { StateStore } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../support/stores.js';

const claim = (key: string) => ({ subject: 's', key, fingerprint: 'f'.repeat(64), runId: `run-${key}`, provider: 'mock', model: 'demo' });
const entry = (type: string) => ({ at: '2026-12-01T00:00:00.000Z', event: { type, step: 1 } as never });

for (const engine of ENGINES) {
  describe(`operation records (${engine})`, () => {
    const stores: StateStore[] = [];
    after(async () => {
      for (const store of stores) await store.close();
    });
    async function started(): Promise<StateStore> {
      const store = await openTestStore(engine);
      stores.push(store);
      await store.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
      return store;
    }

    it('claims once, appends while running, closes on a terminal state, and expires only finished records', async () => {
      const store = await started();
      assert.deepEqual(await store.operations.claim(claim('a')), { claimed: true });
      const second = await store.operations.claim(claim('a'));
      assert.equal(second.claimed, false);
      await store.operations.append('s', 'a', 'run-a', entry('run.started'), { maxBytes: 10_000 });
      await store.operations.append('s', 'a', 'run-a', entry('run.completed'), { maxBytes: 10_000, state: 'completed' });
      await assert.rejects(store.operations.append('s', 'a', 'run-a', entry('step.started'), { maxBytes: 10_000 }), { code: 'OPERATION_STORE_ERROR' });
      const record = await store.operations.find('s', 'a');
      assert.deepEqual([record?.state, record?.runId, record?.events.map((item) => item.event.type)], ['completed', 'run-a', ['run.started', 'run.completed']]);
      await store.operations.claim(claim('b'));
      assert.equal(await store.operations.expire(Date.now() + 1000), 1, 'only the finished record expires');
      assert.equal(await store.operations.find('s', 'a'), undefined);
      assert.equal((await store.operations.find('s', 'b'))?.state, 'running');
    });

    it('refuses an append past maxBytes, but always takes the terminal event', async () => {
      const store = await started();
      await store.operations.claim(claim('big'));
      await assert.rejects(store.operations.append('s', 'big', 'run-big', { at: 'x', event: { type: 'tool.called', pad: 'p'.repeat(500) } as never }, { maxBytes: 100 }), {
        code: 'OPERATION_RECORD_LIMIT',
      });
      await store.operations.append('s', 'big', 'run-big', { at: 'x', event: { type: 'run.failed', pad: 'p'.repeat(500) } as never }, { maxBytes: 100, state: 'failed' });
      assert.equal((await store.operations.find('s', 'big'))?.state, 'failed');
    });
  });
}
