/**
 * A2A push-notification configs in the store, on both engines: at most N per task, the same id
 * replaced; a delivery is due once the task's last event asks for input or the task ended, and
 * once per such point; one replica claims it (a second claim, here or on another PostgreSQL
 * replica, is refused while the lease holds); a failure holds it off until its retry time; the
 * end settles the config for good.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunEvent } from '../../src/protocol/schemas.js';
import type { PushConfigRow, StateStore } from '../../src/store/store.js';
import { freshDatabase } from '../support/postgres.js';
import { ENGINES, openPostgresStore, openTestStore } from '../support/stores.js';

const request = { provider: 'mock', model: 'demo', input: 'hi' };
const target = { url: 'https://127.0.0.1:9/hook', token: 't', authentication: undefined };

async function runningJob(store: StateStore): Promise<{ id: string; append(type: string, extra?: Record<string, unknown>): Promise<void> }> {
  const { job } = await store.jobs.submit({ subject: 'someone', key: `k-${Math.random()}`, fingerprint: 'f', tokenId: 'main', request: request as never, retentionMs: 60_000, maxJobs: 10, maxJobsPerSubject: 10 });
  assert.equal((await store.jobs.claim())?.info.id, job.info.id);
  let sequence = 0;
  return {
    id: job.info.id,
    append: async (type, extra = {}) => {
      sequence += 1;
      await store.jobs.append(job.info.id, { type, runId: job.info.runId, sequence, timestamp: new Date().toISOString(), ...extra } as unknown as RunEvent, 1_000_000);
    },
  };
}

for (const engine of ENGINES) {
  describe(`A2A push-notification configs (${engine})`, () => {
    it('keeps at most ten configs per task, and replaces one set again under its id', async () => {
      const store = await openTestStore(engine);
      try {
        const job = await runningJob(store);
        const row = (configId: string, url = target.url): PushConfigRow => ({ taskId: job.id, configId, subject: 'someone', wire: '1.0', config: { ...target, url } });
        for (let i = 0; i < 10; i += 1) assert.equal(await store.pushConfigs.put(row(`c${i}`), 10), true);
        assert.equal(await store.pushConfigs.put(row('c10'), 10), false, 'the eleventh');
        assert.equal(await store.pushConfigs.put(row('c3', 'https://127.0.0.1:9/other'), 10), true, 'a replacement is not one more');
        assert.equal((await store.pushConfigs.read(job.id, 'c3'))?.config.url, 'https://127.0.0.1:9/other');
        assert.equal((await store.pushConfigs.list(job.id)).length, 10);
        assert.equal(await store.pushConfigs.delete(job.id, 'c3'), true);
        assert.equal(await store.pushConfigs.delete(job.id, 'c3'), false);
        assert.equal((await store.pushConfigs.list(job.id)).length, 9);
      } finally {
        await store.close();
      }
    });

    it('is due at each point that asks for input and at the end, claimed once, retried after its backoff, settled by the end', async () => {
      const store = await openTestStore(engine);
      try {
        const job = await runningJob(store);
        const dueOf = async (configId: string) => (await store.pushConfigs.due(10)).filter((due) => due.configId === configId);
        for (const configId of ['hook', 'held']) await store.pushConfigs.put({ taskId: job.id, configId, subject: 'someone', wire: '1.0', config: target }, 10);
        await job.append('run.started');
        assert.deepEqual(await store.pushConfigs.due(10), [], 'working: nothing to tell');
        await job.append('approval.requested', { approval: {} });
        const [asked] = await dueOf('hook');
        assert.equal(asked?.point, '2');
        assert.equal(await store.pushConfigs.claim(asked!, 60_000), true);
        assert.equal(await store.pushConfigs.claim(asked!, 60_000), false, 'held by the lease');
        assert.deepEqual(await dueOf('hook'), []);
        await store.pushConfigs.failed(asked!, Date.now() - 1);
        const [again] = await dueOf('hook');
        assert.equal(again?.attempts, 1, 'due again once its retry time passed');
        assert.equal(await store.pushConfigs.claim(again!, 60_000), true);
        await store.pushConfigs.delivered(again!);
        assert.deepEqual(await dueOf('hook'), [], 'told of this point');
        const [held] = await dueOf('held');
        assert.equal(await store.pushConfigs.claim(held!, 60_000), true);
        await store.pushConfigs.failed(held!, Date.now() + 3_600_000);
        assert.deepEqual(await dueOf('held'), [], 'held off until its retry time');
        await job.append('approval.resolved', { resolution: {} });
        await job.append('run.completed', { result: { text: 'done' } });
        const [ended] = await dueOf('hook');
        assert.equal(ended?.point, '4:end');
        assert.equal(ended?.attempts, 0);
        assert.equal(await store.pushConfigs.claim(ended!, 60_000), true);
        await store.pushConfigs.delivered(ended!);
        assert.deepEqual(await dueOf('hook'), [], 'settled for good');
      } finally {
        await store.close();
      }
    });
  });
}

describe('A2A push-notification deliveries between PostgreSQL replicas', () => {
  it('lets exactly one replica claim a due delivery, and the other take it once the lease lapsed', async () => {
    const database = await freshDatabase();
    const a = await openPostgresStore(database.url);
    const b = await openPostgresStore(database.url);
    try {
      const job = await runningJob(a);
      await b.pushConfigs.put({ taskId: job.id, configId: 'hook', subject: 'someone', wire: '0.3', config: target }, 10);
      await job.append('run.completed', { result: { text: 'done' } });
      const [onA] = await a.pushConfigs.due(10);
      const [onB] = await b.pushConfigs.due(10);
      assert.deepEqual(await Promise.all([a.pushConfigs.claim(onA!, 60_000), b.pushConfigs.claim(onB!, 60_000)]).then((claims) => claims.sort()), [false, true]);
      // A lease that lapsed (its replica died mid-delivery) is due again, to anyone.
      const [lapsed] = await a.pushConfigs.due(10);
      assert.equal(lapsed, undefined);
      const c = await openPostgresStore(database.url);
      try {
        await c.pushConfigs.put({ taskId: job.id, configId: 'short', subject: 'someone', wire: '1.0', config: target }, 10);
        const [short] = (await c.pushConfigs.due(10)).filter((due) => due.configId === 'short');
        assert.equal(await c.pushConfigs.claim(short!, 1), true);
        await new Promise((resolve) => setTimeout(resolve, 5));
        const [retaken] = (await a.pushConfigs.due(10)).filter((due) => due.configId === 'short');
        assert.equal(await a.pushConfigs.claim(retaken!, 60_000), true, 'taken over after the lease');
        await a.pushConfigs.delivered(retaken!);
        await c.pushConfigs.delivered(short!);
        assert.equal((await a.pushConfigs.due(10)).filter((due) => due.configId === 'short').length, 0);
      } finally {
        await c.close();
      }
    } finally {
      await b.close();
      await a.close();
      await database.drop();
    }
  });
});
