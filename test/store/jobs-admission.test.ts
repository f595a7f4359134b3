/**
 * Background runs (durable jobs) under the same admission caps as connected runs, on every
 * store engine: with one run per subject, a subject's second job stays queued (holding no
 * worker) while its first runs, its connected run is refused BUSY meanwhile, another subject's
 * job is not held up, and once the first ends the queued one runs. Every run of both modes is
 * counted once by the host and recorded once in the usage records.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { HostTool } from '../../src/runtime/tools.js';
import type { StateStore } from '../../src/store/store.js';
import { OTHER_TOKEN, script, startTestHost, type TestHost } from '../support/host.js';
import { ENGINES, openTestStore } from '../support/stores.js';

const TERMINAL = ['completed', 'failed', 'cancelled', 'interrupted'];

for (const engine of ENGINES) {
  describe(`background runs under admission (${engine})`, () => {
    const hosts: TestHost[] = [];
    after(async () => {
      for (const host of hosts) await host.close();
    });

    /** A tool that holds its run until the test opens it: the fence that keeps the first job running. */
    function gate() {
      let entered!: () => void;
      let open!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const opened = new Promise<void>((resolve) => (open = resolve));
      const tool: HostTool = {
        name: 'gate',
        description: 'Waits until the test opens it.',
        inputSchema: { type: 'object' },
        execute: async () => {
          entered();
          await opened;
          return { opened: true };
        },
      };
      return { tool, inside, open };
    }

    async function start(store: StateStore, tool: HostTool): Promise<TestHost> {
      const host = await startTestHost(
        {
          tokens: [
            { id: 'main', subject: 'capped-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['gate'], jobs: ['submit', 'read'] },
            { id: 'other', subject: 'another-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], jobs: ['submit', 'read'] },
          ],
          limits: { maxConcurrentRunsPerSubject: 1 },
          // A long poll interval: what wakes the workers here is a freed slot or a submission, not the timer.
          jobs: { retentionMs: 60_000, pollIntervalMs: 60_000 },
        },
        { tools: [tool], store },
      );
      hosts.push(host);
      return host;
    }

    const post = async (host: TestHost, path: string, body: unknown, token?: string) => {
      const response = await fetch(`${host.url}${path}`, { method: 'POST', headers: { ...host.headers(), ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string } } };
    };
    async function finished(host: TestHost, id: string, token?: string): Promise<Record<string, unknown>> {
      for (;;) {
        const { body } = await post(host, '/v1/jobs/read', { id }, token);
        if (TERMINAL.includes(body.state as string)) return body;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    const text = (value: string) => ({ provider: 'mock', model: 'demo', input: script([{ text: value }]) });

    it('keeps a capped subject’s second job queued, refuses its connected run, lets another subject through, then runs it', async () => {
      const store = await openTestStore(engine);
      const fence = gate();
      const host = await start(store, fence.tool);
      const before = { ...host.metrics.runs };

      const first = await post(host, '/v1/jobs/submit', { key: 'first', request: { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'gate', arguments: {} } }], [{ text: 'first done' }]), tools: ['gate'] } });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      await fence.inside;

      const second = await post(host, '/v1/jobs/submit', { key: 'second', request: text('second done') });
      assert.equal(second.status, 200, JSON.stringify(second.body));
      // Another subject's job, submitted after it, runs to the end: the workers looked at the queue and passed the capped subject by.
      const other = await post(host, '/v1/jobs/submit', { key: 'other', request: text('other done') }, OTHER_TOKEN);
      assert.equal((await finished(host, other.body.id as string, OTHER_TOKEN)).state, 'completed');
      assert.equal((await post(host, '/v1/jobs/read', { id: second.body.id })).body.state, 'queued', 'the capped subject’s second job waits, holding no worker');

      const connected = await post(host, '/v1/runs', text('connected'));
      assert.deepEqual([connected.status, connected.body.error?.code], [429, 'BUSY'], 'the job holds the subject’s one slot');

      fence.open();
      assert.equal((await finished(host, first.body.id as string)).state, 'completed');
      assert.equal((await finished(host, second.body.id as string)).state, 'completed', 'the freed slot woke the workers');
      const later = await post(host, '/v1/runs', text('connected later'));
      assert.equal(later.status, 200, JSON.stringify(later.body));

      assert.equal(host.metrics.runs.completed - before.completed, 4, 'three jobs and one connected run, each counted once');
      const runIds = [first, second, other].map((job) => job.body.runId as string);
      // Usage records are written after the terminal event: wait for the fourth (the test's timeout bounds the wait).
      let records: string[] = [];
      for (;;) {
        records = (await store.usage.finished({ limit: 100 })).records.map((record) => record.runId);
        if (records.length >= 4) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(records.length, 4, JSON.stringify(records));
      assert.equal(new Set(records).size, 4, 'one usage record per run');
      for (const runId of runIds) assert.ok(records.includes(runId), `${runId} has its usage record`);
    });

    it('gives a claimed job back to the queue as it was, or cancelled when a cancel came meanwhile', async () => {
      const store = await openTestStore(engine);
      try {
        const submit = (key: string) =>
          store.jobs.submit({ subject: 'capped-user', key, fingerprint: key, tokenId: 'main', request: text(key) as never, retentionMs: 60_000, maxJobs: 10, maxJobsPerSubject: 10 });
        const { job } = await submit('a');
        assert.equal(await store.jobs.claim(['capped-user']), undefined, 'a skipped subject is not claimed');
        const claimed = await store.jobs.claim();
        assert.equal(claimed?.info.id, job.info.id);
        await store.jobs.requeue(job.info.id);
        assert.deepEqual([(await store.jobs.read(job.info.id))?.info.state, await store.jobs.queued()], ['queued', 1]);
        assert.equal((await store.jobs.claim())?.info.id, job.info.id, 'claimable again');
        await store.jobs.cancel(job.info.id); // running: flagged for its owner
        await store.jobs.requeue(job.info.id);
        const cancelled = await store.jobs.read(job.info.id);
        assert.deepEqual([cancelled?.info.state, cancelled?.info.cursor], ['cancelled', 2]);
        assert.deepEqual((await store.jobs.events(job.info.id, 0, 10, 1_000_000)).map((event) => event.type), ['run.started', 'run.cancelled']);
      } finally {
        await store.close();
      }
    });
  });
}
