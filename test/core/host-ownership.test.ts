/**
 * One live host per local state (issue 25, item 5), against host processes started by the real
 * CLI. A second `serve` on a running host's SQLite state used to start, reap the first one's
 * live runs as interrupted — even when it then failed to bind its port — and take its jobs. It
 * is now refused before it touches anything, naming the running host.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readHostConfig, startHost } from '../../src/host/index.js';
import { script, sseEvents } from '../support/host.js';
import { CLI_MAIN, cliAsync, errorOf, killAll, spawnHost } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'ownership-token-0123456789abcdefghijklm';
const lookup = { name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' } };
const waitsForAPerson = {
  provider: 'mock',
  model: 'demo',
  input: script([{ toolCall: { name: 'lookup', arguments: {} } }], [{ text: 'done' }]),
  tools: ['lookup'],
  applicationTools: [lookup],
  approvals: { mode: 'interactive', idlePolicy: 'pause' },
};
const hang = { provider: 'mock', model: 'demo', input: script([{ text: 'working' }, { hang: true }]) };

function writeConfig(dir: string, listen: { host: string; port: number }): string {
  const path = join(dir, 'config.json');
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      listen,
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [
        {
          id: 'main',
          subject: 'ops',
          tokenRef: { env: 'AD_OWNERSHIP_TOKEN' },
          providers: ['mock'],
          approveTools: ['lookup'],
          applicationTools: [{ name: 'lookup', requiresApproval: true }],
          jobs: ['submit', 'read', 'cancel'],
        },
      ],
      approvals: { interactive: true },
      applicationTools: { enabled: true, requireApproval: true },
      jobs: { retentionMs: 60_000, workers: 2, pollIntervalMs: 20 },
      limits: { shutdownGraceMs: 5000, maxConcurrentRunsPerSubject: 16 },
      usage: { file: { path: 'usage.jsonl' } },
    }),
    { mode: 0o600 },
  );
  return path;
}

const post = async (url: string, path: string, body: unknown, accept?: string) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify(body) });
const json = async (url: string, path: string, body: unknown) => (await (await post(url, path, body)).json()) as Record<string, any>;

/** Opens a streamed run and returns it once `type` has arrived. */
async function streamUntil(url: string, body: unknown, type: string) {
  const response = await post(url, '/v1/runs', body, 'text/event-stream');
  assert.equal(response.status, 200);
  const events = sseEvents(response);
  const seen: Record<string, any>[] = [];
  for (let next = await events.next(); !next.done; next = await events.next()) {
    seen.push(next.value);
    if (next.value.type === type) return { events, seen };
  }
  throw new Error(`the stream ended before ${type}`);
}

/** Reads the stream up to and including the first event of `type` (never past it). */
async function nextOfType(events: AsyncGenerator<Record<string, any>>, type: string): Promise<Record<string, any>> {
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error(`the stream ended before ${type}`);
    if (next.value.type === type) return next.value;
  }
}

async function rest(events: AsyncGenerator<Record<string, any>>): Promise<Record<string, any>[]> {
  const seen: Record<string, any>[] = [];
  for (let next = await events.next(); !next.done; next = await events.next()) seen.push(next.value);
  return seen;
}

/** A port nothing listens on (bound and released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

describe('one live host per local state (issue 25, item 5)', () => {
  const dir = tempDir('agenticdriver-ownership-');
  const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_OWNERSHIP_TOKEN: TOKEN };
  const children: ChildProcess[] = [];
  let config = '';
  before(() => {
    config = writeConfig(dir, { host: '127.0.0.1', port: 0 });
  });
  after(() => killAll(children));

  it('a second serve on the same state is refused with HOST_ALREADY_RUNNING naming the first, and the first keeps its runs, jobs and streams', async () => {
    const first = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--json'], env, children);
    const record = JSON.parse(readFileSync(join(dir, 'state', 'host.json'), 'utf8')) as { pid: number; url: string; configPath: string };
    assert.deepEqual([record.pid, record.url, record.configPath], [first.child.pid, first.url, config]);

    // The first host's live work: a run waiting for a person, a running job and its stream.
    const waiting = await streamUntil(first.url, waitsForAPerson, 'approval.requested');
    const job = await json(first.url, '/v1/jobs/submit', { key: 'live', request: hang });
    for (let state = job.state; state !== 'running'; state = (await json(first.url, '/v1/jobs/read', { id: job.id })).state) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const jobStream = await fetch(`${first.url}/v1/jobs/${job.id}/stream`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const jobEvents = sseEvents(jobStream);
    assert.equal((await jobEvents.next()).value?.type, 'run.started');

    // `npm start` twice (serve --init), a second serve on another port, and one on the first's
    // own port (which used to reap first and then fail with LISTEN_FAILED).
    const refused = await Promise.all(
      [
        ['serve', '--init', '--config', config],
        ['serve', '--config', config, '--port', '0'],
        ['serve', '--config', config, '--port', String(portOf(first.url))],
      ].map((args) => cliAsync(args, env)),
    );
    for (const second of refused) {
      assert.equal(second.status, 1, second.stderr);
      const error = errorOf(second.stderr);
      assert.equal(error.code, 'HOST_ALREADY_RUNNING', error.message);
      assert.ok(error.message.includes(`pid ${first.child.pid}`), error.message);
      assert.ok(error.message.includes(first.url), error.message);
      assert.ok(error.message.includes(join(dir, 'state')), error.message);
      assert.equal(second.stdout, '', 'nothing claims to be listening');
    }

    // Untouched: the decision reaches the waiting run, which completes; the job still runs.
    const approval = waiting.seen.at(-1)!.approval as { approvalId: string; runId: string; call: unknown };
    const decided = await post(first.url, '/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
    assert.equal(decided.status, 200, await decided.clone().text());
    const execution = (await nextOfType(waiting.events, 'tool.execution.requested')).execution as { executionId: string; runId: string; call: { id: string } };
    const result = await post(first.url, '/v1/tool-executions/results', { executionId: execution.executionId, runId: execution.runId, callId: execution.call.id, output: { found: true } });
    assert.equal(result.status, 200);
    assert.equal((await rest(waiting.events)).at(-1)!.type, 'run.completed');
    assert.equal((await json(first.url, '/v1/jobs/read', { id: job.id })).state, 'running');
    await json(first.url, '/v1/jobs/cancel', { id: job.id });
    const ended = (await rest(jobEvents)).at(-1)!;
    assert.deepEqual([ended.type, ended.error?.code], ['run.cancelled', 'CANCELLED']);

    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    assert.equal(existsSync(join(dir, 'state', 'host.json')), false, 'a clean stop removes the record');
    const statuses = readFileSync(join(dir, 'usage.jsonl'), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { status: string }).status);
    assert.deepEqual(statuses.sort(), ['cancelled', 'completed'], 'no run was recorded interrupted');
  });

  it('a host that cannot bind its port reaps nothing: what a killed host left open waits for a host that listens', async () => {
    const first = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--json'], env, children);
    await streamUntil(first.url, hang, 'text.delta');
    first.child.kill('SIGKILL');
    await first.exited;

    // The port is taken: LISTEN_FAILED, and the killed host's run is still open.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const refused = await cliAsync(['serve', '--config', config, '--port', String(port)], env);
    await new Promise((resolve) => taken.close(resolve));
    assert.equal(refused.status, 1);
    const error = errorOf(refused.stderr);
    assert.equal(error.code, 'LISTEN_FAILED');
    assert.ok(error.message.includes(`--port ${port}`), error.message);
    const before = readFileSync(join(dir, 'usage.jsonl'), 'utf8');
    assert.equal(before.includes('"interrupted"'), false, 'nothing was reaped by the host that failed to listen');

    // A host that listens reconciles it, exactly once.
    const host = await startHost({ config: await readHostConfig(config), env, logger: false });
    try {
      assert.equal((await host.store.usageSummary()).interrupted, 1);
    } finally {
      await host.close();
    }
  });

  it('answers 503 HOST_STARTING between binding its port and finishing start-up, and an in-process second host is refused too', async () => {
    const port = await freePort();
    const parsed = await readHostConfig(config);
    parsed.listen = { host: '127.0.0.1', port };
    let release!: () => void;
    const fence = new Promise<void>((resolve) => (release = resolve));
    const seen: Response[] = [];
    // The store's start-up (the reap) waits on the fence; meanwhile the port is bound.
    const { openStore } = await import('../../src/store/open.js');
    const store = await openStore(parsed.state, parsed.configDir, env);
    const start = store.start.bind(store);
    store.start = async (options) => {
      seen.push(await fetch(`http://127.0.0.1:${port}/health`));
      seen.push(await fetch(`http://127.0.0.1:${port}/v1/protocol`, { headers: { authorization: `Bearer ${TOKEN}` } }));
      await fence;
      return start(options);
    };
    const starting = startHost({ config: parsed, env, store, logger: false });
    await assert.rejects(
      async () => {
        while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
        return startHost({ config: await readHostConfig(config), env, logger: false });
      },
      (error: { code?: string }) => error.code === 'HOST_ALREADY_RUNNING',
    );
    release();
    const host = await starting;
    try {
      for (const response of seen) {
        assert.equal(response.status, 503);
        const body = (await response.json()) as { error: { code: string; retryable: boolean } };
        assert.deepEqual([body.error.code, body.error.retryable], ['HOST_STARTING', true]);
      }
      assert.equal((await fetch(`${host.url}/health`)).status, 200);
    } finally {
      await host.close();
    }
  });
});
