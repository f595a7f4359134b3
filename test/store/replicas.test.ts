/**
 * Several host replicas on one PostgreSQL database: a decision or tool result posted to one
 * replica reaches the run streaming from another; a replica that dies loses its lease and its
 * work is reported interrupted, never executed twice; a replica that stalls past its lease can
 * no longer commit for the work that was taken from it.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { parseHostConfig } from '../../src/host/config.js';
import { startHost, type RunningHost } from '../../src/host/index.js';
import type { HostTool } from '../../src/runtime/tools.js';
import { script, sseEvents } from '../support/host.js';
import { freshDatabase } from '../support/postgres.js';
import { CLI_MAIN, killAll, spawnHost } from '../support/processes.js';
import { openPostgresStore } from '../support/stores.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'replica-token-0123456789abcdefghijklmno';
const LEASE_MS = 900;

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
  after(async () => {
    killAll(children);
    for (const host of hosts) await host.close().catch(() => undefined);
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function replica(): Promise<RunningHost> {
    const host = await startHost({ config: parseHostConfig(raw, join(dir, 'config.json')), env, tools: [guarded], logger: false });
    hosts.push(host);
    return host;
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
  async function usage(): Promise<Record<string, number>> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const rows = (await client.query('SELECT status, COUNT(*)::int AS count FROM usage_records GROUP BY status')).rows as { status: string; count: number }[];
      return Object.fromEntries(rows.map((row) => [row.status, row.count]));
    } finally {
      await client.end();
    }
  }

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
    const b = await replica();
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
    a.child.kill('SIGKILL');
    await a.exited;
    await sleep(LEASE_MS * 2);
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
    const b = await replica();
    const a = await replicaProcess();
    const slow = { provider: 'mock', model: 'demo', input: script([{ stallMs: LEASE_MS * 4 }, { text: 'too late' }]), idempotencyKey: 'stalled-1' };
    const pending = post(a.url, '/v1/runs', slow);
    await sleep(300);
    a.child.kill('SIGSTOP');
    await sleep(LEASE_MS * 3);
    // B has reaped A's work by now.
    const uncertain = await post(b.url, '/v1/runs', slow);
    assert.equal(uncertain.status, 409);
    assert.equal(((await uncertain.json()) as { error: { code: string } }).error.code, 'OPERATION_UNCERTAIN');
    a.child.kill('SIGCONT');
    const late = await pending;
    const body = (await late.json()) as { error?: { code: string }; text?: string };
    assert.notEqual(late.status, 200, `the stalled replica completed: ${JSON.stringify(body)}`);
    assert.equal(body.error?.code, 'OPERATION_STORE_ERROR');
    const replay = await post(b.url, '/v1/runs', slow);
    assert.equal(((await replay.json()) as { error: { code: string } }).error.code, 'OPERATION_UNCERTAIN');
    a.child.kill('SIGKILL');
  });
});
