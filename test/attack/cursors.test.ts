/**
 * Cursors are safe integers (issue 25, item 9), against a host process started by the real
 * CLI. `Last-Event-ID: 9007199254740993` (2^53 + 1) used to be read as 2^53, a neighbour of
 * what the client sent; every stream that takes a cursor (the job stream, the operator's job
 * stream, the run follow stream) now refuses anything but a whole number from 0 to 2^53 − 1
 * with 400 INVALID_JOB_CURSOR (INVALID_RUN_CURSOR for a run), before the job or run is looked
 * up — and so do the body cursors.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseSse, script } from '../support/host.js';
import { CLI_MAIN, killAll, spawnHost, type HostProcess } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'cursor-token-0123456789abcdefghijklmnop';
const OPERATOR = 'cursor-operator-0123456789abcdefghijklm';
const HOSTILE = [
  '9007199254740992', // 2^53: not safe (2^53 + 1 reads as the same number)
  '9007199254740993',
  '9999999999999999',
  '99999999999999999999',
  '1e3',
  '-1',
  '0x10',
  '01',
  '1.0',
  '',
  '1, 2',
];

describe('cursors above 2^53 are refused, not rounded (issue 25, item 9)', () => {
  const dir = tempDir('agenticdriver-cursors-');
  const children: ChildProcess[] = [];
  let host: HostProcess;
  let jobId = '';
  let runId = '';

  before(async () => {
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [
          { id: 'main', subject: 'tenant', tokenRef: { env: 'AD_CURSOR_TOKEN' }, providers: ['mock'], jobs: ['submit', 'read', 'cancel'], sessions: ['create', 'read', 'continue', 'delete'] },
          { id: 'ops', subject: 'operator', tokenRef: { env: 'AD_CURSOR_OPERATOR' }, providers: [], operator: true },
        ],
        jobs: { retentionMs: 60_000, workers: 1, pollIntervalMs: 20 },
        sessions: { retentionMs: 60_000 },
      }),
      { mode: 0o600 },
    );
    host = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--json'], { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_CURSOR_TOKEN: TOKEN, AD_CURSOR_OPERATOR: OPERATOR }, children);
    const submitted = await post('/v1/jobs/submit', { key: 'k', request: { provider: 'mock', model: 'demo', input: script([{ text: 'a' }, { text: 'b' }]) } });
    jobId = submitted.id as string;
    runId = submitted.runId as string;
    for (let state = ''; state !== 'completed'; state = (await post('/v1/jobs/read', { id: jobId })).state as string) await new Promise((resolve) => setTimeout(resolve, 20));
  });
  after(() => killAll(children));

  const post = async (path: string, body: unknown) =>
    (await (await fetch(`${host.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, unknown>;
  const stream = (path: string, token: string, lastEventId: string) => fetch(`${host.url}${path}`, { headers: { authorization: `Bearer ${token}`, 'last-event-id': lastEventId } });

  for (const [name, path, token, code, id] of [
    ['the job stream', () => `/v1/jobs/${jobId}/stream`, TOKEN, 'INVALID_JOB_CURSOR', () => jobId],
    ["the operator's job stream", () => `/v1/operator/jobs/${jobId}/stream`, OPERATOR, 'INVALID_JOB_CURSOR', () => jobId],
    ['the run follow stream', () => `/v1/runs/${runId}/stream`, TOKEN, 'INVALID_RUN_CURSOR', () => runId],
  ] as const) {
    it(`${name}: refuses every Last-Event-ID that is not a safe integer with 400 ${code}, and resumes after a good one`, async () => {
      for (const value of HOSTILE) {
        const response = await stream(path(), token, value);
        const body = (await response.json()) as { error: { code: string; message: string } };
        assert.deepEqual([response.status, body.error.code], [400, code], `Last-Event-ID ${JSON.stringify(value)}`);
      }
      // Refused before the job or run is looked up: an unknown one answers the same.
      const unknown = await stream(path().replace(id(), '00000000-0000-4000-8000-000000000000'), token, '9007199254740993');
      assert.equal(unknown.status, 400);
      // The largest safe integer is a cursor: past this job's end, said so with the exact number.
      const past = await stream(path(), token, '9007199254740991');
      assert.equal(past.status, 400);
      assert.match(((await past.json()) as { error: { message: string } }).error.message, /Last-Event-ID 9007199254740991 is past/);
      const resumed = parseSse(await (await stream(path(), token, '2')).text());
      assert.equal(resumed[0]!.sequence, 3);
      assert.equal(resumed.at(-1)!.type, 'run.completed');
    });
  }

  it('refuses body cursors and session revisions above 2^53 − 1 with 400', async () => {
    const page = await fetch(`${host.url}/v1/jobs/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: `{"id":"${jobId}","after":9007199254740993}`,
    });
    assert.equal(page.status, 400);
    assert.equal(((await page.json()) as { error: { code: string } }).error.code, 'INVALID_JOB_CURSOR');
    const runPage = await fetch(`${host.url}/v1/runs/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: `{"runId":"${runId}","after":9007199254740993}`,
    });
    assert.equal(runPage.status, 400);
    assert.equal(((await runPage.json()) as { error: { code: string } }).error.code, 'INVALID_RUN_CURSOR');
    const run = await fetch(`${host.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: `{"provider":"mock","model":"demo","input":"hi","session":{"id":"00000000-0000-4000-8000-000000000000","revision":9007199254740993}}`,
    });
    assert.equal(run.status, 400);
  });
});
