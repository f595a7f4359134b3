/**
 * Run records over real HTTP on every store engine: an attached run (completed, failed,
 * cancelled by its client's disconnect) and a background run read back by run id; pages of
 * events; the follow stream resumed with Last-Event-ID; another subject's run is 404; the
 * retention sweep and the reaping of a dead replica's recorded run, on a store clock the test moves.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { parseHostConfig } from '../../src/host/config.js';
import { startHost, type RunningHost } from '../../src/host/index.js';
import { follow as followRecord } from '../../src/extensions/run-records/follow.js';
import { SqlStateStore } from '../../src/store/sql/sql-store.js';
import { join } from 'node:path';
import { openSqliteEngine, SQLITE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import type { RunEvent } from '../../src/protocol/schemas.js';
import type { StateStore } from '../../src/store/store.js';
import { OTHER_TOKEN, script, sseEvents, startTestHost, type TestHost } from '../support/host.js';
import { freshDatabase } from '../support/postgres.js';
import { CLI_MAIN, killAll, spawnHost } from '../support/processes.js';
import { ENGINES, openTestStore, type Engine } from '../support/stores.js';
import { tempDir } from '../support/temp.js';

const FINISHED = ['completed', 'failed', 'cancelled', 'interrupted'];

type Body = Record<string, unknown> & { error?: { code: string } };

for (const engine of ENGINES) {
  describe(`run records (${engine})`, () => {
    const hosts: TestHost[] = [];
    after(async () => {
      for (const host of hosts) await host.close();
    });
    async function host(): Promise<TestHost> {
      const store = await openTestStore(engine);
      const started = await startTestHost(
        {
          tokens: [
            { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], jobs: ['submit', 'read'] },
            { id: 'restricted', subject: 'test-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'] },
            { id: 'other', subject: 'another-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], jobs: ['submit', 'read'] },
          ],
          jobs: { retentionMs: 60_000, pollIntervalMs: 20 },
        },
        { store },
      );
      hosts.push(started);
      return started;
    }
    const post = async (h: TestHost, path: string, body: unknown, token?: string) => {
      const response = await fetch(`${h.url}${path}`, { method: 'POST', headers: { ...h.headers(), ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as Body };
    };
    const follow = (h: TestHost, runId: string, lastEventId?: string) =>
      fetch(`${h.url}/v1/runs/${runId}/stream`, { headers: { authorization: h.headers().authorization!, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) } });
    async function drain(response: Response): Promise<Record<string, unknown>[]> {
      const seen: Record<string, unknown>[] = [];
      for await (const event of sseEvents(response)) seen.push(event);
      return seen;
    }

    it('reads back a completed attached run: its state, result, usage and events, paged', async () => {
      const h = await host();
      const answer = await post(h, '/v1/runs', { provider: 'mock', model: 'demo', input: script([{ text: 'hello ' }, { text: 'world' }]) });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const runId = answer.body.runId as string;
      // The outcome is committed before the caller has it: no wait.
      const read = await post(h, '/v1/runs/read', { runId });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.equal(read.body.mode, 'attached');
      assert.equal(read.body.state, 'completed');
      assert.equal(read.body.jobId, undefined);
      assert.deepEqual(read.body.result, answer.body);
      assert.deepEqual(read.body.usage, answer.body.usage);
      assert.ok(Date.parse(read.body.expiresAt as string) > Date.parse(read.body.updatedAt as string));
      const cursor = read.body.cursor as number;
      assert.ok(cursor >= 4, `cursor ${cursor}`);

      const first = await post(h, '/v1/runs/events', { runId, after: 0, limit: 2 });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const events = first.body.events as RunEvent[];
      assert.deepEqual(events.map((event) => event.sequence), [1, 2]);
      assert.equal(events[0]!.type, 'run.started');
      assert.equal(events[0]!.runId, runId);
      assert.equal(first.body.nextCursor, 2);
      assert.equal(first.body.hasMore, true);
      const rest = await post(h, '/v1/runs/events', { runId, after: 2 });
      const all = [...events, ...(rest.body.events as RunEvent[])];
      assert.deepEqual(all.map((event) => event.sequence), Array.from({ length: cursor }, (_, index) => index + 1));
      assert.equal(all.at(-1)!.type, 'run.completed');
      assert.equal(rest.body.hasMore, false);
      assert.equal(rest.body.nextCursor, cursor);
      const text = all.filter((event) => event.type === 'text.delta').map((event) => (event as unknown as { text: string }).text).join('');
      assert.equal(text, 'hello world');

      const past = await post(h, '/v1/runs/events', { runId, after: cursor + 1 });
      assert.equal(past.status, 400);
      assert.equal(past.body.error?.code, 'INVALID_RUN_CURSOR');
      const invalid = await post(h, '/v1/runs/read', { runId: 'not-a-uuid' });
      assert.equal(invalid.status, 400);
      assert.equal(invalid.body.error?.code, 'INVALID_RUN_READ');
      const extra = await post(h, '/v1/runs/events', { runId, after: 0, limit: 0 });
      assert.equal(extra.body.error?.code, 'INVALID_RUN_CURSOR');
    });

    it('reads back a failed run with its error, and answers 404 for another subject and an unknown run', async () => {
      const h = await host();
      const failed = await post(h, '/v1/runs', { provider: 'mock', model: 'demo', input: script([{ error: { code: 'PROVIDER_ERROR', message: 'boom' } }]) });
      assert.equal(failed.body.error?.code, 'PROVIDER_ERROR');
      // The failed answer does not carry the run id: the stream's first event does.
      const streamed = await fetch(`${h.url}/v1/runs`, {
        method: 'POST',
        headers: h.headers({ accept: 'text/event-stream' }),
        body: JSON.stringify({ provider: 'mock', model: 'demo', input: script([{ error: { code: 'PROVIDER_ERROR', message: 'boom' } }]) }),
      });
      const sent = await drain(streamed);
      const runId = sent[0]!.runId as string;
      const read = await post(h, '/v1/runs/read', { runId });
      assert.equal(read.body.state, 'failed');
      assert.equal((read.body.error as { code: string }).code, 'PROVIDER_ERROR');
      assert.equal(read.body.result, undefined);
      const page = await post(h, '/v1/runs/events', { runId, after: 0 });
      assert.deepEqual(page.body.events, sent);

      const other = await post(h, '/v1/runs/read', { runId }, OTHER_TOKEN);
      assert.equal(other.status, 404);
      assert.equal(other.body.error?.code, 'RUN_NOT_FOUND');
      const otherEvents = await post(h, '/v1/runs/events', { runId, after: 0 }, OTHER_TOKEN);
      assert.equal(otherEvents.body.error?.code, 'RUN_NOT_FOUND');
      const otherStream = await fetch(`${h.url}/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${OTHER_TOKEN}` } });
      assert.equal(otherStream.status, 404);
      assert.equal(((await otherStream.json()) as Body).error?.code, 'RUN_NOT_FOUND');
      const unknown = await post(h, '/v1/runs/read', { runId: '00000000-0000-4000-8000-000000000000' });
      assert.equal(unknown.body.error?.code, 'RUN_NOT_FOUND');
    });

    it('records a run cancelled by its client going away, and its follower ends with run.cancelled', async () => {
      const h = await host();
      const client = new AbortController();
      const response = await fetch(`${h.url}/v1/runs`, {
        method: 'POST',
        headers: h.headers({ accept: 'text/event-stream' }),
        body: JSON.stringify({ provider: 'mock', model: 'demo', input: script([{ text: 'partial' }, { hang: true }]) }),
        signal: client.signal,
      });
      const stream = sseEvents(response);
      let runId = '';
      for await (const event of stream) {
        runId = event.runId as string;
        if (event.type === 'text.delta') break;
      }
      // A follower on the running run: it sees what was sent, then the cancel.
      const followed = drain(await follow(h, runId));
      client.abort();
      const events = await followed;
      assert.equal(events.at(-1)!.type, 'run.cancelled', JSON.stringify(events.at(-1)));
      assert.equal((events.at(-1)!.error as { code: string }).code, 'CANCELLED');
      assert.deepEqual(events.map((event) => event.sequence), events.map((_, index) => index + 1));
      const read = await post(h, '/v1/runs/read', { runId });
      assert.equal(read.body.state, 'cancelled');
      assert.equal((read.body.error as { code: string }).code, 'CANCELLED');
    });

    it('reads back and follows a background run, and resumes a follow after Last-Event-ID', async () => {
      const h = await host();
      const submitted = await post(h, '/v1/jobs/submit', { key: 'bg-1', request: { provider: 'mock', model: 'demo', input: script([{ text: 'a' }, { text: 'b' }]) } });
      assert.equal(submitted.status, 200, JSON.stringify(submitted.body));
      const runId = submitted.body.runId as string;
      const events = await drain(await follow(h, runId));
      assert.equal(events.at(-1)!.type, 'run.completed');
      const read = await post(h, '/v1/runs/read', { runId });
      assert.equal(read.body.mode, 'background');
      assert.equal(read.body.jobId, submitted.body.id);
      assert.equal(read.body.state, 'completed');
      assert.equal(read.body.cursor, events.length);
      assert.equal((read.body.result as { text: string }).text, 'ab');

      const resumed = await follow(h, runId, '2');
      assert.equal(resumed.status, 200);
      assert.deepEqual(await drain(resumed), events.slice(2));
      const past = await follow(h, runId, String(events.length + 1));
      assert.equal(past.status, 400);
      assert.equal(((await past.json()) as Body).error?.code, 'INVALID_RUN_CURSOR');
      const garbage = await follow(h, runId, '1e3');
      assert.equal(((await garbage.json()) as Body).error?.code, 'INVALID_RUN_CURSOR');
      // A token of the same subject without the `read` job grant reads attached runs, not jobs.
      const restricted = await post(h, '/v1/runs/read', { runId }, 'restricted-token-0123456789abcdefghij');
      assert.equal(restricted.status, 403);
      assert.equal(restricted.body.error?.code, 'FORBIDDEN');
    });

    it('reads back an idempotent run from its journal', async () => {
      const h = await host();
      const answer = await post(h, '/v1/runs', { provider: 'mock', model: 'demo', input: 'keyed', idempotencyKey: 'read-back-1' });
      const runId = answer.body.runId as string;
      const read = await post(h, '/v1/runs/read', { runId });
      assert.equal(read.body.state, 'completed');
      assert.deepEqual(read.body.result, answer.body);
      const page = await post(h, '/v1/runs/events', { runId, after: 0 });
      const events = page.body.events as RunEvent[];
      assert.equal(events[0]!.type, 'run.started');
      assert.equal(events.at(-1)!.type, 'run.completed');
      assert.ok(events.every((event, index) => event.runId === runId && event.sequence === index + 1 && typeof event.timestamp === 'string'));
    });

    it('erases a finished record after its retention, and closes a dead replica\'s recorded run as interrupted', async () => {
      let skew = 0;
      const opened = await openClockedStore(engine, () => Date.now() + skew);
      try {
        const store = opened.store;
        const base = { subject: 'test-user', provider: 'mock', model: 'demo', retentionMs: 60_000 };
        const event = (runId: string, sequence: number, type: string, extra: Record<string, unknown> = {}) =>
          ({ type, runId, sequence, timestamp: new Date().toISOString(), ...extra }) as RunEvent;
        const done = '11111111-1111-4111-8111-111111111111';
        const cut = '22222222-2222-4222-8222-222222222222';
        // This store never registers its replica: to the next one, its runs are owned by nobody alive.
        const recorded = (runId: string, written: RunEvent) =>
          new Promise<void>((resolve, reject) => store.runs.record({ ...base, runId, event: written }, (error) => (error === undefined ? resolve() : reject(error))));
        await Promise.all([
          recorded(done, event(done, 1, 'run.started', { provider: 'mock', model: 'demo' })),
          recorded(done, event(done, 2, 'run.cancelled', { error: { code: 'CANCELLED', message: 'x', retryable: false } })),
          recorded(cut, event(cut, 1, 'run.started', { provider: 'mock', model: 'demo' })),
        ]);
        assert.equal((await store.runs.read(done))?.state, 'cancelled');
        assert.equal(await store.runs.expire(), 0, 'within its retention');
        skew = 61_000;
        assert.equal(await store.runs.expire(), 1);
        assert.equal(await store.runs.read(done), undefined);
        assert.equal((await store.runs.events({ id: done, runId: done }, 0, 10, 1_000_000)).length, 0);
        assert.equal((await store.runs.read(cut))?.state, 'running', 'a running record is not erased');

        // Its replica is gone: the next start reaps it (on SQLite every other replica's work; on PostgreSQL lapsed leases).
        skew = 200_000;
        const report = await opened.reopen();
        assert.equal(report.records, 1);
        const cutRow = await opened.store.runs.read(cut);
        assert.equal(cutRow?.state, 'interrupted');
        const cutEvents = await opened.store.runs.events(cutRow!, 0, 10, 1_000_000);
        assert.deepEqual(cutEvents.map((item) => item.type), ['run.started', 'run.failed']);
        assert.equal((cutEvents[1] as { error: { code: string; outcome?: string } }).error.code, 'RUN_INTERRUPTED');
        assert.equal((cutEvents[1] as { error: { outcome?: string } }).error.outcome, 'uncertain');
        // Its follower gets both and ends at the terminal event.
        const followed: string[] = [];
        for await (const item of followRecord(opened.store, cutRow!, 0, new AbortController().signal)) followed.push(item.type);
        assert.deepEqual(followed, ['run.started', 'run.failed']);
      } finally {
        await opened.close();
      }
    });

    it('ends the follow of an idempotent run whose journal was cut off by its replica\'s death', async () => {
      let skew = 0;
      const opened = await openClockedStore(engine, () => Date.now() + skew);
      try {
        const runId = '33333333-3333-4333-8333-333333333333';
        const claim = { subject: 'test-user', key: 'cut-journal', fingerprint: 'f', runId, provider: 'mock', model: 'demo' };
        assert.deepEqual(await opened.store.operations.claim(claim), { claimed: true });
        await opened.store.operations.append('test-user', 'cut-journal', runId, { at: new Date().toISOString(), event: { type: 'run.started', provider: 'mock', model: 'demo' } }, { maxBytes: 1_000_000 });
        skew = 200_000;
        const report = await opened.reopen();
        assert.equal(report.operations, 1);
        const row = await opened.store.runs.read(runId);
        assert.deepEqual([row?.state, row?.keyed, row?.cursor], ['uncertain', true, 1]);
        // No terminal event will come: after a quiet interval the follower sees the record finished and ends.
        const followed: RunEvent[] = [];
        for await (const item of followRecord(opened.store, row!, 0, new AbortController().signal, 10)) followed.push(item);
        assert.deepEqual(followed.map((item) => [item.type, item.runId, item.sequence]), [['run.started', runId, 1]]);
      } finally {
        await opened.close();
      }
    });
  });
}

/**
 * A store on a clock the test moves, and `reopen`: a second store on the same database started as
 * a new replica (the first one's lease lapsed by then), returning what its start reaped.
 */
async function openClockedStore(engine: Engine, now: () => number): Promise<{ store: StateStore; reopen(): Promise<{ records: number; operations: number }>; close(): Promise<void> }> {
  const cleanups: (() => Promise<void>)[] = [];
  let open: () => Promise<SqlStateStore>;
  if (engine === 'sqlite') {
    const dir = tempDir('agenticdriver-records-');
    open = async () => SqlStateStore.open(openSqliteEngine(join(dir, SQLITE_FILE)), now);
  } else {
    const database = await freshDatabase();
    cleanups.push(database.drop);
    open = async () => SqlStateStore.open(await PostgresEngine.connect(database.url), now);
  }
  let store = await open();
  const stores = [store];
  return {
    get store() {
      return store;
    },
    reopen: async () => {
      const next = await open();
      stores.push(next);
      const report = await next.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
      // The first store stays silent: it never renews again (its lease has lapsed on the moved clock).
      store = next;
      return report;
    },
    close: async () => {
      for (const opened of stores.reverse()) await opened.close().catch(() => undefined);
      for (const cleanup of cleanups) await cleanup();
    },
  };
}

/**
 * Replica A (a host process) runs an attached run that waits for an application tool's result;
 * replica B (another host on the same PostgreSQL database) follows it while it runs. Each step
 * waits on an explicit fence: the event B has streamed, the result B accepted.
 */
describe('run records across replicas (postgres, real processes)', () => {
  const dir = tempDir('agenticdriver-records-replicas-');
  const children: ChildProcess[] = [];
  const hosts: RunningHost[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const token = 'records-token-0123456789abcdefghijklmno';
  const operatorToken = 'records-operator-0123456789abcdefghijk';
  after(async () => {
    killAll(children);
    for (const host of hosts) await host.close().catch(() => undefined);
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("follows from replica B an attached run that replica A runs, resumes it there, and reads it back; B's operator endpoints list, show and watch it", async () => {
    database = await freshDatabase();
    const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_RECORDS_TOKEN: token, AD_RECORDS_OPERATOR: operatorToken, AD_RECORDS_DB: database.url };
    const raw = {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [
        { id: 'main', subject: 'ops', tokenRef: { env: 'AD_RECORDS_TOKEN' }, providers: ['mock'], applicationTools: [{ name: 'lookup', requiresApproval: false }] },
        { id: 'console', subject: 'operator-1', tokenRef: { env: 'AD_RECORDS_OPERATOR' }, providers: [], operator: true },
      ],
      applicationTools: { enabled: true, requireApproval: false },
      state: { engine: 'postgres', urlRef: { env: 'AD_RECORDS_DB' } },
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(raw), { mode: 0o600 });
    const a = await spawnHost([CLI_MAIN, 'serve', '--config', join(dir, 'config.json'), '--json'], env, children);
    const b = await startHost({ config: parseHostConfig(raw, join(dir, 'config.json')), env, logger: false });
    hosts.push(b);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const lookup = { name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' } };
    const started = await fetch(`${a.url}/v1/runs`, {
      method: 'POST',
      headers: { ...headers, accept: 'text/event-stream' },
      body: JSON.stringify({ provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'lookup', arguments: {}, id: 'l1' } }], [{ echoToolResults: true }]), tools: ['lookup'], applicationTools: [lookup] }),
    });
    const onA = sseEvents(started);
    // Read with next(): leaving a for-await would close the connection, and so cancel the run.
    const until = async (events: AsyncGenerator<Record<string, unknown>>, into: Record<string, unknown>[], type: string) => {
      for (let next = await events.next(); !next.done; next = await events.next()) {
        into.push(next.value);
        if (next.value.type === type) return;
      }
    };
    const sentByA: Record<string, unknown>[] = [];
    await until(onA, sentByA, 'tool.execution.requested');
    const runId = sentByA[0]!.runId as string;

    // B follows the run A is running: up to the request A is waiting on.
    const followed = sseEvents(await fetch(`${b.url}/v1/runs/${runId}/stream`, { headers }));
    const seenByB: Record<string, unknown>[] = [];
    await until(followed, seenByB, 'tool.execution.requested');
    assert.deepEqual(seenByB, sentByA);
    const running = (await (await fetch(`${b.url}/v1/runs/read`, { method: 'POST', headers, body: JSON.stringify({ runId }) })).json()) as Record<string, unknown>;
    assert.equal(running.state, 'running');
    assert.equal(running.cursor, sentByA.length);

    // B's console: A's run is in B's run list, on its page (steps folded from the committed events), in B's live feed and watch.
    const asOperator = { authorization: `Bearer ${operatorToken}` };
    const operatorGet = async (path: string) => (await fetch(`${b.url}${path}`, { headers: asOperator })).json() as Promise<Record<string, any>>;
    const list = (await (await fetch(`${b.url}/v1/operator/runs`, { method: 'POST', headers: { ...asOperator, 'content-type': 'application/json' }, body: '{"finished":0}' })).json()) as { active: Record<string, unknown>[] };
    assert.deepEqual(list.active.map((run) => [run.runId, run.state, run.subject, run.provider]), [[runId, 'running', 'ops', 'mock']]);
    const page = await operatorGet(`/v1/operator/runs/${runId}`);
    assert.deepEqual([page.run.state, page.run.waiting?.kind, page.run.waiting?.tool, page.run.steps], ['running', 'tool', 'lookup', 1]);
    assert.deepEqual(page.steps.map((step: { tools: { name: string; executionRequestedAt?: string }[] }) => step.tools.map((tool) => [tool.name, Boolean(tool.executionRequestedAt)])), [[['lookup', true]]]);
    const feed = sseEvents(await fetch(`${b.url}/v1/operator/updates`, { headers: asOperator }));
    const feedUntil = async (matches: (update: Record<string, any>) => boolean): Promise<Record<string, any>> => {
      for (let next = await feed.next(); !next.done; next = await feed.next()) if (matches(next.value)) return next.value;
      assert.fail('the feed ended');
    };
    await feedUntil((update) => update.type === 'run' && update.run.runId === runId && update.run.state === 'running');
    const watched = sseEvents(await fetch(`${b.url}/v1/operator/runs/${runId}/events`, { headers: asOperator }));
    const watchedByB: Record<string, unknown>[] = [];
    await until(watched, watchedByB, 'tool.execution.requested');
    assert.deepEqual(watchedByB, sentByA);

    // The result, posted to B, resumes A's run; B's follower reads on to the end.
    const execution = sentByA.at(-1)!.execution as { executionId: string; call: { id: string } };
    const result = await fetch(`${b.url}/v1/tool-executions/results`, { method: 'POST', headers, body: JSON.stringify({ executionId: execution.executionId, runId, callId: execution.call.id, output: { answer: 42 } }) });
    assert.equal(((await result.json()) as { status: string }).status, 'accepted');
    for await (const event of onA) sentByA.push(event);
    for await (const event of followed) seenByB.push(event);
    assert.equal(sentByA.at(-1)!.type, 'run.completed');
    assert.deepEqual(seenByB, sentByA);
    for await (const event of watched) watchedByB.push(event);
    assert.deepEqual(watchedByB, sentByA);
    // B's feed says the run ended (from its usage record), and B's run list no longer has it.
    const ended = await feedUntil((update) => update.type === 'run' && update.run.runId === runId && update.run.state !== 'running');
    assert.equal(ended.run.state, 'completed');
    await feed.return(undefined);
    const after = (await (await fetch(`${b.url}/v1/operator/runs`, { method: 'POST', headers: { ...asOperator, 'content-type': 'application/json' }, body: '{"finished":5}' })).json()) as { active: unknown[]; finished: { runId: string; state: string }[] };
    assert.deepEqual(after.active, []);
    assert.deepEqual(after.finished.map((run) => [run.runId, run.state]), [[runId, 'completed']]);

    // Resumed on B after the first three events, and read back there.
    const resumed = sseEvents(await fetch(`${b.url}/v1/runs/${runId}/stream`, { headers: { ...headers, 'last-event-id': '3' } }));
    const rest: Record<string, unknown>[] = [];
    for await (const event of resumed) rest.push(event);
    assert.deepEqual(rest, sentByA.slice(3));
    const read = (await (await fetch(`${b.url}/v1/runs/read`, { method: 'POST', headers, body: JSON.stringify({ runId }) })).json()) as Record<string, unknown>;
    assert.equal(read.state, 'completed');
    assert.equal((read.result as { text: string }).text, '[{"answer":42}]');
  });
});
