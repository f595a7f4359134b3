/**
 * The agent protocols from Python, with their official SDKs only (issue 33): one MCP round trip
 * (`mcp`: initialize, list the tools, call `run` with progress) and one A2A round trip
 * (`a2a-sdk`: the card, a streamed message, the task read back) against a real host on loopback.
 * The SDKs come from PyPI at the versions pinned in requirements.txt, installed into the
 * gitignored .venv-interop at the repository root (created on first use; `npm test -- interop`).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

const root = join(import.meta.dirname, '..', '..');
const venv = join(root, '.venv-interop');
const requirements = join(import.meta.dirname, 'requirements.txt');

/** The venv's python, installed from the pinned requirements when they changed. */
function ensureVenv(): string {
  const python = join(venv, 'bin', 'python');
  const pinned = readFileSync(requirements, 'utf8');
  const stamp = join(venv, 'requirements.installed');
  if (existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8') === pinned) return python;
  const steps: [string, string[]][] = [
    [process.env.PYTHON ?? 'python3', ['-m', 'venv', venv]],
    [join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '-r', requirements]],
    [python, ['-c', `open(${JSON.stringify(stamp)}, 'w').write(open(${JSON.stringify(requirements)}).read())`]],
  ];
  for (const [command, args] of steps) {
    const result = spawnSync(command, args, { stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
  }
  return python;
}

/** Runs one of the round-trip scripts; its one line of JSON. */
async function roundTrip(python: string, file: string, args: string[]): Promise<Record<string, any>> {
  const child = spawn(python, [join(import.meta.dirname, file), ...args], { env: { ...process.env, AD_INTEROP_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(status, 0, stderr);
  return JSON.parse(stdout.trim()) as Record<string, any>;
}

describe('agent protocols from the official Python SDKs', () => {
  let python: string;
  let host: TestHost;
  before(async () => {
    python = ensureVenv();
    host = await startTestHost({
      mcp: {},
      a2a: { provider: 'mock', model: 'demo' },
      jobs: { retentionMs: 60_000, interactive: true, pollIntervalMs: 50 },
      tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], mcp: true, a2a: true, jobs: ['submit', 'read', 'cancel'] }],
    });
  });
  after(() => host?.close());

  it('MCP (`mcp`): lists the tools and runs an agent, with progress', async () => {
    const answer = await roundTrip(python, 'mcp_round_trip.py', [`${host.url}/mcp`, script([{ text: 'from ' }, { text: 'python' }])]);
    assert.deepEqual(answer.tools, ['run', 'submit_job', 'read_job', 'follow_job', 'cancel_job']);
    assert.equal(answer.isError, false);
    assert.equal(answer.text, 'from python');
    assert.deepEqual(answer.progress.slice(0, 2), ['run.started', 'step.started']);
    // One or two text notifications: deltas a slow reader has not taken yet arrive merged.
    assert.equal((answer.progress as string[]).slice(2).map((message) => message.replace(/^text: /, '')).join(''), 'from python');
  });

  it('A2A (`a2a-sdk`): streams a task and reads it back', async () => {
    const answer = await roundTrip(python, 'a2a_round_trip.py', [host.url, script([{ text: 'from ' }, { text: 'python' }])]);
    assert.deepEqual((answer.kinds as string[]).filter((kind, i, all) => kind !== all[i - 1]), ['task', 'status_update', 'artifact_update', 'status_update']);
    assert.equal(answer.state, 'TASK_STATE_COMPLETED');
    assert.equal(answer.text, 'from python');
  });
});
