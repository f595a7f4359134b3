/**
 * A state store that fails — refusing writes (as a full disk does), or gone altogether — is a
 * clear 503 for every request that needs it, never a 500 or a hang, and leaves no half-written
 * record.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startTestHost, type TestHost } from '../support/host.js';
import { ENGINES, openBreakableStore } from '../support/stores.js';

for (const engine of ENGINES) {
  describe(`a failing state store (${engine})`, () => {
    const hosts: TestHost[] = [];
    after(async () => {
      for (const host of hosts) await host.close().catch(() => undefined);
    });

    for (const failure of ['writes-refused', 'down'] as const) {
      it(`store ${failure}: keyed runs and decisions get 503 OPERATION_STORE_ERROR, unkeyed runs still run, nothing is half written`, async () => {
        const breakable = await openBreakableStore(engine);
        const host = await startTestHost({ approvals: { interactive: true } }, { store: breakable.store });
        hosts.push(host);
        const ok = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'before', idempotencyKey: 'before-1' });
        assert.equal(ok.status, 200);
        await breakable.fail(failure);

        const keyed = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'during', idempotencyKey: 'during-1' });
        const body = (await keyed.json()) as { error: { code: string; retryable: boolean } };
        assert.equal(keyed.status, 503, JSON.stringify(body));
        assert.equal(body.error.code, 'OPERATION_STORE_ERROR');
        const decision = await host.post('/v1/approvals/decisions', {
          approvalId: '00000000-0000-4000-8000-000000000000',
          runId: 'r',
          call: { id: 'c', name: 'guarded', arguments: {} },
          decision: 'approve',
        });
        // Reads still work when only writes are refused: there is no such approval.
        assert.equal(decision.status, failure === 'down' ? 503 : 404);
        // Metering is not on the request path: a run without a key still answers.
        const unkeyed = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'unmetered' });
        assert.equal(unkeyed.status, 200);

        const after = await breakable.recover();
        try {
          const record = await after.operations.find('test-user', 'during-1');
          assert.ok(record === undefined || record.state !== 'running' || record.events.length === 0, JSON.stringify(record));
          assert.equal((await after.operations.find('test-user', 'before-1'))?.state, 'completed');
        } finally {
          await after.close();
        }
      });
    }
  });
}
