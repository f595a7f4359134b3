/**
 * `kill -9` of a real host process (`agenticdriver serve`) with runs in flight, on every store
 * engine: after the restart, completed keys replay, in-flight keys replay OPERATION_UNCERTAIN,
 * nothing runs again, a decision or tool result for a run that died gets a typed 409, and the
 * database is intact.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { script, sseEvents } from '../support/host.js';
import { CLI_MAIN, killAll, spawnHost } from '../support/processes.js';
import { ENGINES, stateConfig } from '../support/stores.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'recovery-token-0123456789abcdefghijklmn';
// Short, so a dead replica's work is reaped soon; long enough that a live replica starved of
// CPU on a loaded machine keeps renewing its lease (900 ms lapsed at a load average of 19).
const LEASE_MS = 2500;

for (const engine of ENGINES) {
  describe(`recovery after kill -9 (${engine})`, () => {
    const dir = tempDir('agenticdriver-recovery-');
    const children: ChildProcess[] = [];
    let config = '';
    let env: NodeJS.ProcessEnv = {};
    let cleanup: () => Promise<void> = async () => undefined;

    after(async () => {
      killAll(children);
      await cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    const serve = () => spawnHost([CLI_MAIN, 'serve', '--config', config, '--json'], env, children);
    const post = (url: string, path: string, body: unknown, accept?: string) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify(body) });
    async function until(url: string, body: unknown, type: string): Promise<Record<string, unknown>> {
      const events = sseEvents(await post(url, '/v1/runs', body, 'text/event-stream'));
      const seen: unknown[] = [];
      for (let next = await events.next(); !next.done; next = await events.next()) {
        if (next.value.type === type) return next.value;
        seen.push(next.value);
      }
      throw new Error(`the stream ended before ${type}: ${JSON.stringify(seen)}`);
    }

    it('replays completed keys, reports in-flight keys uncertain, re-runs nothing, refuses late decisions and results', async () => {
      const state = await stateConfig(engine, dir);
      cleanup = state.cleanup;
      env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_RECOVERY_TOKEN: TOKEN, ...state.env };
      config = join(dir, 'config.json');
      writeFileSync(
        config,
        JSON.stringify({
          version: 1,
          listen: { host: '127.0.0.1', port: 0 },
          providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
          tokens: [
            {
              id: 'main',
              subject: 'ops',
              tokenRef: { env: 'AD_RECOVERY_TOKEN' },
              providers: ['mock'],
              approveTools: ['reviewed'],
              applicationTools: [{ name: 'reviewed', requiresApproval: true }, { name: 'lookup', requiresApproval: false }],
            },
          ],
          approvals: { interactive: true },
          applicationTools: { enabled: true, requireApproval: false },
          limits: { maxConcurrentRunsPerSubject: 16 },
          state: { ...state.config, leaseMs: LEASE_MS },
        }),
        { mode: 0o600 },
      );
      const host = await serve();
      const done = { provider: 'mock', model: 'demo', input: 'finished before the crash', idempotencyKey: 'done-1' };
      const completed = await post(host.url, '/v1/runs', done);
      assert.equal(completed.status, 200);
      const result = await completed.json();
      const hang = { provider: 'mock', model: 'demo', input: script([{ text: 'working' }, { hang: true }]), idempotencyKey: 'inflight-1' };
      await until(host.url, hang, 'text.delta');
      const tool = (name: string) => ({ name, description: 'An application tool.', inputSchema: { type: 'object' } });
      const approval = (
        await until(
          host.url,
          { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'reviewed', arguments: {} } }], [{ text: 'never' }]), tools: ['reviewed'], applicationTools: [tool('reviewed')], approvals: { mode: 'interactive', idlePolicy: 'pause' } },
          'approval.requested',
        )
      ).approval as { approvalId: string; runId: string; call: unknown };
      const execution = (
        await until(host.url, { provider: 'mock', model: 'demo', input: script([{ toolCall: { name: 'lookup', arguments: {} } }], [{ text: 'never' }]), tools: ['lookup'], applicationTools: [tool('lookup')] }, 'tool.execution.requested')
      ).execution as { executionId: string; runId: string; call: { id: string } };
      host.child.kill('SIGKILL');
      await host.exited;

      const restarted = await serve();
      // A replica's lease must lapse before its work counts as dead (immediately on SQLite).
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2));
      const replayed = await post(restarted.url, '/v1/runs', done);
      assert.equal(replayed.status, 200);
      assert.deepEqual(await replayed.json(), result);
      const uncertain = await post(restarted.url, '/v1/runs', hang);
      const body = (await uncertain.json()) as { error: { code: string; outcome?: string; retryable: boolean } };
      assert.equal(uncertain.status, 409);
      assert.deepEqual([body.error.code, body.error.outcome, body.error.retryable], ['OPERATION_UNCERTAIN', 'uncertain', false]);
      const streamed = [] as Record<string, unknown>[];
      for await (const event of sseEvents(await post(restarted.url, '/v1/runs', hang, 'text/event-stream'))) streamed.push(event);
      assert.deepEqual(streamed.map((event) => event.type), ['run.started', 'step.started', 'run.failed']);
      assert.equal((streamed.at(-1)!.error as { code: string }).code, 'OPERATION_UNCERTAIN');

      const decision = await post(restarted.url, '/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
      assert.equal(decision.status, 409);
      assert.equal(((await decision.json()) as { error: { code: string } }).error.code, 'OPERATION_UNCERTAIN');
      const late = await post(restarted.url, '/v1/tool-executions/results', { executionId: execution.executionId, runId: execution.runId, callId: execution.call.id, output: { found: true } });
      assert.equal(late.status, 409);
      assert.equal(((await late.json()) as { error: { code: string } }).error.code, 'TOOL_OUTCOME_UNCERTAIN');

      restarted.child.kill('SIGTERM');
      await restarted.exited;
      const records = await state.usage();
      assert.deepEqual(records, { completed: 1, interrupted: 3 }, 'each run recorded once; the replays ran nothing');
      if (engine === 'sqlite') {
        const db = new Database(join(dir, 'state', 'agenticdriver.sqlite'), { readonly: true });
        try {
          assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
        } finally {
          db.close();
        }
      }
    });
  });
}
