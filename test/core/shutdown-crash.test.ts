/**
 * Regression tests for issue 13 defects 4 and 5 against a host process started by the real
 * CLI (`agenticdriver serve`): SIGTERM ends every active run with its terminal event or JSON
 * error before the host exits (it used to cut the sockets first), and after `kill -9` the
 * next start records each interrupted run and resolves each open approval as interrupted
 * (they used to stay holes in the records).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readHostConfig, startHost } from '../../src/host/index.js';
import { openStore } from '../../src/store/open.js';
import { script, sseEvents } from '../support/host.js';
import { CLI_MAIN, killAll, spawnHost } from '../support/processes.js';

const TOKEN = 'shutdown-token-0123456789abcdefghijklmn';
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);
const hang = { provider: 'mock', model: 'demo', input: script([{ text: 'working' }, { hang: true }]) };

describe('shutdown and crash (defects 4 and 5)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agenticdriver-shutdown-'));
  const config = join(dir, 'config.json');
  const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_SHUTDOWN_TOKEN: TOKEN };
  const children: ChildProcess[] = [];

  before(() => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [{ id: 'main', subject: 'ops', tokenRef: { env: 'AD_SHUTDOWN_TOKEN' }, providers: ['mock'], approveTools: ['lookup'], applicationTools: [{ name: 'lookup', requiresApproval: true }] }],
        approvals: { interactive: true },
        applicationTools: { enabled: true, requireApproval: true },
        limits: { shutdownGraceMs: 5000, maxConcurrentRunsPerSubject: 16 },
        state: { directory: join(dir, 'state') },
        // Interrupted runs must reach the durable usage sinks too, exactly once.
        usage: { file: { path: 'usage.jsonl' } },
      }),
      { mode: 0o600 },
    );
  });
  after(() => {
    killAll(children);
    rmSync(dir, { recursive: true, force: true });
  });

  const serve = () => spawnHost([CLI_MAIN, 'serve', '--config', config, '--json'], env, children);
  const post = (url: string, body: unknown, accept?: string) =>
    fetch(`${url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify(body) });

  /** Opens a streamed run and returns its remaining events once `type` has arrived. */
  async function streamUntil(url: string, body: unknown, type: string) {
    const response = await post(url, body, 'text/event-stream');
    assert.equal(response.status, 200);
    const events = sseEvents(response);
    const seen: Record<string, unknown>[] = [];
    for (let next = await events.next(); !next.done; next = await events.next()) {
      seen.push(next.value);
      if (next.value.type === type) return { events, seen };
    }
    throw new Error(`the stream ended before ${type}`);
  }
  async function rest(events: AsyncGenerator<Record<string, unknown>>, seen: Record<string, unknown>[]) {
    for (let next = await events.next(); !next.done; next = await events.next()) seen.push(next.value);
    return seen;
  }

  it('SIGTERM: every SSE client gets its terminal event and every JSON client its error before the host exits', async () => {
    const host = await serve();
    const streams = await Promise.all(Array.from({ length: 5 }, () => streamUntil(host.url, hang, 'text.delta')));
    const json = Array.from({ length: 2 }, () => post(host.url, hang));
    await new Promise((resolve) => setTimeout(resolve, 300));
    host.child.kill('SIGTERM');
    const ends = await Promise.all(streams.map(({ events, seen }) => rest(events, seen)));
    for (const events of ends) {
      const last = events.at(-1)!;
      assert.ok(TERMINAL.has(last.type as string), `the stream ended with ${JSON.stringify(last)}`);
      assert.equal((last.error as { code: string }).code, 'HOST_SHUTTING_DOWN');
    }
    for (const response of await Promise.all(json)) {
      const body = (await response.json()) as { error: { code: string; retryable: boolean } };
      assert.equal(response.status, 503);
      assert.deepEqual([body.error.code, body.error.retryable], ['HOST_SHUTTING_DOWN', true]);
    }
    assert.equal(await host.exited, 0);
  });

  it('kill -9: the next start records each interrupted run and resolves each open approval as interrupted', async () => {
    const host = await serve();
    await Promise.all(Array.from({ length: 3 }, () => streamUntil(host.url, hang, 'text.delta')));
    const lookup = { name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' } };
    const pending = await streamUntil(
      host.url,
      { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'lookup', arguments: {} } }], [{ text: 'done' }]), tools: ['lookup'], applicationTools: [lookup], approvals: { mode: 'interactive', idlePolicy: 'pause' } },
      'approval.requested',
    );
    const approvalId = (pending.seen.at(-1)!.approval as { approvalId: string }).approvalId;
    host.child.kill('SIGKILL');
    await host.exited;

    const restarted = await startHost({ config: await readHostConfig(config), env, logger: false });
    try {
      const summary = await restarted.store.usage.summary();
      assert.equal(summary.interrupted, 4, JSON.stringify(summary));
      const audit = await restarted.store.audit.read(50);
      const resolved = audit.find((record) => record.kind === 'approval.resolved' && record.approvalId === approvalId);
      assert.equal(resolved?.outcome, 'interrupted');
    } finally {
      await restarted.close();
    }
    // Reconciled once: a later start finds nothing left open.
    const later = await startHost({ config: await readHostConfig(config), env, logger: false });
    try {
      assert.equal((await later.store.usage.summary()).interrupted, 4);
    } finally {
      await later.close();
    }
    const lines = readFileSync(join(dir, 'usage.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { runId: string; status: string });
    const interrupted = lines.filter((line) => line.status === 'interrupted');
    assert.equal(interrupted.length, 4, 'each interrupted run reached the file sink');
    assert.equal(new Set(lines.map((line) => line.runId)).size, lines.length, 'one record per run');
  });
});

describe('a close right after a run was answered', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agenticdriver-close-'));
  const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_SHUTDOWN_TOKEN: TOKEN };
  const config = join(dir, 'config.json');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('waits for the usage record the run writes after its answer before the store closes: the next start reaps nothing', async () => {
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [{ id: 'main', subject: 'ops', tokenRef: { env: 'AD_SHUTDOWN_TOKEN' }, providers: ['mock'] }],
        state: { directory: join(dir, 'state') },
        usage: { file: { path: 'usage.jsonl' } },
      }),
      { mode: 0o600 },
    );
    const parsed = await readHostConfig(config);
    // The real store, its usage write held a while (a slow disk): the store must not close under it.
    const store = await openStore(parsed.state, parsed.configDir, env);
    const record = store.usage.record.bind(store.usage);
    const close = store.close.bind(store);
    let pending = 0;
    let closedWhilePending = false;
    store.usage.record = async (usage) => {
      pending += 1;
      try {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return await record(usage);
      } finally {
        pending -= 1;
      }
    };
    store.close = async () => {
      closedWhilePending ||= pending > 0;
      await close();
    };
    const host = await startHost({ config: parsed, env, logger: false, store });
    // A JSON run is answered at its terminal event; its usage record is written after that.
    const response = await fetch(`${host.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'mock', model: 'demo', input: 'hello' }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    await host.close();
    assert.equal(closedWhilePending, false, 'the store closed while a usage record was on its way');

    const restarted = await startHost({ config: parsed, env, logger: false });
    try {
      const summary = await restarted.store.usage.summary();
      assert.deepEqual([summary.completed, summary.interrupted], [1, 0], JSON.stringify(summary));
    } finally {
      await restarted.close();
    }
    const statuses = readFileSync(join(dir, 'usage.jsonl'), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { status: string }).status);
    assert.deepEqual(statuses, ['completed']);
  });
});
