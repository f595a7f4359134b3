/**
 * Several host replicas on one PostgreSQL database: a decision or tool result posted to one
 * replica reaches the run streaming from another; a replica that dies loses its lease and its
 * work is reported interrupted, never executed twice; a replica that stalls past its lease can
 * no longer commit for the work that was taken from it.
 *
 * No step races the wall clock. Every replica holds a long lease, so none loses it to a slow
 * machine; the replica that must find another one dead (the reaper) runs on a clock the test
 * moves past that lease, and each step waits on an explicit fence read from the database (the
 * operation recorded, the dead replica's row reaped).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import pg from 'pg';
import { parseHostConfig } from '../../src/host/config.js';
import { startHost, type RunningHost } from '../../src/host/index.js';
import type { HostTool } from '../../src/runtime/tools.js';
import { script, sseEvents } from '../support/host.js';
import { freshDatabase } from '../support/postgres.js';
import { CLI_MAIN, killAll, spawnHost } from '../support/processes.js';
import { openPostgresStore } from '../support/stores.js';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import { SqlStateStore } from '../../src/store/sql/sql-store.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'replica-token-0123456789abcdefghijklmno';
/** The default lease: no replica loses it to a loaded machine (renewed every 5 s, it lapses after 15 s without renewal). */
const LEASE_MS = 15_000;
/** The reaper's lease: the shortest allowed, so that it renews, and reaps, every 100 ms. */
// The reaper ticks a third of its lease: short, so the dead replica's work is reaped soon after its
// lease lapses; long enough that the reaper itself keeps its lease on a loaded machine (300 ms
// lapsed at a load average of 17, and the reaper's own runs were then interrupted).
const REAPER_LEASE_MS = 1500;

describe('replicas on one PostgreSQL database', () => {
  const dir = tempDir('agenticdriver-replicas-');
  const children: ChildProcess[] = [];
  const hosts: RunningHost[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let raw: Record<string, unknown>;
  let env: NodeJS.ProcessEnv;
  let executions = 0;
  const guarded: HostTool = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => `executed ${++executions}` };

  before(async () => {
    database = await freshDatabase();
    env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_REPLICA_TOKEN: TOKEN, AD_REPLICA_DB: database.url };
    raw = {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [
        {
          id: 'main',
          subject: 'ops',
          tokenRef: { env: 'AD_REPLICA_TOKEN' },
          providers: ['mock'],
          tools: ['guarded'],
          approveTools: ['guarded', 'lookup'],
          applicationTools: [{ name: 'lookup', requiresApproval: false }],
        },
      ],
      approvals: { interactive: true },
      applicationTools: { enabled: true, requireApproval: false },
      state: { engine: 'postgres', urlRef: { env: 'AD_REPLICA_DB' }, leaseMs: LEASE_MS },
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(raw), { mode: 0o600 });
  });
  // Each test's replicas end with it (a reaper left running would reap the next test's replicas).
  afterEach(async () => {
    killAll(children.splice(0));
    for (const host of hosts.splice(0)) await host.close().catch(() => undefined);
  });
  after(async () => {
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function replica(): Promise<RunningHost> {
    const host = await startHost({ config: parseHostConfig(raw, join(dir, 'config.json')), env, tools: [guarded], logger: false });
    hosts.push(host);
    return host;
  }
  /**
   * A replica whose clock `expireLeases()` moves past every lease taken until then: from its next
   * renewal on, it finds the other replicas dead and reaps them (its own lease, lapsed by the same
   * jump, is renewed under a new id; it holds no work then).
   */
  async function reaper(): Promise<{ host: RunningHost; expireLeases(): void }> {
    let skew = 0;
    const store = await SqlStateStore.open(await PostgresEngine.connect(database.url), () => Date.now() + skew);
    const config = parseHostConfig({ ...raw, state: { ...(raw.state as object), leaseMs: REAPER_LEASE_MS } }, join(dir, 'config.json'));
    const host = await startHost({ config, env, store, tools: [guarded], logger: false });
    hosts.push(host);
    return { host, expireLeases: () => (skew += 2 * LEASE_MS) };
  }
  const replicaProcess = () => spawnHost([CLI_MAIN, 'serve', '--config', join(dir, 'config.json'), '--json'], env, children);
  const post = (url: string, path: string, body: unknown, accept?: string) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify(body) });
  async function openStream(url: string, body: unknown, until: string) {
    const events = sseEvents(await post(url, '/v1/runs', body, 'text/event-stream'));
    for (let next = await events.next(); !next.done; next = await events.next()) {
      if (next.value.type === until) return { event: next.value, rest: events };
    }
    throw new Error(`the stream ended before ${until}`);
  }
  async function drain(events: AsyncGenerator<Record<string, unknown>>) {
    const seen: Record<string, unknown>[] = [];
    for await (const event of events) seen.push(event);
    return seen;
  }
  const reviewed = (key?: string) => ({
    provider: 'mock',
    model: 'demo',
    input: script([{ toolCall: { name: 'guarded', arguments: {}, id: 'g1' } }], [{ echoToolResults: true }]),
    tools: ['guarded'],
    approvals: { mode: 'interactive', idlePolicy: 'pause' },
    ...(key ? { idempotencyKey: key } : {}),
  });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
  async function usage(): Promise<Record<string, number>> {
    const rows = await query<{ status: string; count: number }>('SELECT status, COUNT(*)::int AS count FROM usage_records GROUP BY status');
    return Object.fromEntries(rows.map((row) => [row.status, row.count]));
  }
  /** A fence: polls the database until `read` returns a value (bounded only by the test's timeout). */
  async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
    for (;;) {
      const value = await read();
      if (value !== undefined) return value;
      await sleep(50);
    }
  }
  /** Resolves once the replica `owner` has no row left: another replica reaped it, and all it owned, in one transaction. */
  const reaped = (owner: string) => until(async () => ((await query('SELECT 1 FROM replicas WHERE id = $1', [owner])).length === 0 ? true : undefined));

  it('replicas starting together on a fresh database migrate it once', async () => {
    const fresh = await freshDatabase();
    try {
      const stores = await Promise.all(Array.from({ length: 6 }, () => openPostgresStore(fresh.url)));
      for (const store of stores) await store.close();
    } finally {
      await fresh.drop();
    }
  });

  it('an approval decided on B resumes the run streaming from A; a tool result posted to B completes A\'s ticket', async () => {
    const [a, b] = [await replica(), await replica()];
    executions = 0;
    const { event, rest } = await openStream(a.url, reviewed(), 'approval.requested');
    const approval = event.approval as { approvalId: string; runId: string; call: unknown };
    const decided = await post(b.url, '/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
    assert.equal(decided.status, 200);
    assert.equal(((await decided.json()) as { outcome: string }).outcome, 'approved');
    const events = await drain(rest);
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    assert.equal(executions, 1);
    // Decided once, whichever replica is asked next.
    const again = await post(a.url, '/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
    assert.equal(again.status, 404);

    const lookup = { name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' } };
    const ticketRun = await openStream(
      a.url,
      { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'lookup', arguments: {} } }], [{ echoToolResults: true }]), tools: ['lookup'], applicationTools: [lookup] },
      'tool.execution.requested',
    );
    const execution = ticketRun.event.execution as { executionId: string; runId: string; call: { id: string } };
    const identity = { executionId: execution.executionId, runId: execution.runId, callId: execution.call.id };
    const progress = await post(b.url, '/v1/tool-executions/progress', identity);
    assert.equal(((await progress.json()) as { status: string }).status, 'progress');
    const result = await post(b.url, '/v1/tool-executions/results', { ...identity, output: { answer: 42 } });
    assert.equal(((await result.json()) as { status: string }).status, 'accepted');
    const ticketEvents = await drain(ticketRun.rest);
    const completed = ticketEvents.at(-1)!;
    assert.equal(completed.type, 'run.completed');
    assert.equal((completed.result as { text: string }).text, '[{"answer":42}]');
    const twice = await post(a.url, '/v1/tool-executions/results', { ...identity, output: { answer: 43 } });
    assert.equal(((await twice.json()) as { error: { code: string } }).error.code, 'TOOL_EXECUTION_NOT_FOUND');

    // An idempotent run recorded on A replays on B.
    const keyed = { provider: 'mock', model: 'demo', input: 'recorded on A', idempotencyKey: 'across-1' };
    const first = await (await post(a.url, '/v1/runs', keyed)).json();
    assert.deepEqual(await (await post(b.url, '/v1/runs', keyed)).json(), first);
  });

  it('a replica killed mid-run loses its lease: its run is reported interrupted on B and never executed', async () => {
    const { host: b, expireLeases } = await reaper();
    const a = await replicaProcess();
    const before = await usage();
    // The process has no host tools: an application tool that needs review.
    const reviewedLookup = {
      provider: 'mock',
      model: 'demo',
      input: script([{ toolCall: { name: 'lookup', arguments: {}, id: 'l1' } }], [{ echoToolResults: true }]),
      tools: ['lookup'],
      applicationTools: [{ name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' }, requiresApproval: true }],
      approvals: { mode: 'interactive', idlePolicy: 'pause' },
      idempotencyKey: 'killed-1',
    };
    const { event } = await openStream(a.url, reviewedLookup, 'approval.requested');
    const approval = event.approval as { approvalId: string; runId: string; call: unknown };
    const [{ owner } = { owner: '' }] = await query<{ owner: string }>('SELECT owner FROM approvals WHERE approval_id = $1', [approval.approvalId]);
    assert.ok(owner, 'the approval names the replica that asked');
    a.child.kill('SIGKILL');
    await a.exited;
    expireLeases();
    await reaped(owner);
    const decision = await post(b.url, '/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
    assert.equal(decision.status, 409);
    assert.equal(((await decision.json()) as { error: { code: string } }).error.code, 'OPERATION_UNCERTAIN');
    const replay = await post(b.url, '/v1/runs', reviewedLookup, 'text/event-stream');
    const events = await drain(sseEvents(replay));
    assert.equal((events.at(-1)!.error as { code: string }).code, 'OPERATION_UNCERTAIN');
    assert.ok(!events.some((item) => item.type === 'approval.requested' || item.type === 'tool.execution.requested'), 'the replay asks nobody again');
    assert.equal((await usage()).interrupted ?? 0, (before.interrupted ?? 0) + 1);
  });

  it('a replica stalled past its lease cannot commit the run that was taken from it', async () => {
    const { host: b, expireLeases } = await reaper();
    const a = await replicaProcess();
    // A run that could only end by itself long after every fence below (the test's timeout ends it first).
    const slow = { provider: 'mock', model: 'demo', input: script([{ stallMs: 600_000 }, { text: 'too late' }]), idempotencyKey: 'stalled-1' };
    const pending = post(a.url, '/v1/runs', slow);
    // Fence: A has recorded the operation as its own running work.
    const owner = await until(async () => (await query<{ owner: string }>("SELECT owner FROM runs WHERE run_key = 'stalled-1' AND mode = 'attached' AND state = 'running'"))[0]?.owner);
    a.child.kill('SIGSTOP');
    // Fence: A's lease lapsed (as B sees it) and B reaped A's work.
    expireLeases();
    await reaped(owner);
    assert.deepEqual(await query("SELECT state FROM runs WHERE run_key = 'stalled-1' AND mode = 'attached'"), [{ state: 'uncertain' }]);
    const uncertain = await post(b.url, '/v1/runs', slow);
    assert.equal(uncertain.status, 409);
    assert.equal(((await uncertain.json()) as { error: { code: string } }).error.code, 'OPERATION_UNCERTAIN');
    // Woken, A's next renewal (within a third of its lease) finds the lease gone and ends the
    // run: it cannot commit what was taken from it.
    a.child.kill('SIGCONT');
    const late = await pending;
    const body = (await late.json()) as { error?: { code: string }; text?: string };
    assert.notEqual(late.status, 200, `the stalled replica completed: ${JSON.stringify(body)}`);
    assert.equal(body.error?.code, 'OPERATION_STORE_ERROR');
    const replay = await post(b.url, '/v1/runs', slow);
    assert.equal(((await replay.json()) as { error: { code: string } }).error.code, 'OPERATION_UNCERTAIN');
  });
});
