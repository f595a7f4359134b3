/**
 * Run records in AgenticClient: readRun, runEvents and followRun over real loopback HTTP — the
 * record and page rules shared with the other clients, followRun's resumption (Last-Event-ID)
 * against a loopback SSE server that drops its connections, and the same calls against the real host.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgenticClient, DriverError } from '../../src/client/index.js';
import { OTHER_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

type Json = Record<string, any>;

const RUN = '00000000-0000-4000-8000-000000000002';
const T0 = '2026-09-21T12:00:00.000Z';
const T1 = '2026-09-22T12:00:00.000Z';

let server: Server;
let url: string;
const routes = new Map<string, (request: IncomingMessage, response: ServerResponse) => void>();
const seen: { path: string; lastEventId: string | undefined; body: string }[] = [];

before(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      seen.push({ path, lastEventId: request.headers['last-event-id'] as string | undefined, body });
      const route = routes.get(path);
      if (route) route(request, response);
      else json(response, 404, { error: { code: 'RUN_NOT_FOUND', message: 'No such run.', retryable: false } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  routes.clear();
  seen.length = 0;
});

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json', 'AgenticDriver-Version': '1.0' });
  response.end(JSON.stringify(value));
}
const answer = (value: unknown) => (_request: IncomingMessage, response: ServerResponse) => json(response, 200, value);
const client = () => new AgenticClient({ url, token: 'client-token' });
const failure = async (call: () => Promise<unknown>): Promise<DriverError> => {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof DriverError, String(error));
    return error;
  }
  assert.fail('expected a DriverError');
};

const ev = (type: string, sequence: number, extra: Json = {}): Json => ({ type, runId: RUN, sequence, timestamp: T0, ...extra });
const result = (extra: Json = {}): Json => ({ runId: RUN, provider: 'mock', model: 'demo', text: 'hi', usage: {}, steps: 1, finishReason: 'stop', ...extra });
const log = (): Json[] => [ev('run.started', 1, { provider: 'mock', model: 'demo' }), ev('step.started', 2, { step: 1 }), ev('text.delta', 3, { text: 'hi' }), ev('run.completed', 4, { result: result() })];
const run = (extra: Json = {}): Json => ({ runId: RUN, mode: 'attached', provider: 'mock', model: 'demo', state: 'completed', cursor: 4, createdAt: T0, updatedAt: T0, expiresAt: T1, result: result(), ...extra });
const running = (extra: Json = {}): Json => {
  const { expiresAt: _e, result: _r, ...rest } = run({ state: 'running', cursor: 2, ...extra });
  return { ...rest, ...extra };
};

describe('readRun and runEvents', () => {
  it('reads the run asked for and checks RunInfo against itself', async () => {
    routes.set('/v1/runs/read', answer(run()));
    const read = await client().readRun(RUN);
    assert.equal(read.state, 'completed');
    assert.deepEqual(JSON.parse(seen[0]!.body), { runId: RUN });
    const cases: [string, Json][] = [
      ['another run', run({ runId: '00000000-0000-4000-8000-000000000009', result: result({ runId: '00000000-0000-4000-8000-000000000009' }) })],
      ['expiresAt while running', run({ state: 'running', result: undefined })],
      ['a result while failed', run({ state: 'failed' })],
      ['an error while completed', run({ error: { code: 'X', message: 'x', retryable: false } })],
      ['a jobId on an attached run', run({ jobId: '00000000-0000-4000-8000-000000000001' })],
      ['no jobId on a background run', run({ mode: 'background' })],
      ['a result of another model', run({ result: result({ model: 'other' }) })],
      ['updatedAt before createdAt', run({ createdAt: T1, expiresAt: '2026-09-23T12:00:00.000Z' })],
      ['an unknown state', run({ state: 'paused' })],
    ];
    for (const [name, value] of cases) {
      routes.set('/v1/runs/read', answer(value));
      assert.equal((await failure(() => client().readRun(RUN))).code, 'INVALID_RESPONSE', name);
    }
  });

  it('checks the run id and page request before sending, and passes RUN_NOT_FOUND through', async () => {
    assert.equal((await failure(() => client().readRun('not-a-uuid'))).code, 'INVALID_RUN_READ');
    assert.equal((await failure(() => client().runEvents({ runId: RUN, after: -1 }))).code, 'INVALID_RUN_CURSOR');
    assert.equal(seen.length, 0);
    const missing = await failure(() => client().readRun(RUN));
    assert.equal(missing.code, 'RUN_NOT_FOUND');
  });

  it('accepts a whole page and refuses every broken page rule', async () => {
    const page = (extra: Json = {}): Json => ({ run: run(), events: log(), nextCursor: 4, hasMore: false, ...extra });
    routes.set('/v1/runs/events', answer(page()));
    assert.equal((await client().runEvents({ runId: RUN, after: 0 })).events.length, 4);
    const events = log();
    const cases: [string, Json][] = [
      ['another run', page({ run: run({ runId: '00000000-0000-4000-8000-000000000009', result: result({ runId: '00000000-0000-4000-8000-000000000009' }) }) })],
      ['an event of another run', page({ events: [events[0], { ...events[1], runId: '00000000-0000-4000-8000-000000000009' }, events[2], events[3]] })],
      ['a gap', page({ events: [events[0], { ...events[1], sequence: 3 }, events[2], events[3]] })],
      ['run.started not first', page({ events: [events[1], events[0], events[2], events[3]].map((e, i) => ({ ...e, sequence: i + 1 })) })],
      ['beyond the cursor', page({ run: running({ cursor: 3 }), events: events.slice(0, 4) })],
      ['a terminal event in a running run', page({ run: running({ cursor: 4 }) })],
      ['nextCursor not the last sequence', page({ nextCursor: 3 })],
      ['hasMore at the end', page({ hasMore: true })],
    ];
    for (const [name, value] of cases) {
      routes.set('/v1/runs/events', answer(value));
      assert.equal((await failure(() => client().runEvents({ runId: RUN, after: 0 }))).code, 'INVALID_RESPONSE', name);
    }
  });
});

describe('followRun', () => {
  const frame = (event: Json): string => `id: ${event.sequence}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  function stream(connections: ((response: ServerResponse, from: number) => void)[]): void {
    let count = 0;
    routes.set(`/v1/runs/${RUN}/stream`, (request, response) => connections[Math.min(count++, connections.length - 1)]!(response, Number(request.headers['last-event-id'])));
  }
  const open = (response: ServerResponse) => response.writeHead(200, { 'Content-Type': 'text/event-stream', 'AgenticDriver-Version': '1.0' });
  const sendAndDrop = (to: number) => (response: ServerResponse, from: number) => {
    open(response);
    response.write(log().slice(from, to).map(frame).join(''), () => response.socket?.destroy());
  };
  const sendToEnd = (response: ServerResponse, from: number) => {
    open(response);
    response.end(log().slice(from).map(frame).join(''));
  };
  async function follow(options: Parameters<AgenticClient['followRun']>[1] = {}): Promise<number[]> {
    const sequences: number[] = [];
    for await (const event of client().followRun(RUN, { initialDelayMs: 5, ...options })) sequences.push(event.sequence);
    return sequences;
  }
  const streamRequests = () => seen.filter((entry) => entry.path.endsWith('/stream'));

  it('resumes after a dropped connection with Last-Event-ID, without repeating or skipping', async () => {
    routes.set('/v1/runs/read', answer(running({ cursor: 1 })));
    stream([sendAndDrop(2), sendToEnd]);
    assert.deepEqual(await follow(), [1, 2, 3, 4]);
    assert.deepEqual(streamRequests().map((entry) => entry.lastEventId), ['0', '2']);
  });

  it('starts after `after`, and refuses an `after` beyond the run\'s cursor before opening a stream', async () => {
    routes.set('/v1/runs/read', answer(running({ cursor: 2 })));
    stream([sendToEnd]);
    assert.deepEqual(await follow({ after: 2 }), [3, 4]);
    seen.length = 0;
    assert.equal((await failure(() => follow({ after: 3 }))).code, 'INVALID_RUN_CURSOR');
    assert.equal((await failure(() => follow({ after: -1 }))).code, 'INVALID_RUN_CURSOR');
    assert.equal(streamRequests().length, 0);
  });

  it('gives up with RUN_STREAM_LOST after maxAttempts failed connections in a row', async () => {
    routes.set('/v1/runs/read', answer(running()));
    stream([sendAndDrop(0)]);
    const error = await failure(() => follow({ maxAttempts: 3 }));
    assert.equal(error.code, 'RUN_STREAM_LOST');
    assert.equal(error.retryable, true);
    assert.equal(streamRequests().length, 3);
  });

  it('refuses a stream that repeats an event, and does not open one for a finished run read to its end', async () => {
    routes.set('/v1/runs/read', answer(running()));
    stream([(response) => {
      open(response);
      response.end([log()[0]!, log()[0]!].map(frame).join(''));
    }]);
    assert.equal((await failure(() => follow())).code, 'INVALID_STREAM');
    seen.length = 0;
    routes.set('/v1/runs/read', answer(run()));
    assert.deepEqual(await follow({ after: 4 }), []);
    assert.equal(streamRequests().length, 0);
  });
});

describe('run records against the real host', () => {
  let host: TestHost;
  let real: AgenticClient;
  before(async () => {
    host = await startTestHost({
      tokens: [
        { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], jobs: ['submit', 'read'] },
        { id: 'other', subject: 'another-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], jobs: ['submit', 'read'] },
      ],
      jobs: { retentionMs: 60_000, pollIntervalMs: 20 },
    });
    real = new AgenticClient({ url: host.url, token: TOKEN });
  });
  after(() => host.close());

  it('reads back an attached run, pages and follows its events; another subject gets RUN_NOT_FOUND', async () => {
    const answered = await real.run({ provider: 'mock', model: 'demo', input: 'read me back' });
    const read = await real.readRun(answered.runId);
    assert.equal(read.mode, 'attached');
    assert.equal(read.state, 'completed');
    assert.deepEqual(read.result, answered);
    const followed = [];
    for await (const event of real.followRun(answered.runId)) followed.push(event);
    assert.equal(followed.at(-1)!.type, 'run.completed');
    const page = await real.runEvents({ runId: answered.runId, after: 0 });
    assert.deepEqual(page.events, followed);
    const other = new AgenticClient({ url: host.url, token: OTHER_TOKEN });
    assert.equal((await failure(() => other.readRun(answered.runId))).code, 'RUN_NOT_FOUND');
  });

  it('follows a background run to its end and resumes from the middle', async () => {
    const job = await real.submitJob({ key: `follow-${Date.now()}`, request: { provider: 'mock', model: 'demo', input: script([{ text: 'a' }, { text: 'b' }]) } });
    const followed = [];
    for await (const event of real.followRun(job.runId)) followed.push(event);
    const last = followed.at(-1)!;
    assert.equal(last.type === 'run.completed' && last.result.text, 'ab');
    const rest: number[] = [];
    for await (const event of real.followRun(job.runId, { after: 2 })) rest.push(event.sequence);
    assert.deepEqual(rest, followed.slice(2).map((event) => event.sequence));
    const read = await real.readRun(job.runId);
    assert.equal(read.mode, 'background');
    assert.equal(read.jobId, job.id);
  });
});
