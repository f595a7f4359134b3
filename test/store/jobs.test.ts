/**
 * Durable jobs over real HTTP on every store engine: submission deduplicated per subject and
 * key, events committed before the tool runs, pages and the live stream resumed with
 * Last-Event-ID, cancel, ownership by subject, grants, unsupported requests, retention.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { HostTool } from '../../src/runtime/tools.js';
import type { StateStore } from '../../src/store/store.js';
import { OTHER_TOKEN, script, sseEvents, startTestHost, type TestHost } from '../support/host.js';
import { ENGINES, openTestStore } from '../support/stores.js';

const TERMINAL = ['completed', 'failed', 'cancelled', 'interrupted'];

for (const engine of ENGINES) {
  describe(`durable jobs (${engine})`, () => {
    const hosts: TestHost[] = [];
    let store: StateStore;
    let committedBeforeRun: string[] = [];
    let effects = 0;
    const effect: HostTool = {
      name: 'effect',
      description: 'Records a side effect.',
      inputSchema: { type: 'object' },
      execute: async (_input, context) => {
        // What the job's log holds at the moment the tool runs (the job may start before submit answers).
        while (!jobIds.has(context.runId)) await new Promise((resolve) => setTimeout(resolve, 5));
        const job = (await store.jobs.events(jobIds.get(context.runId)!, 0, 100, 1_500_000)).map((event) => event.type);
        committedBeforeRun = job;
        effects += 1;
        return { effects };
      },
    };
    const jobIds = new Map<string, string>();
    after(async () => {
      for (const host of hosts) await host.close();
    });
    async function host(overrides: Record<string, unknown> = {}): Promise<TestHost> {
      store = await openTestStore(engine);
      const started = await startTestHost(
        {
          tokens: [
            { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['effect'], jobs: ['submit', 'read', 'cancel'] },
            { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'], jobs: ['read'] },
            { id: 'other', subject: 'another-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], tools: ['effect'], jobs: ['submit', 'read', 'cancel'] },
          ],
          jobs: { retentionMs: 60_000, pollIntervalMs: 20 },
          ...overrides,
        },
        { tools: [effect], store },
      );
      hosts.push(started);
      return started;
    }
    const post = async (h: TestHost, path: string, body: unknown, token?: string) => {
      const response = await fetch(`${h.url}${path}`, { method: 'POST', headers: { ...h.headers(), ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string } } };
    };
    async function finished(h: TestHost, id: string): Promise<Record<string, unknown>> {
      for (;;) {
        const { body } = await post(h, '/v1/jobs/read', { id });
        if (TERMINAL.includes(body.state as string)) return body;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    const effectJob = (text = 'done') => ({ provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'effect', arguments: {} } }], [{ text }]), tools: ['effect'] });

    it('runs a job once per key, commits tool.called before the tool runs, and pages its events', async () => {
      const h = await host();
      effects = 0;
      const submitted = await post(h, '/v1/jobs/submit', { key: 'report-1', request: effectJob() });
      assert.equal(submitted.status, 200, JSON.stringify(submitted.body));
      jobIds.set(submitted.body.runId as string, submitted.body.id as string);
      const job = await finished(h, submitted.body.id as string);
      assert.equal(job.state, 'completed');
      assert.ok(typeof job.expiresAt === 'string');
      assert.deepEqual(committedBeforeRun, ['run.started', 'step.started', 'tool.called']);
      const again = await post(h, '/v1/jobs/submit', { key: 'report-1', request: effectJob() });
      assert.equal(again.body.id, submitted.body.id);
      assert.equal(effects, 1, 'the same key never runs twice');
      const conflict = await post(h, '/v1/jobs/submit', { key: 'report-1', request: effectJob('other') });
      assert.deepEqual([conflict.status, conflict.body.error?.code], [409, 'IDEMPOTENCY_CONFLICT']);

      const events: Record<string, unknown>[] = [];
      for (let cursor = 0, more = true; more; ) {
        const page = await post(h, '/v1/jobs/events', { id: job.id, after: cursor, limit: 2 });
        events.push(...(page.body.events as Record<string, unknown>[]));
        cursor = page.body.nextCursor as number;
        more = page.body.hasMore as boolean;
      }
      assert.deepEqual(events.map((event) => event.sequence), Array.from({ length: job.cursor as number }, (_, index) => index + 1));
      assert.equal(events.at(-1)!.type, 'run.completed');
      const atCursor = await post(h, '/v1/jobs/events', { id: job.id, after: job.cursor });
      assert.deepEqual([atCursor.status, (atCursor.body.events as unknown[]).length, atCursor.body.hasMore], [200, 0, false]);
      const past = await post(h, '/v1/jobs/events', { id: job.id, after: (job.cursor as number) + 1 });
      assert.deepEqual([past.status, past.body.error?.code], [400, 'INVALID_JOB_CURSOR']);
    });

    it('streams committed events live and resumes after Last-Event-ID with no gap and no duplicate', async () => {
      const h = await host();
      const slow = { provider: 'mock', model: 'demo', input: script([{ text: 'one ' }, { stallMs: 150 }, { text: 'two ' }, { stallMs: 150 }, { text: 'three' }]) };
      const { body: job } = await post(h, '/v1/jobs/submit', { key: 'live-1', request: slow });
      const first = await fetch(`${h.url}/v1/jobs/${job.id as string}/stream`, { headers: h.headers() });
      assert.equal(first.status, 200);
      const seen: Record<string, unknown>[] = [];
      const reader = sseEvents(first);
      for (let next = await reader.next(); !next.done; next = await reader.next()) {
        seen.push(next.value);
        if (seen.length === 3) break; // the connection drops here
      }
      await reader.return(undefined);
      const resumed = await fetch(`${h.url}/v1/jobs/${job.id as string}/stream`, { headers: { ...h.headers(), 'last-event-id': String(seen.at(-1)!.sequence) } });
      for await (const event of sseEvents(resumed)) seen.push(event);
      assert.deepEqual(seen.map((event) => event.sequence), Array.from({ length: seen.length }, (_, index) => index + 1));
      assert.equal(seen.at(-1)!.type, 'run.completed');
      assert.equal(((seen.at(-1)!.result as { text: string }).text), 'one two three');
      const bad = await fetch(`${h.url}/v1/jobs/${job.id as string}/stream`, { headers: { ...h.headers(), 'last-event-id': '999' } });
      assert.equal(bad.status, 400);
    });

    it('cancels a queued job at once and a running one at its next step; a finished job is returned unchanged', async () => {
      const h = await host({ jobs: { retentionMs: 60_000, pollIntervalMs: 20, workers: 1 } });
      const hang = { provider: 'mock', model: 'demo', input: script([{ text: 'working' }, { hang: true }]) };
      const { body: running } = await post(h, '/v1/jobs/submit', { key: 'hang-1', request: hang });
      const { body: queued } = await post(h, '/v1/jobs/submit', { key: 'hang-2', request: hang });
      for (let state = ''; state !== 'running'; ) state = (await post(h, '/v1/jobs/read', { id: running.id })).body.state as string;
      const cancelledQueued = await post(h, '/v1/jobs/cancel', { id: queued.id });
      assert.deepEqual([cancelledQueued.body.state, cancelledQueued.body.cursor], ['cancelled', 2]);
      const flagged = await post(h, '/v1/jobs/cancel', { id: running.id });
      assert.equal(flagged.body.cancelRequested, true);
      const done = await finished(h, running.id as string);
      assert.equal(done.state, 'cancelled');
      const unchanged = await post(h, '/v1/jobs/cancel', { id: running.id });
      assert.equal(unchanged.body.state, 'cancelled');
    });

    it('belongs to its subject, checks grants on every call, and refuses what needs a connected caller', async () => {
      const h = await host();
      const { body: job } = await post(h, '/v1/jobs/submit', { key: 'mine-1', request: { provider: 'mock', model: 'demo', input: 'hi' } });
      for (const path of ['/v1/jobs/read', '/v1/jobs/cancel']) {
        const other = await post(h, path, { id: job.id }, OTHER_TOKEN);
        assert.deepEqual([other.status, other.body.error?.code], [404, 'JOB_NOT_FOUND']);
      }
      const foreignEvents = await post(h, '/v1/jobs/events', { id: job.id, after: 0 }, OTHER_TOKEN);
      assert.equal(foreignEvents.body.error?.code, 'JOB_NOT_FOUND');
      const noGrant = await post(h, '/v1/jobs/submit', { key: 'x', request: { provider: 'mock', model: 'demo', input: 'hi' } }, 'restricted-token-0123456789abcdefghij');
      assert.deepEqual([noGrant.status, noGrant.body.error?.code], [403, 'FORBIDDEN']);
      for (const extra of [
        { idempotencyKey: 'k' },
        { approvals: { mode: 'interactive', idlePolicy: 'pause' } },
        { session: { id: '12345678-1234-4234-8234-123456789abc', revision: 0 } },
      ]) {
        const refused = await post(h, '/v1/jobs/submit', { key: 'bad', request: { provider: 'mock', model: 'demo', input: 'hi', ...extra } });
        assert.deepEqual([refused.status, refused.body.error?.code], [400, 'JOB_REQUEST_UNSUPPORTED'], JSON.stringify(extra));
      }
      const invalid = await post(h, '/v1/jobs/read', { id: 'NOT-A-UUID' });
      assert.deepEqual([invalid.status, invalid.body.error?.code], [400, 'INVALID_JOB']);
    });

    it('1,000 concurrent submissions of one key make one job', async () => {
      const h = await host();
      const request = { provider: 'mock', model: 'demo', input: 'storm' };
      const answers = await Promise.all(Array.from({ length: 1000 }, () => post(h, '/v1/jobs/submit', { key: 'storm-1', request })));
      assert.ok(answers.every((answer) => answer.status === 200), JSON.stringify(answers.find((answer) => answer.status !== 200)));
      assert.equal(new Set(answers.map((answer) => answer.body.id)).size, 1);
    });

    it('erases a finished job after its retention: reads and resubmissions get JOB_EXPIRED, never a new run', async () => {
      const h = await host({ jobs: { retentionMs: 1000, pollIntervalMs: 20 } });
      const request = { provider: 'mock', model: 'demo', input: 'short-lived' };
      const { body: job } = await post(h, '/v1/jobs/submit', { key: 'brief-1', request });
      await finished(h, job.id as string);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await store.jobs.expire();
      const read = await post(h, '/v1/jobs/read', { id: job.id });
      assert.deepEqual([read.status, read.body.error?.code], [410, 'JOB_EXPIRED']);
      const again = await post(h, '/v1/jobs/submit', { key: 'brief-1', request });
      assert.deepEqual([again.status, again.body.error?.code], [410, 'JOB_EXPIRED']);
    });
  });
}
