/** Structured logs: one JSON line per request and per run, nothing secret or prompt-like in any of them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHostLogger } from '../../src/http/logging.js';
import { script, startTestHost, TOKEN } from '../support/host.js';

const PROMPT = 'planted-log-prompt-9e41-never-logged';
const run = { provider: 'mock', model: 'demo' };

function memory() {
  const lines: string[] = [];
  return { lines, destination: { write: (chunk: string) => void lines.push(...chunk.split('\n').filter((line) => line !== '')) } };
}

describe('structured logs', () => {
  it('one line per request and per run, with ids, subject, status and duration; no secret or content', async () => {
    const sink = memory();
    const host = await startTestHost({}, { log: createHostLogger({ destination: sink.destination, pretty: false }) });
    try {
      assert.equal((await host.post('/v1/runs', { ...run, input: PROMPT })).status, 200);
      assert.equal((await host.post('/v1/runs', { ...run, input: script([{ error: { code: 'PROVIDER_ERROR', message: PROMPT } }]) })).status, 502);
      assert.equal((await fetch(`${host.url}/v1/protocol`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status, 401);
      assert.equal((await fetch(`${host.url}/v1/${TOKEN}?q=${PROMPT}`, { headers: host.headers() })).status, 404);
      assert.equal((await fetch(`${host.url}/health`)).status, 200);
    } finally {
      await host.close();
    }
    const records = sink.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = records.filter((line) => line.kind === 'request');
    const runs = records.filter((line) => line.kind === 'run');
    assert.equal(requests.length, 5);
    assert.equal(runs.length, 2);
    for (const line of requests) {
      assert.match(String(line.requestId), /^[0-9a-f-]{36}$/);
      assert.equal(typeof line.durationMs, 'number');
      assert.equal(typeof line.status, 'number');
      assert.equal(line.level, 'info');
      assert.match(String(line.time), /^\d{4}-\d{2}-\d{2}T/);
    }
    assert.deepEqual(
      requests.map((line) => [line.method, line.route, line.status, line.subject ?? null]),
      [
        ['POST', '/v1/runs', 200, 'test-user'],
        ['POST', '/v1/runs', 502, 'test-user'],
        ['GET', '/v1/protocol', 401, null],
        ['GET', 'unmatched', 404, 'test-user'],
        ['GET', '/health', 200, null],
      ],
    );
    assert.deepEqual(
      runs.map((line) => [line.status, line.errorCode ?? null, line.subject, line.tokenId, line.provider, line.model]),
      [
        ['completed', null, 'test-user', 'main', 'mock', 'demo'],
        ['failed', 'PROVIDER_ERROR', 'test-user', 'main', 'mock', 'demo'],
      ],
    );
    for (const line of runs) assert.match(String(line.runId), /^[0-9a-f-]{36}$/);
    const all = sink.lines.join('\n');
    assert.equal(all.includes(PROMPT), false);
    assert.equal(all.includes(TOKEN), false);
  });

  it('redacts secret-bearing keys, and prints human-readable lines on a terminal', () => {
    const json = memory();
    createHostLogger({ destination: json.destination, pretty: false }).info({ authorization: `Bearer ${TOKEN}`, nested: { token: TOKEN, input: PROMPT } }, 'x');
    assert.equal(json.lines.join('').includes(TOKEN), false);
    assert.equal(json.lines.join('').includes(PROMPT), false);
    const pretty = memory();
    createHostLogger({ destination: pretty.destination, pretty: true }).info({ kind: 'run', runId: 'r1', status: 'completed', durationMs: 12 }, 'run');
    assert.match(pretty.lines[0]!, /^\d{2}:\d{2}:\d{2}\.\d{3} INFO  run runId=r1 status=completed durationMs=12$/);
  });
});
