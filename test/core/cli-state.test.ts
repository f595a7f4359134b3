/**
 * The CLI as a client of a running host, for the state-backed features: `run
 * --idempotency-key`, `jobs submit|read|cancel|tail`, `sessions create|read|delete` with `run
 * --session`. Its own file (and host), so that each CLI suite stays well inside its time budget
 * on a loaded machine.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { CLI_MAIN as main, cli, errorOf, stopChild } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

describe('agenticdriver CLI: keys, jobs and sessions', () => {
  const dir = tempDir('ad-cli-state-');
  const config = join(dir, 'config.json');
  let server: ChildProcess;
  let url: string;

  before(async () => {
    const init = cli(['init', '--config', config, '--json']);
    assert.equal(init.status, 0, init.stderr);
    server = spawn(process.execPath, [main, 'serve', '--config', config, '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => createInterface({ input: server.stdout! }).once('line', resolve));
    url = (JSON.parse(line) as { url: string }).url;
  });
  after(() => stopChild(server));

  it('run --idempotency-key replays the recorded run instead of running it again', () => {
    const args = ['run', '--config', config, '--url', url, '--provider', 'mock', '--model', 'demo', '--json', '--idempotency-key', `cli-${process.pid}`];
    const first = cli([...args, '--input', 'once']);
    assert.equal(first.status, 0, first.stderr);
    const again = cli([...args, '--input', 'once']);
    assert.equal(again.status, 0, again.stderr);
    const runIds = [first, again].map((result) => new Set(result.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { runId: string }).runId)));
    assert.equal(runIds[0]!.size, 1);
    assert.deepEqual(runIds[1], runIds[0], 'the replay carries the recorded run id');
    const changed = cli([...args, '--input', 'twice']);
    assert.equal(changed.status, 1);
    assert.equal(errorOf(changed.stderr).code, 'IDEMPOTENCY_CONFLICT');
  });

  it('jobs submit --tail follows a job to its end; jobs read and tail --after find it again', () => {
    const common = ['--config', config, '--url', url];
    const submitted = cli(['jobs', 'submit', ...common, '--key', `cli-job-${process.pid}`, '--provider', 'mock', '--model', 'demo', '--input', 'Hello job', '--tail']);
    assert.equal(submitted.status, 0, submitted.stderr);
    assert.equal(submitted.stdout, 'Hello job\n');
    const id = /job ([0-9a-f-]{36})/.exec(submitted.stderr)![1]!;
    const read = cli(['jobs', 'read', id, ...common]);
    assert.equal((JSON.parse(read.stdout) as { state: string }).state, 'completed');
    const tail = cli(['jobs', 'tail', id, ...common, '--after', '2', '--json']);
    assert.equal(tail.status, 0, tail.stderr);
    const sequences = tail.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { sequence: number }).sequence);
    assert.equal(sequences[0], 3);
    const cancelled = cli(['jobs', 'cancel', id, ...common]);
    assert.equal((JSON.parse(cancelled.stdout) as { state: string }).state, 'completed', 'a finished job is returned unchanged');
  });

  it('sessions create, run --session ID:REVISION, sessions read and delete', () => {
    const common = ['--config', config, '--url', url];
    const created = cli(['sessions', 'create', ...common, '--provider', 'mock', '--model', 'demo']);
    assert.equal(created.status, 0, created.stderr);
    const id = (JSON.parse(created.stdout) as { session: { id: string } }).session.id;
    const turn = cli(['run', ...common, '--provider', 'mock', '--model', 'demo', '--input', 'first turn', '--session', `${id}:0`]);
    assert.equal(turn.status, 0, turn.stderr);
    const stale = cli(['run', ...common, '--provider', 'mock', '--model', 'demo', '--input', 'again', '--session', `${id}:0`]);
    assert.equal(errorOf(stale.stderr).code, 'SESSION_REVISION_CONFLICT');
    const read = JSON.parse(cli(['sessions', 'read', id, ...common]).stdout) as { session: { revision: number }; history: { content: string }[] };
    assert.deepEqual([read.session.revision, read.history.map((message) => message.content)], [1, ['first turn', 'first turn']]);
    assert.deepEqual(JSON.parse(cli(['sessions', 'delete', id, ...common]).stdout), { id, deleted: true });
    // --native asks for mode native, which the mock provider does not offer (it replays history).
    const native = cli(['sessions', 'create', ...common, '--provider', 'mock', '--model', 'demo', '--native']);
    assert.equal(native.status, 1);
    assert.equal(errorOf(native.stderr).code, 'UNSUPPORTED_CONTINUATION');
  });

});
