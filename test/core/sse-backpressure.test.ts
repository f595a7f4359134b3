/**
 * Issue 13, defect 3: a client that stops reading must not hold its run slot (or memory)
 * forever, and back-pressure must not leave listeners behind. Real sockets on loopback.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { RunEvent } from '../../src/protocol/schemas.js';
import { writeEventStream } from '../../src/http/sse.js';
import { echoTool, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

const STALL_MS = 1500;
/** A host tool whose output (shown in `tool.completed`) is close to the 1 MB cap. */
const blob = {
  name: 'blob',
  description: 'Returns a large value.',
  inputSchema: { type: 'object' },
  execute: () => ({ data: 'x'.repeat(900_000) }),
};

/** Sends one raw HTTP request and returns the socket once the response head arrived. */
async function rawRequest(url: string, path: string, body: string, headers: Record<string, string>): Promise<{ socket: Socket; received: () => number }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => {
      const head = [`POST ${path} HTTP/1.1`, `host: ${hostname}:${port}`, `content-length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
    });
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes === chunk.length) resolve();
    });
  });
  return { socket, received: () => bytes };
}

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
}

describe('SSE write stalls', () => {
  let host: TestHost;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  before(async () => {
    process.on('warning', onWarning);
    host = await startTestHost(
      {
        limits: { maxConcurrentRunsPerSubject: 1, writeStallTimeoutMs: STALL_MS },
        tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['blob'] }],
      },
      { tools: [echoTool, blob] },
    );
  });
  after(async () => {
    process.off('warning', onWarning);
    await host.close();
    rmSync(host.dir, { recursive: true, force: true });
  });

  it('destroys the connection of a client that stops reading and frees its run slot', async () => {
    // 24 tool outputs of 900 kB, each its own frame: far more than the socket buffers take
    // while nobody reads.
    const calls = Array.from({ length: 24 }, () => ({ toolCall: { name: 'blob', arguments: {} } }));
    const input = script(calls, [{ text: 'done' }]);
    const body = JSON.stringify({ provider: 'mock', model: 'demo', input, tools: ['blob'] });
    const stuck = await rawRequest(host.url, '/v1/runs', body, {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    });
    stuck.socket.pause();
    const started = Date.now();

    const busy = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'hello' });
    assert.equal(busy.status, 429, 'the stalled run still holds the only slot of its subject');
    assert.equal(((await busy.json()) as { error: { code: string } }).error.code, 'BUSY');

    let status = 0;
    while (Date.now() - started < STALL_MS + 15_000) {
      const response = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'hello' });
      status = response.status;
      await response.arrayBuffer();
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 200, 'the slot is free again once the stall timeout destroyed the connection');
    assert.ok(Date.now() - started >= STALL_MS - 50, 'not before the stall timeout');

    // The connection really is gone: reading what the kernel still held ends in a close.
    stuck.socket.resume();
    await closed(stuck.socket);
    assert.ok(stuck.received() < 24 * 900_000, `the client never got the whole stream (${stuck.received()} bytes)`);

    const db = new Database(join(host.dir, 'state', 'agenticdriver.sqlite'), { readonly: true });
    try {
      const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      assert.equal(count('SELECT COUNT(*) AS n FROM usage_records'), 2, 'the stalled run and the next one are both recorded');
      assert.equal(count('SELECT COUNT(*) AS n FROM runs WHERE start_record IS NOT NULL'), 0, 'nothing is left in flight');
    } finally {
      db.close();
    }
    assert.deepEqual(warnings.map((w) => w.name), []);
  });
});

describe('SSE back-pressure episodes', () => {
  let app: FastifyInstance;
  let url: string;
  const observed = { episodes: 0, maxCloseListeners: 0, maxErrorListeners: 0, maxDrainListeners: 0 };
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);

  before(async () => {
    process.on('warning', onWarning);
    app = Fastify();
    app.get('/stream', async (_request, reply) => {
      const res = reply.raw;
      res.on('drain', () => (observed.episodes += 1));
      async function* events(): AsyncGenerator<RunEvent> {
        for (let sequence = 1; sequence <= 400; sequence += 1) {
          observed.maxCloseListeners = Math.max(observed.maxCloseListeners, res.listenerCount('close'));
          observed.maxErrorListeners = Math.max(observed.maxErrorListeners, res.listenerCount('error'));
          observed.maxDrainListeners = Math.max(observed.maxDrainListeners, res.listenerCount('drain'));
          yield { type: 'text.delta', runId: 'r', sequence, timestamp: new Date().toISOString(), text: 'y'.repeat(64 * 1024) } as RunEvent;
        }
      }
      await writeEventStream(reply, events(), { heartbeatMs: 60_000, writeStallMs: 10_000 });
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address() as { port: number };
    url = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    process.off('warning', onWarning);
    await app.close();
  });

  it('a slow reader causes many episodes and no listener build-up or MaxListenersExceededWarning', async () => {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    socket.write(`GET /stream HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n\r\n`);
    let bytes = 0;
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // Reads in bursts with pauses, so the server meets back-pressure again and again.
      socket.pause();
      setTimeout(() => socket.resume(), 2);
    });
    await closed(socket);
    assert.ok(bytes > 400 * 64 * 1024, 'every frame arrived');
    assert.ok(observed.episodes >= 20, `expected many back-pressure episodes, saw ${observed.episodes}`);
    assert.ok(observed.maxCloseListeners <= 4, `close listeners grew to ${observed.maxCloseListeners}`);
    assert.ok(observed.maxErrorListeners <= 4, `error listeners grew to ${observed.maxErrorListeners}`);
    assert.ok(observed.maxDrainListeners <= 2, `drain listeners grew to ${observed.maxDrainListeners}`);
    assert.deepEqual(warnings.map((w) => w.name), []);
  });
});
