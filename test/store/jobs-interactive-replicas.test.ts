/**
 * A background run waiting for a person outlives the replica that ran it (feature
 * `interactive-jobs`, PostgreSQL, real `serve` processes): replica A runs a job to an approval
 * and is killed with SIGKILL while the job waits; replica B reaps A (its clock moved past A's
 * lease), the decision is posted to B, and the job goes on there from its checkpoint — the
 * approved tool (an application tool: its one ticket) runs exactly once, the result posted to B
 * completes it, and the job's event sequence is contiguous.
 *
 * No step races the wall clock: each waits on a fence read from the database (the job
 * `waiting`, A's replica row reaped, the job finished).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { parseHostConfig } from '../../src/host/config.js';
import { startHost, type RunningHost } from '../../src/host/index.js';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import { SqlStateStore } from '../../src/store/sql/sql-store.js';
import { script } from '../support/host.js';
import { freshDatabase } from '../support/postgres.js';
import { CLI_MAIN, killAll, spawnHost } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'waiting-replica-token-0123456789abcdefgh';
const LEASE_MS = 15_000;
// The reaper ticks a third of its lease: short, so the dead replica's work is reaped soon after its
// lease lapses; long enough that the reaper itself keeps its lease on a loaded machine (300 ms
// lapsed at a load average of 17, and the reaper's own runs were then interrupted).
const REAPER_LEASE_MS = 1500;

describe('a waiting background run outlives its replica (postgres)', () => {
  const dir = tempDir('agenticdriver-waiting-replicas-');
  const children: ChildProcess[] = [];
  const hosts: RunningHost[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let raw: Record<string, unknown>;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    database = await freshDatabase();
    env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_WAITING_TOKEN: TOKEN, AD_WAITING_DB: database.url };
    raw = {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [
        {
          id: 'main',
          subject: 'ops',
          tokenRef: { env: 'AD_WAITING_TOKEN' },
          providers: ['mock'],
          approveTools: ['lookup'],
          applicationTools: [{ name: 'lookup', requiresApproval: true }],
          jobs: ['submit', 'read'],
          sessions: ['create', 'read', 'continue'],
        },
      ],
      approvals: { interactive: true },
      sessions: { retentionMs: 600_000 },
      applicationTools: { enabled: true, requireApproval: false },
      jobs: { retentionMs: 600_000, interactive: true },
      state: { engine: 'postgres', urlRef: { env: 'AD_WAITING_DB' }, leaseMs: LEASE_MS },
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(raw), { mode: 0o600 });
  });
  after(async () => {
    killAll(children.splice(0));
    for (const host of hosts.splice(0)) await host.close().catch(() => undefined);
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = async (url: string, path: string, body: unknown) => {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string } } };
  };
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
  /** A fence: polls the database until `read` returns a value (bounded only by the test's timeout). */
  async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
    for (;;) {
      const value = await read();
      if (value !== undefined) return value;
      await sleep(50);
    }
  }
  const stateOf = async (id: string) => (await query<{ state: string }>('SELECT state FROM runs WHERE id = $1', [id]))[0]?.state;
  const whenState = (id: string, state: string) => until(async () => ((await stateOf(id)) === state ? true : undefined));

  /**
   * Replica A (a real `serve` process) takes the job `submit` makes to its first wait and is
   * killed with SIGKILL; replica B (in this process) reaps A, its clock moved past A's lease.
   * Returns B, with the job still waiting.
   */
  async function waitingWhenAIsKilled(submit: (url: string) => Promise<string>): Promise<{ b: RunningHost; id: string }> {
    // The replicas before A (none in a fresh database, whose tables A's start makes).
    const before = new Set((await query<{ id: string }>("SELECT id FROM replicas WHERE to_regclass('replicas') IS NOT NULL").catch(() => [])).map((row) => row.id));
    const a = await spawnHost([CLI_MAIN, 'serve', '--config', join(dir, 'config.json'), '--json'], env, children);
    const id = await submit(a.url);
    await whenState(id, 'waiting');
    const replica = (await query<{ id: string }>('SELECT id FROM replicas')).find((row) => !before.has(row.id));
    assert.ok(replica, "A's lease row");

    a.child.kill('SIGKILL');
    await a.exited;
    // B reaps A: its clock moves past every lease taken so far.
    let skew = 0;
    const store = await SqlStateStore.open(await PostgresEngine.connect(database.url), () => Date.now() + skew);
    const config = parseHostConfig({ ...raw, state: { ...(raw.state as object), leaseMs: REAPER_LEASE_MS } }, join(dir, 'config.json'));
    const b = await startHost({ config, env, store, logger: false });
    hosts.push(b);
    skew += 2 * LEASE_MS;
    await until(async () => ((await query('SELECT 1 FROM replicas WHERE id = $1', [replica.id])).length === 0 ? true : undefined));
    assert.equal(await stateOf(id), 'waiting', 'reaping A did not touch the checkpointed job');
    return { b, id };
  }
  /** Closes B: its skewed clock would reap the next test's A while it lives. */
  async function closeB(b: RunningHost): Promise<void> {
    hosts.splice(hosts.indexOf(b), 1);
    await b.close();
  }
  async function eventsOf(url: string, id: string): Promise<{ type: string; sequence: number; result?: { text: string; session?: { revision: number } } }[]> {
    const events: { type: string; sequence: number; result?: { text: string } }[] = [];
    for (let after = 0; ; ) {
      const next = await post(url, '/v1/jobs/events', { id, after });
      events.push(...(next.body.events as typeof events));
      after = next.body.nextCursor as number;
      if (!next.body.hasMore) return events;
    }
  }
  const lookupRequest = {
    provider: 'mock',
    model: 'demo',
    input: script([{ toolCall: { name: 'lookup', arguments: { q: 'x' }, id: 'l1' } }], [{ echoToolResults: true }]),
    tools: ['lookup'],
    applicationTools: [{ name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' } }],
    approvals: { mode: 'interactive', idlePolicy: 'pause' },
  };
  /** On B: approves the job's call, then posts the application tool's one ticket's result; returns its run id. */
  async function approveAndAnswer(url: string, id: string): Promise<string> {
    const page = await post(url, '/v1/jobs/events', { id, after: 0 });
    const requested = (page.body.events as { type: string; approval?: { approvalId: string; runId: string; call: unknown } }[]).find((event) => event.type === 'approval.requested')!;
    const { approvalId, runId, call } = requested.approval!;
    const decided = await post(url, '/v1/approvals/decisions', { approvalId, runId, call, decision: 'approve' });
    assert.deepEqual([decided.status, decided.body.outcome], [200, 'approved'], JSON.stringify(decided.body));
    // B goes on from the checkpoint to the approved application tool: one ticket, then it waits again.
    const ticket = await until(async () => {
      const rows = await query<{ execution_id: string; call_id: string }>('SELECT execution_id, call_id FROM tool_tickets WHERE run_id = $1', [runId]);
      return rows.length > 0 && (await stateOf(id)) === 'waiting' ? rows : undefined;
    });
    assert.equal(ticket.length, 1);
    const result = await post(url, '/v1/tool-executions/results', { executionId: ticket[0]!.execution_id, runId, callId: ticket[0]!.call_id, output: { found: 'y' } });
    assert.equal(result.body.status, 'accepted', JSON.stringify(result.body));
    await whenState(id, 'completed');
    return runId;
  }

  it('killed while its job waits for approval, A loses nothing: decided on B, the job completes there, the tool ran once', async () => {
    const { b, id } = await waitingWhenAIsKilled(async (url) => {
      const job = await post(url, '/v1/jobs/submit', { key: 'outlives-a', request: lookupRequest });
      assert.equal(job.status, 200, JSON.stringify(job.body));
      return job.body.id as string;
    });
    const runId = await approveAndAnswer(b.url, id);
    const events = await eventsOf(b.url, id);
    assert.deepEqual(
      events.map((event) => event.sequence),
      events.map((_, index) => index + 1),
      'every sequence is contiguous',
    );
    assert.deepEqual(
      events.filter((event) => event.type !== 'text.delta').map((event) => event.type),
      ['run.started', 'step.started', 'tool.called', 'approval.requested', 'approval.resolved', 'tool.execution.requested', 'tool.completed', 'step.started', 'run.completed'],
    );
    assert.equal(events.at(-1)!.result!.text, '[{"found":"y"}]');
    assert.equal((await query('SELECT 1 FROM tool_tickets WHERE run_id = $1', [runId])).length, 1, 'the tool ran exactly once');
    const usage = await until(async () => {
      const rows = await query<{ status: string }>('SELECT status FROM usage_records WHERE run_id = $1', [runId]);
      return rows.length > 0 ? rows : undefined;
    });
    assert.deepEqual(usage, [{ status: 'completed' }], 'one usage record, not interrupted');
    await closeB(b);
  });

  it('a session turn waiting in a job outlives A: its session stays running, not interrupted, and B completes the turn, appending it once', async () => {
    let sessionId = '';
    const { b, id } = await waitingWhenAIsKilled(async (url) => {
      const created = await post(url, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history' });
      sessionId = (created.body.session as { id: string }).id;
      const job = await post(url, '/v1/jobs/submit', { key: 'turn-outlives-a', request: { ...lookupRequest, session: { id: sessionId, revision: 0 } } });
      assert.equal(job.status, 200, JSON.stringify(job.body));
      return job.body.id as string;
    });
    const session = async () => (await post(b.url, '/v1/sessions/read', { id: sessionId })).body as { session: { state: string; revision: number }; history: { role: string; content: string }[] };
    assert.equal((await session()).session.state, 'running', 'reaping A left the waiting turn to its checkpoint');
    const busy = await post(b.url, '/v1/runs', { provider: 'mock', model: 'demo', input: 'meanwhile', session: { id: sessionId, revision: 0 } });
    assert.deepEqual([busy.status, busy.body.error?.code], [409, 'SESSION_BUSY']);

    await approveAndAnswer(b.url, id);
    const events = await eventsOf(b.url, id);
    assert.deepEqual(
      events.map((event) => event.sequence),
      events.map((_, index) => index + 1),
    );
    assert.equal(events.at(-1)!.result!.session!.revision, 1);
    const after = await session();
    assert.deepEqual([after.session.state, after.session.revision], ['ready', 1]);
    assert.deepEqual(after.history, [
      { role: 'user', content: lookupRequest.input },
      { role: 'assistant', content: '[{"found":"y"}]' },
    ], 'the turn appended once');
    await closeB(b);
  });
});
