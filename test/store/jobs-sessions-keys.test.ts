/**
 * Background runs with a session or an idempotency key (feature `interactive-jobs`), over real
 * HTTP on every store engine: a job is a turn of its session under the same turn rules as an
 * attached run (history in, the exchange appended once, one turn at a time, also while the job
 * waits for a person), and a job's run is recorded under its idempotency key as an attached
 * run's is (a later run of either mode replays it, a different request conflicts, a run still
 * in progress — waiting included — is refused as for attached runs). With the feature off, both
 * are refused as before. Every wait is fenced on the store or on a finished job, never on time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HostTool } from '../../src/runtime/tools.js';
import type { StateStore } from '../../src/store/store.js';
import { parseSse, script, startTestHost, type TestHost } from '../support/host.js';
import { ENGINES, openTestStore } from '../support/stores.js';
import { startChatCompletionsServer, type VendorServer } from '../vendors/index.js';

const TERMINAL = ['completed', 'failed', 'cancelled', 'interrupted'];
const VENDOR_KEY = 'vendor-key-for-job-session-tests';
type Body = Record<string, any>;
type Event = Record<string, any> & { type: string; sequence: number };

for (const engine of ENGINES) {
  describe(`background runs with a session or an idempotency key (${engine})`, () => {
    const hosts: TestHost[] = [];
    let vendor: VendorServer;
    let executions = 0;
    const guarded: HostTool = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => `executed ${++executions}` };
    before(async () => {
      vendor = await startChatCompletionsServer({ apiKey: VENDOR_KEY, models: ['m'] });
    });
    after(async () => {
      for (const host of hosts) await host.close().catch(() => undefined);
      await vendor.close();
    });

    async function start(store: StateStore, jobs: Record<string, unknown> = { interactive: true }): Promise<TestHost> {
      const host = await startTestHost(
        {
          providers: [
            { kind: 'mock', id: 'mock', models: ['demo'] },
            { kind: 'openai-compatible', id: 'vendor', models: ['m'], baseUrl: vendor.url, apiKeyRef: { env: 'AD_VENDOR_KEY' } },
          ],
          tokens: [
            {
              id: 'main',
              subject: 'job-user',
              tokenRef: { env: 'AD_TEST_TOKEN' },
              providers: ['mock', 'vendor'],
              tools: ['guarded'],
              approveTools: ['guarded'],
              sessions: ['create', 'read', 'continue'],
              jobs: ['submit', 'read', 'cancel'],
            },
          ],
          approvals: { interactive: true },
          sessions: { retentionMs: 60_000 },
          // One run at a time, one worker: a waiting job holding either would block the rest.
          limits: { maxConcurrentRuns: 1 },
          jobs: { retentionMs: 60_000, workers: 1, pollIntervalMs: 60_000, ...jobs },
        },
        { tools: [guarded], store, env: { ...process.env, AD_TEST_TOKEN: 'test-token-0123456789abcdefghijklmnop', AD_VENDOR_KEY: VENDOR_KEY } },
      );
      hosts.push(host);
      return host;
    }
    const post = async (host: TestHost, path: string, body: unknown): Promise<{ status: number; body: Body }> => {
      const response = await host.post(path, body);
      return { status: response.status, body: (await response.json()) as Body };
    };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    async function waiting(store: StateStore, count = 1): Promise<void> {
      while ((await store.checkpoints.waiting()) < count) await sleep(10);
    }
    async function finished(host: TestHost, id: string): Promise<Body> {
      for (;;) {
        const { body } = await post(host, '/v1/jobs/read', { id });
        if (TERMINAL.includes(body.state as string)) return body;
        await sleep(10);
      }
    }
    async function events(host: TestHost, id: string): Promise<Event[]> {
      const all: Event[] = [];
      for (let after = 0; ; ) {
        const { body } = await post(host, '/v1/jobs/events', { id, after });
        all.push(...(body.events as Event[]));
        after = body.nextCursor as number;
        if (!body.hasMore) return all;
      }
    }
    async function submitted(host: TestHost, key: string, request: Record<string, unknown>): Promise<string> {
      const job = await post(host, '/v1/jobs/submit', { key, request });
      assert.equal(job.status, 200, JSON.stringify(job.body));
      return job.body.id as string;
    }
    const reviewed = { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'guarded', arguments: {}, id: 'g1' } }], [{ echoToolResults: true }]), tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } };
    async function approve(host: TestHost, id: string, decision = 'approve'): Promise<void> {
      const requested = (await events(host, id)).find((event) => event.type === 'approval.requested');
      assert.ok(requested, 'the job asked for approval');
      const { approvalId, runId, call } = requested.approval as Body;
      const decided = await post(host, '/v1/approvals/decisions', { approvalId, runId, call, decision });
      assert.equal(decided.status, 200, JSON.stringify(decided.body));
    }
    const session = async (host: TestHost, id: string) => (await post(host, '/v1/sessions/read', { id })).body;

    it('with the feature off, refuses a session or an idempotency key as before', async () => {
      const host = await start(await openTestStore(engine), {});
      for (const extra of [{ session: { id: '00000000-0000-4000-8000-000000000000', revision: 0 } }, { idempotencyKey: 'k' }]) {
        const refused = await post(host, '/v1/jobs/submit', { key: 'off', request: { provider: 'mock', model: 'demo', input: 'x', ...extra } });
        assert.deepEqual([refused.status, refused.body.error?.code], [400, 'JOB_REQUEST_UNSUPPORTED']);
        assert.match(refused.body.error.message as string, /nobody is connected to answer for it/);
      }
    });

    it('a job is a turn of its session: history in, the exchange appended, a stale or second turn refused as for attached runs', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      const created = await post(host, '/v1/sessions/create', { provider: 'vendor', model: 'm', mode: 'history', history: [{ role: 'user', content: 'I am Ada.' }, { role: 'assistant', content: 'Hello Ada.' }] });
      const sessionId = created.body.session.id as string;
      vendor.push({ turn: { text: 'You are Ada.' } });
      const id = await submitted(host, 'turn-1', { provider: 'vendor', model: 'm', input: 'Who am I?', session: { id: sessionId, revision: 0 } });
      assert.equal((await finished(host, id)).state, 'completed');
      const last = (await events(host, id)).at(-1)!;
      assert.deepEqual([last.result.text, last.result.session.id, last.result.session.revision, last.result.session.state], ['You are Ada.', sessionId, 1, 'ready']);
      assert.deepEqual(
        vendor.generations.at(-1)!.body.messages.map((message: { content: string }) => message.content),
        ['I am Ada.', 'Hello Ada.', 'Who am I?'],
        'the session history went to the provider',
      );
      assert.deepEqual(
        (await session(host, sessionId)).history.map((message: { content: string }) => message.content),
        ['I am Ada.', 'Hello Ada.', 'Who am I?', 'You are Ada.'],
      );

      // The same refusals as an attached turn: a stale revision (checked when the job starts), a request carrying history (when it is submitted).
      const stale = await submitted(host, 'turn-stale', { provider: 'vendor', model: 'm', input: 'again', session: { id: sessionId, revision: 0 } });
      assert.equal((await finished(host, stale)).state, 'failed');
      assert.equal((await events(host, stale)).at(-1)!.error.code, 'SESSION_REVISION_CONFLICT');
      const attachedStale = await post(host, '/v1/runs', { provider: 'vendor', model: 'm', input: 'again', session: { id: sessionId, revision: 0 } });
      assert.deepEqual([attachedStale.status, attachedStale.body.error.code], [409, 'SESSION_REVISION_CONFLICT']);
      const withHistory = await post(host, '/v1/jobs/submit', { key: 'turn-history', request: { provider: 'vendor', model: 'm', input: 'x', history: [], session: { id: sessionId, revision: 1 } } });
      assert.equal(withHistory.body.error?.code, 'SESSION_HISTORY_CONFLICT');
      assert.equal((await session(host, sessionId)).session.revision, 1, 'nothing was appended by the refused turns');
    });

    it('a session turn that waits for approval keeps the turn (a concurrent turn is SESSION_BUSY) and, approved, completes it', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      executions = 0;
      const sessionId = (await post(host, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history' })).body.session.id as string;
      const id = await submitted(host, 'waits', { ...reviewed, session: { id: sessionId, revision: 0 } });
      await waiting(store);
      assert.equal((await session(host, sessionId)).session.state, 'running', 'the waiting job holds the turn');

      const attached = await post(host, '/v1/runs', { provider: 'mock', model: 'demo', input: 'meanwhile', session: { id: sessionId, revision: 0 } });
      assert.deepEqual([attached.status, attached.body.error?.code], [409, 'SESSION_BUSY']);
      const second = await submitted(host, 'meanwhile', { provider: 'mock', model: 'demo', input: 'meanwhile', session: { id: sessionId, revision: 0 } });
      assert.equal((await finished(host, second)).state, 'failed');
      assert.deepEqual((await events(host, second)).at(-1)!.error, { code: 'SESSION_BUSY', message: 'A turn of this session is running.', retryable: true });

      await approve(host, id);
      assert.equal((await finished(host, id)).state, 'completed');
      const seen = await events(host, id);
      assert.deepEqual(seen.map((event) => event.sequence), seen.map((_, index) => index + 1));
      assert.deepEqual([seen.at(-1)!.result.text, seen.at(-1)!.result.session.revision], ['["executed 1"]', 1]);
      const after = await session(host, sessionId);
      assert.deepEqual([after.session.revision, after.session.state], [1, 'ready']);
      assert.deepEqual(after.history, [{ role: 'user', content: reviewed.input }, { role: 'assistant', content: '["executed 1"]' }], 'the turn appended once');
      assert.equal(executions, 1);
    });

    it('a session turn cancelled while it waits ends as an attached turn cancelled after the model was asked: the session is interrupted', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      const sessionId = (await post(host, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history' })).body.session.id as string;
      const id = await submitted(host, 'cancelled', { ...reviewed, session: { id: sessionId, revision: 0 } });
      await waiting(store);
      await post(host, '/v1/jobs/cancel', { id });
      assert.equal((await finished(host, id)).state, 'cancelled');
      const after = await session(host, sessionId);
      assert.deepEqual([after.session.state, after.session.revision, after.history], ['interrupted', 0, []]);
    });

    it('a job’s run is recorded under its idempotency key: an attached run replays it, a different request conflicts', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      const request = { provider: 'vendor', model: 'm', input: 'keyed job', idempotencyKey: 'key-1' };
      vendor.push({ turn: { text: 'the job answered' } });
      const id = await submitted(host, 'keyed', request);
      assert.equal((await finished(host, id)).state, 'completed');
      const calls = vendor.generations.length;
      const replay = await post(host, '/v1/runs', request);
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      assert.equal(replay.body.text, 'the job answered', 'the job’s run, replayed');
      assert.equal((await post(host, '/v1/runs', request)).body.runId, replay.body.runId, 'every replay is the one recorded run');

      const different = { ...request, input: 'another request' };
      const attached = await post(host, '/v1/runs', different);
      assert.deepEqual([attached.status, attached.body.error?.code], [409, 'IDEMPOTENCY_CONFLICT']);
      const job = await post(host, '/v1/jobs/submit', { key: 'keyed-different', request: different });
      assert.deepEqual([job.status, job.body.error?.code], [409, 'IDEMPOTENCY_CONFLICT']);
      const resubmitted = await post(host, '/v1/jobs/submit', { key: 'keyed', request });
      assert.deepEqual([resubmitted.status, resubmitted.body.id], [200, id], 'the job’s own key still returns the job');

      // An attached run first, then a job with its key: the job's log is the replay (the recorded run, no model call).
      vendor.push({ turn: { text: 'the attached run answered' } });
      const firstRequest = { ...request, idempotencyKey: 'key-2' };
      const first = await post(host, '/v1/runs', firstRequest);
      assert.equal(first.status, 200);
      const replayed = await submitted(host, 'replays', firstRequest);
      assert.equal((await finished(host, replayed)).state, 'completed');
      const log = await events(host, replayed);
      assert.deepEqual([log.at(-1)!.runId, log.at(-1)!.result.text], [first.body.runId, 'the attached run answered']);
      assert.equal(vendor.generations.length, calls + 1, 'only the attached run asked the model');
    });

    it('a key held by a job waiting for a person is in progress: refused as for attached runs until the job ends, then replayed', async () => {
      const store = await openTestStore(engine);
      const host = await start(store);
      executions = 0;
      const request = { ...reviewed, idempotencyKey: 'key-waits' };
      const id = await submitted(host, 'keyed-waits', request);
      await waiting(store);
      // Interactive approvals need a stream: the attached runs with this request are SSE runs.
      const streamed = (body: unknown) => host.post('/v1/runs', body, { accept: 'text/event-stream' });
      const meanwhile = await streamed(request);
      const refusal = (await meanwhile.json()) as Body;
      assert.deepEqual([meanwhile.status, refusal.error?.code, refusal.error?.retryable], [409, 'OPERATION_IN_PROGRESS', true]);
      const second = await submitted(host, 'keyed-waits-2', request);
      assert.equal((await finished(host, second)).state, 'failed');
      assert.equal((await events(host, second)).at(-1)!.error.code, 'OPERATION_IN_PROGRESS');

      await approve(host, id);
      const done = await finished(host, id);
      assert.equal(done.state, 'completed');
      const replay = parseSse(await (await streamed(request)).text());
      assert.deepEqual(
        replay.filter((event) => event.type !== 'text.delta').map((event) => event.type),
        ['run.started', 'step.started', 'tool.called', 'tool.completed', 'step.started', 'run.completed'],
        'replayed without asking anyone again',
      );
      assert.equal((replay.at(-1)!.result as Body).text, '["executed 1"]');
      assert.equal(executions, 1, 'the replay ran nothing');
    });
  });
}
