/**
 * Durable jobs across `kill -9` of a real host process, on every store engine: 100 jobs
 * queued or running, each recording a side effect through a tool. After the restart no
 * started job runs twice (every effect is recorded at most once), jobs completed before the
 * kill are intact, jobs running at the kill are `interrupted` (uncertain), and the queued ones
 * finish. On PostgreSQL, two replicas share one queue (each job runs exactly once) and a job
 * submitted on one is tailed from the other with Last-Event-ID.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { script, sseEvents } from '../support/host.js';
import { killAll, spawnHost } from '../support/processes.js';
import { ENGINES, stateConfig } from '../support/stores.js';
import { tempDir } from '../support/temp.js';

const launcher = join(import.meta.dirname, 'fixtures', 'job-host.ts');
const TOKEN = 'jobs-crash-token-0123456789abcdefghijk';
// Short, so a dead replica's work is reaped soon; long enough that a live replica starved of
// CPU on a loaded machine keeps renewing its lease (900 ms lapsed at a load average of 19).
const LEASE_MS = 2500;
const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

for (const engine of ENGINES) {
  describe(`durable jobs across kill -9 (${engine})`, () => {
    const dir = tempDir('agenticdriver-jobs-crash-');
    const effects = join(dir, 'effects.log');
    const children: ChildProcess[] = [];
    let cleanup: () => Promise<void> = async () => undefined;
    let config = '';
    let env: NodeJS.ProcessEnv = {};
    after(async () => {
      killAll(children);
      await cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    const serve = () => spawnHost([launcher, config], env, children);
    const post = async (url: string, path: string, body: unknown) => {
      const response = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await response.json()) as Record<string, any>;
    };
    const recorded = () =>
      readFileSync(effects, 'utf8')
        .split('\n')
        .filter((line) => line !== '');

    it('never runs a started job twice: completed stay intact, running become interrupted, queued finish after the restart', async () => {
      const state = await stateConfig(engine, dir);
      cleanup = state.cleanup;
      writeFileSync(effects, '');
      env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_JOBS_TOKEN: TOKEN, EFFECTS_FILE: effects, ...state.env };
      config = join(dir, 'config.json');
      writeFileSync(
        config,
        JSON.stringify({
          version: 1,
          listen: { host: '127.0.0.1', port: 0 },
          providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
          tokens: [{ id: 'main', subject: 'ops', tokenRef: { env: 'AD_JOBS_TOKEN' }, providers: ['mock'], tools: ['effect'], jobs: ['submit', 'read', 'cancel'] }],
          jobs: { retentionMs: 600_000, workers: 4, pollIntervalMs: 20 },
          state: { ...state.config, leaseMs: LEASE_MS },
        }),
        { mode: 0o600 },
      );
      const host = await serve();
      const request = { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'effect', arguments: {} } }], [{ stallMs: 150 }, { text: 'done' }]), tools: ['effect'] };
      const jobs = await Promise.all(Array.from({ length: 100 }, (_, index) => post(host.url, '/v1/jobs/submit', { key: `crash-${index}`, request })));
      assert.ok(jobs.every((job) => job.state === 'queued' || job.state === 'running'), JSON.stringify(jobs[0]));
      // Let some finish and some start.
      for (;;) {
        const states = await Promise.all(jobs.map((job) => post(host.url, '/v1/jobs/read', { id: job.id })));
        if (states.filter((job) => job.state === 'completed').length >= 8) break;
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      host.child.kill('SIGKILL');
      await host.exited;
      const effectsAtKill = new Set(recorded());

      const restarted = await serve();
      let finals: Record<string, any>[] = [];
      for (;;) {
        finals = await Promise.all(jobs.map((job) => post(restarted.url, '/v1/jobs/read', { id: job.id })));
        if (finals.every((job) => TERMINAL.has(job.state as string))) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const effectLines = recorded();
      assert.equal(new Set(effectLines).size, effectLines.length, 'a job ran its tool twice');
      const byState = (wanted: string) => finals.filter((job) => job.state === wanted);
      assert.equal(byState('failed').length + byState('cancelled').length, 0, JSON.stringify(finals.filter((job) => job.state === 'failed')[0]));
      assert.ok(byState('completed').length >= 8);
      for (const job of byState('interrupted')) {
        // Started before the kill, and never again after it.
        const page = await post(restarted.url, '/v1/jobs/events', { id: job.id, after: 0 });
        const last = page.events.at(-1);
        assert.deepEqual([last.type, last.error.code, last.error.outcome], ['run.failed', 'JOB_INTERRUPTED', 'uncertain']);
        assert.equal(effectLines.filter((line) => line === job.runId).length <= 1, true);
      }
      for (const job of byState('completed')) assert.equal(effectLines.filter((line) => line === job.runId).length, 1, `completed job ${job.id} has one effect`);
      const queuedAtKill = byState('completed').filter((job) => !effectsAtKill.has(job.runId));
      assert.ok(queuedAtKill.length > 0, 'some jobs that had not started ran after the restart');
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    });
  });
}

describe('durable jobs on two replicas (postgres)', () => {
  const dir = tempDir('agenticdriver-jobs-replicas-');
  const children: ChildProcess[] = [];
  let cleanup: () => Promise<void> = async () => undefined;
  after(async () => {
    killAll(children);
    await cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('share one queue (each job runs exactly once), and a job submitted on A is tailed from B with Last-Event-ID', async () => {
    const state = await stateConfig('postgres', dir);
    cleanup = state.cleanup;
    const effects = join(dir, 'effects.log');
    writeFileSync(effects, '');
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [{ id: 'main', subject: 'ops', tokenRef: { env: 'AD_JOBS_TOKEN' }, providers: ['mock'], tools: ['effect'], jobs: ['submit', 'read', 'cancel'] }],
        jobs: { retentionMs: 600_000, workers: 2, pollIntervalMs: 20 },
        state: { ...state.config, leaseMs: LEASE_MS },
      }),
      { mode: 0o600 },
    );
    const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_JOBS_TOKEN: TOKEN, EFFECTS_FILE: effects, ...state.env };
    const start = async () => (await spawnHost([launcher, config], env, children)).url;
    const [a, b] = [await start(), await start()];
    const post = async (url: string, path: string, body: unknown) =>
      (await (await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, any>;
    const request = { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'effect', arguments: {} } }], [{ stallMs: 50 }, { text: 'shared' }]), tools: ['effect'] };
    const jobs = await Promise.all(Array.from({ length: 40 }, (_, index) => post(index % 2 ? a : b, '/v1/jobs/submit', { key: `shared-${index}`, request })));

    // Tail the first job from B: read three events, drop the connection, resume from the last id.
    const tailed: Record<string, unknown>[] = [];
    const first = sseEvents(await fetch(`${b}/v1/jobs/${jobs[1]!.id as string}/stream`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    for (let next = await first.next(); !next.done; next = await first.next()) {
      tailed.push(next.value);
      if (tailed.length === 3) break;
    }
    await first.return(undefined);
    const rest = await fetch(`${b}/v1/jobs/${jobs[1]!.id as string}/stream`, { headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': String(tailed.at(-1)!.sequence) } });
    for await (const event of sseEvents(rest)) tailed.push(event);
    assert.deepEqual(tailed.map((event) => event.sequence), Array.from({ length: tailed.length }, (_, index) => index + 1));
    assert.equal(tailed.at(-1)!.type, 'run.completed');

    for (;;) {
      const states = await Promise.all(jobs.map((job) => post(a, '/v1/jobs/read', { id: job.id })));
      if (states.every((job) => job.state === 'completed')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const effectLines = readFileSync(effects, 'utf8').split('\n').filter((line) => line !== '');
    assert.deepEqual(effectLines.slice().sort(), jobs.map((job) => job.runId as string).sort(), 'each job ran exactly once');
  });
});
