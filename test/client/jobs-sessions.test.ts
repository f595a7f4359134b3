/**
 * Sessions and durable jobs in AgenticClient (extensions §1, §2), over real loopback HTTP:
 * request checks before sending, receipt and record invariants, the job event page rules
 * shared with the other clients, tailJob's resumption against a loopback SSE server that
 * drops its connections, and the same calls against the real host.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgenticClient, DriverError } from '../../src/client/index.js';
import { OTHER_TOKEN, RESTRICTED_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

type Json = Record<string, any>;
type Route = (request: IncomingMessage, response: ServerResponse, body: string) => void;

const JOB = '00000000-0000-4000-8000-000000000001';
const RUN = '00000000-0000-4000-8000-000000000002';
const SESSION = '12345678-1234-4234-8234-123456789abc';
const T0 = '2026-09-21T12:00:00.000Z';
const T1 = '2026-09-22T12:00:00.000Z';

const routes = new Map<string, Route>();
const seen: { path: string; lastEventId: string | undefined; body: string }[] = [];
let server: Server;
let url: string;

before(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      seen.push({ path, lastEventId: request.headers['last-event-id'] as string | undefined, body });
      const route = routes.get(path);
      if (route) route(request, response, body);
      else json(response, 404, { error: { code: 'NOT_FOUND', message: 'no route', retryable: false } });
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

const answer = (value: unknown): Route => (_request, response) => json(response, 200, value);

function client(): AgenticClient {
  return new AgenticClient({ url, token: 'test-token' });
}

async function failure(call: () => Promise<unknown>): Promise<DriverError> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof DriverError, `expected a DriverError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

const codeOf = async (call: () => Promise<unknown>): Promise<string> => (await failure(call)).code;

function job(overrides: Json = {}): Json {
  return { id: JOB, runId: RUN, provider: 'mock', model: 'demo', state: 'completed', cursor: 4, cancelRequested: false, createdAt: T0, updatedAt: T0, expiresAt: T1, ...overrides };
}

function runningJob(overrides: Json = {}): Json {
  const { expiresAt: _finishedOnly, ...live } = job({ state: 'running', cursor: 0 });
  return { ...live, ...overrides };
}

function ev(type: string, sequence: number, payload: Json = {}): Json {
  return { type, runId: RUN, sequence, timestamp: T0, ...payload };
}

const result = (overrides: Json = {}): Json => ({ runId: RUN, provider: 'mock', model: 'demo', text: 'Hello', usage: {}, steps: 1, finishReason: 'stop', ...overrides });

/** The four events of a completed job: run.started, step.started, text.delta, run.completed. */
function log(): Json[] {
  return [ev('run.started', 1, { provider: 'mock', model: 'demo' }), ev('step.started', 2, { step: 1 }), ev('text.delta', 3, { text: 'Hello' }), ev('run.completed', 4, { result: result() })];
}

function page(overrides: Json = {}): Json {
  return { job: job(), events: log(), nextCursor: 4, hasMore: false, ...overrides };
}

function session(overrides: Json = {}): Json {
  return { id: SESSION, revision: 0, provider: 'mock', model: 'demo', mode: 'history', state: 'ready', createdAt: T0, updatedAt: T0, expiresAt: T1, ...overrides };
}

describe('sessions', () => {
  const create = { provider: 'mock', model: 'demo', mode: 'history' as const, history: [{ role: 'user' as const, content: 'hi' }], instructions: 'Be brief.' };
  const snapshot = (overrides: Json = {}): Json => ({ session: session(), history: [{ role: 'user', content: 'hi' }], instructions: 'Be brief.', ...overrides });

  it('creates a session whose receipt echoes the request', async () => {
    routes.set('/v1/sessions/create', answer(snapshot()));
    const created = await client().createSession(create);
    assert.equal(created.session.id, SESSION);
    assert.deepEqual(JSON.parse(seen[0]!.body), create);
  });

  it('refuses a create receipt that does not echo provider, mode, revision 0, ready, history or instructions', async () => {
    const broken: Json[] = [
      snapshot({ session: session({ provider: 'other' }) }),
      snapshot({ session: session({ mode: 'native' }) }),
      snapshot({ session: session({ revision: 1 }) }),
      snapshot({ session: session({ state: 'interrupted' }) }),
      snapshot({ history: [] }),
      snapshot({ history: [{ role: 'assistant', content: 'hi' }] }),
      snapshot({ instructions: undefined }),
      snapshot({ session: session({ expiresAt: T0 }) }),
    ];
    for (const value of broken) {
      routes.set('/v1/sessions/create', answer(value));
      assert.equal(await codeOf(() => client().createSession(create)), 'INVALID_RESPONSE', JSON.stringify(value));
    }
  });

  it('checks a session request and id before sending anything', async () => {
    assert.equal(await codeOf(() => client().createSession({ ...create, mode: 'memory' } as never)), 'INVALID_SESSION');
    assert.equal(await codeOf(() => client().createSession({ ...create, subject: 'x' } as never)), 'INVALID_SESSION');
    assert.equal(await codeOf(() => client().readSession('not-a-uuid')), 'INVALID_SESSION');
    assert.equal(await codeOf(() => client().deleteSession('')), 'INVALID_SESSION');
    assert.equal(seen.length, 0);
  });

  it('reads only the session asked for, and a running session has no expiry', async () => {
    routes.set('/v1/sessions/read', answer(snapshot()));
    assert.equal((await client().readSession(SESSION)).session.revision, 0);
    assert.deepEqual(JSON.parse(seen[0]!.body), { id: SESSION });
    routes.set('/v1/sessions/read', answer(snapshot({ session: session({ id: '12345678-1234-4234-8234-123456789def' }) })));
    assert.equal(await codeOf(() => client().readSession(SESSION)), 'INVALID_RESPONSE');
    routes.set('/v1/sessions/read', answer(snapshot({ session: session({ state: 'running' }) })));
    assert.equal(await codeOf(() => client().readSession(SESSION)), 'INVALID_RESPONSE');
  });

  it('deletes only with a receipt that names the session and says deleted: true', async () => {
    routes.set('/v1/sessions/delete', answer({ id: SESSION, deleted: true }));
    assert.deepEqual(await client().deleteSession(SESSION), { id: SESSION, deleted: true });
    for (const value of [{ id: SESSION, deleted: false }, { id: SESSION }, { id: SESSION, deleted: 'true' }, { id: '12345678-1234-4234-8234-123456789def', deleted: true }]) {
      routes.set('/v1/sessions/delete', answer(value));
      assert.equal(await codeOf(() => client().deleteSession(SESSION)), 'INVALID_RESPONSE', JSON.stringify(value));
    }
    // A schema-valid receipt for another session breaks a rule of protocol/rules.json, which the error names (as in every client).
    await assert.rejects(client().deleteSession(SESSION), (error: DriverError) => error.code === 'INVALID_RESPONSE' && error.message.includes('[sessionDeleted.id]'));
  });

  it('passes a host error through with its code', async () => {
    routes.set('/v1/sessions/read', (_request, response) => json(response, 404, { error: { code: 'SESSION_NOT_FOUND', message: 'gone', retryable: false } }));
    assert.equal(await codeOf(() => client().readSession(SESSION)), 'SESSION_NOT_FOUND');
  });
});

describe('job records', () => {
  const submission = { key: 'nightly-1', request: { provider: 'mock', model: 'demo', input: 'Hello' } };

  it('submits, reads and cancels, checking the job against the call', async () => {
    routes.set('/v1/jobs/submit', answer(runningJob()));
    routes.set('/v1/jobs/read', answer(job()));
    routes.set('/v1/jobs/cancel', answer(job({ state: 'cancelled', cancelRequested: true })));
    assert.equal((await client().submitJob(submission)).state, 'running');
    assert.equal((await client().readJob(JOB)).cursor, 4);
    assert.equal((await client().cancelJob(JOB)).state, 'cancelled');
    assert.deepEqual(seen.map((entry) => [entry.path, JSON.parse(entry.body)]), [
      ['/v1/jobs/submit', submission],
      ['/v1/jobs/read', { id: JOB }],
      ['/v1/jobs/cancel', { id: JOB }],
    ]);
  });

  it('refuses a submit answer for another provider or model, and a read answer for another job', async () => {
    routes.set('/v1/jobs/submit', answer(runningJob({ model: 'other' })));
    assert.equal(await codeOf(() => client().submitJob(submission)), 'INVALID_RESPONSE');
    routes.set('/v1/jobs/read', answer(job({ id: '00000000-0000-4000-8000-000000000003' })));
    assert.equal(await codeOf(() => client().readJob(JOB)), 'INVALID_RESPONSE');
  });

  it('enforces the JobInfo invariants', async () => {
    const queued = runningJob({ state: 'queued' });
    const broken: Json[] = [
      job({ expiresAt: undefined }), // finished without expiry
      runningJob({ expiresAt: T1 }), // live with expiry
      job({ expiresAt: T0 }), // expiry not after the update
      job({ updatedAt: '2026-09-21T11:59:59.999Z' }), // updated before created
      { ...queued, cursor: 1 }, // queued with events
      job({ cursor: 1 }), // finished without run.started + terminal
      job({ cancelRequested: 'false' }),
      job({ createdAt: '2026-09-21T12:00:00Z' }), // not millisecond precision
    ];
    for (const value of broken) {
      routes.set('/v1/jobs/read', answer(value));
      assert.equal(await codeOf(() => client().readJob(JOB)), 'INVALID_RESPONSE', JSON.stringify(value));
    }
    routes.set('/v1/jobs/read', answer(queued));
    assert.equal((await client().readJob(JOB)).state, 'queued');
  });

  it('checks submissions and ids before sending anything', async () => {
    assert.equal(await codeOf(() => client().submitJob({ key: '', request: submission.request })), 'INVALID_JOB');
    assert.equal(await codeOf(() => client().submitJob({ ...submission, extra: 1 } as never)), 'INVALID_JOB');
    assert.equal(await codeOf(() => client().readJob('00000000-0000-4000-8000-00000000000A')), 'INVALID_JOB');
    assert.equal(await codeOf(() => client().jobEvents({ id: JOB, after: -1 })), 'INVALID_JOB_CURSOR');
    assert.equal(await codeOf(() => client().jobEvents({ id: JOB, after: 0, limit: 101 })), 'INVALID_JOB_CURSOR');
    assert.equal(seen.length, 0);
  });
});

describe('job event pages', () => {
  async function pageCode(value: Json, request: { after: number; limit?: number } = { after: 0 }): Promise<string> {
    routes.set('/v1/jobs/events', answer(value));
    try {
      await client().jobEvents({ id: JOB, ...request });
      return 'none';
    } catch (error) {
      assert.ok(error instanceof DriverError);
      return error.code;
    }
  }

  it('accepts whole, middle, empty-at-cursor and interrupted pages', async () => {
    assert.equal(await pageCode(page()), 'none');
    assert.equal(await pageCode(page({ events: log().slice(1, 3), nextCursor: 3, hasMore: true }), { after: 1, limit: 2 }), 'none');
    assert.equal(await pageCode(page({ events: [], nextCursor: 4 }), { after: 4 }), 'none');
    const interrupted = [...log().slice(0, 3), ev('run.failed', 4, { error: { code: 'JOB_INTERRUPTED', message: 'interrupted', retryable: false, outcome: 'uncertain' } })];
    assert.equal(await pageCode(page({ job: job({ state: 'interrupted' }), events: interrupted })), 'none');
    const live = runningJob({ cursor: 3 });
    assert.equal(await pageCode(page({ job: live, events: log().slice(0, 3), nextCursor: 3 })), 'none');
  });

  it('refuses every broken page rule with INVALID_RESPONSE', async () => {
    const events = log();
    const cases: [string, Json, { after: number; limit?: number }?][] = [
      ['another job', page({ job: job({ id: '00000000-0000-4000-8000-000000000003' }) })],
      ['more events than the limit', page(), { after: 0, limit: 3 }],
      ['an unknown type even when optional', page({ events: [events[0], events[1], ev('future.event', 3, { optional: true }), events[3]] })],
      ['another run', page({ events: [events[0], events[1], { ...events[2], runId: '00000000-0000-4000-8000-000000000009' }, events[3]] })],
      ['a gap', page({ events: [events[0], events[1], { ...events[2], sequence: 9 }, events[3]] })],
      ['not starting after `after`', page({ events: events.slice(1), nextCursor: 4 }), { after: 0 }],
      ['beyond the cursor', page({ job: runningJob({ cursor: 2 }), events: events.slice(0, 3), nextCursor: 3 })],
      ['run.started not first', page({ events: [events[1], events[0], events[2], events[3]].map((e, i) => ({ ...e, sequence: i + 1 })) })],
      ['run.started twice', page({ events: [events[0], ev('run.started', 2, { provider: 'mock', model: 'demo' }), events[2], events[3]] })],
      ['run.started for another model', page({ events: [{ ...events[0], model: 'other' }, ...events.slice(1)] })],
      ['an approval event', page({ events: [events[0], events[1], ev('approval.resolved', 3, { resolution: { approvalId: 'a', runId: RUN, callId: 'c', outcome: 'approved', decidedAt: T0 } }), events[3]] })],
      ['a terminal event before the cursor', page({ job: job({ cursor: 5 }), events: [...events.slice(0, 3), events[3], ev('text.delta', 5, { text: '!' })], nextCursor: 5 })],
      ['a terminal event in a running job', page({ job: runningJob({ cursor: 4 }) })],
      ['no terminal event at the cursor of a finished job', page({ events: [...events.slice(0, 3), ev('text.delta', 4, { text: '!' })] })],
      ['run.completed for a failed job', page({ job: job({ state: 'failed' }) })],
      ['run.cancelled for a completed job', page({ events: [...events.slice(0, 3), ev('run.cancelled', 4, { error: { code: 'CANCELLED', message: 'c', retryable: false } })] })],
      ['interrupted without an uncertain outcome', page({ job: job({ state: 'interrupted' }), events: [...events.slice(0, 3), ev('run.failed', 4, { error: { code: 'JOB_INTERRUPTED', message: 'i', retryable: false } })] })],
      ['a result for another model', page({ events: [...events.slice(0, 3), ev('run.completed', 4, { result: result({ model: 'other' }) })] })],
      ['a result with a session', page({ events: [...events.slice(0, 3), ev('run.completed', 4, { result: result({ session: session({ revision: 1 }) }) })] })],
      ['nextCursor not the last sequence', page({ nextCursor: 3 })],
      ['hasMore at the end', page({ hasMore: true })],
      ['no hasMore before the end', page({ events: log().slice(0, 2), nextCursor: 2, hasMore: false })],
      ['an empty page behind the cursor', page({ events: [], nextCursor: 0, hasMore: true })],
      ['after beyond the cursor', page({ events: [], nextCursor: 5 }), { after: 5 }],
    ];
    for (const [name, value, request] of cases) assert.equal(await pageCode(value, request), 'INVALID_RESPONSE', name);
  });
});

describe('tailJob', () => {
  const frame = (event: Json): string => `id: ${event.sequence}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

  function openStream(response: ServerResponse): void {
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'AgenticDriver-Version': '1.0' });
  }

  /** A job stream whose n-th connection (from 0) is handled by `connections[n]`. */
  function jobStream(connections: ((response: ServerResponse, lastEventId: number) => void)[]): void {
    let count = 0;
    routes.set(`/v1/jobs/${JOB}/stream`, (request, response) => {
      const handle = connections[Math.min(count++, connections.length - 1)]!;
      handle(response, Number(request.headers['last-event-id']));
    });
  }

  /** Sends the log's events after `from` up to `to`, then cuts the connection (mid-frame when `partial`). */
  const sendAndDrop = (to: number, partial = false) => (response: ServerResponse, from: number) => {
    openStream(response);
    response.write(log().slice(from, to).map(frame).join('') + (partial ? 'data: {"type":"text.del' : ''), () => response.socket?.destroy());
  };

  const sendToEnd = (response: ServerResponse, from: number) => {
    openStream(response);
    response.end(': heartbeat\n\n' + log().slice(from).map(frame).join(''));
  };

  async function tail(options: Parameters<AgenticClient['tailJob']>[1] = {}): Promise<number[]> {
    const sequences: number[] = [];
    for await (const event of client().tailJob(JOB, { initialDelayMs: 5, ...options })) sequences.push(event.sequence);
    return sequences;
  }

  const streamRequests = () => seen.filter((entry) => entry.path.endsWith('/stream'));

  it('resumes after a dropped connection from the last delivered sequence, without repeating or skipping', async () => {
    routes.set('/v1/jobs/read', answer(runningJob({ cursor: 1 })));
    jobStream([sendAndDrop(2, true), sendToEnd]);
    assert.deepEqual(await tail(), [1, 2, 3, 4]);
    assert.deepEqual(streamRequests().map((entry) => entry.lastEventId), ['0', '2']);
  });

  it('starts after `after` and keeps going while each connection makes progress', async () => {
    routes.set('/v1/jobs/read', answer(runningJob({ cursor: 2 })));
    // Each connection delivers one event and drops: never two failures in a row.
    jobStream([(response, from) => sendAndDrop(from + 1)(response, from)]);
    assert.deepEqual(await tail({ after: 1, maxAttempts: 2 }), [2, 3, 4]);
    assert.deepEqual(streamRequests().map((entry) => entry.lastEventId), ['1', '2', '3']);
  });

  it('gives up with JOB_STREAM_LOST after maxAttempts failed connections in a row', async () => {
    routes.set('/v1/jobs/read', answer(runningJob()));
    jobStream([sendAndDrop(0)]);
    const error = await failure(() => tail({ maxAttempts: 3 }));
    assert.equal(error.code, 'JOB_STREAM_LOST');
    assert.equal(error.retryable, true);
    assert.ok(error.cause instanceof DriverError);
    assert.equal(streamRequests().length, 3);
  });

  it('retries a retryable host error but not a final one', async () => {
    routes.set('/v1/jobs/read', answer(runningJob()));
    jobStream([(response) => json(response, 503, { error: { code: 'HOST_SHUTTING_DOWN', message: 'later', retryable: true } }), sendToEnd]);
    assert.deepEqual(await tail(), [1, 2, 3, 4]);
    seen.length = 0;
    jobStream([(response) => json(response, 404, { error: { code: 'JOB_NOT_FOUND', message: 'gone', retryable: false } })]);
    assert.equal(await codeOf(() => tail()), 'JOB_NOT_FOUND');
    assert.equal(streamRequests().length, 1);
  });

  it('refuses a resumed stream that repeats an event instead of delivering it twice', async () => {
    routes.set('/v1/jobs/read', answer(runningJob()));
    const delivered: number[] = [];
    jobStream([sendAndDrop(2), (response) => sendToEnd(response, 1)]); // the second connection ignores Last-Event-ID
    const error = await failure(async () => {
      for await (const event of client().tailJob(JOB, { initialDelayMs: 5 })) delivered.push(event.sequence);
    });
    assert.equal(error.code, 'INVALID_STREAM');
    assert.deepEqual(delivered, [1, 2]);
  });

  it('refuses events the job stream can never carry', async () => {
    routes.set('/v1/jobs/read', answer(runningJob()));
    const started = log()[0]!;
    jobStream([(response) => {
      openStream(response);
      response.end(frame(started) + frame(ev('future.event', 2, { optional: true })));
    }]);
    assert.equal(await codeOf(() => tail()), 'UNSUPPORTED_EVENT');
    jobStream([(response) => {
      openStream(response);
      response.end(frame({ ...started, runId: '00000000-0000-4000-8000-000000000009' }));
    }]);
    assert.equal(await codeOf(() => tail()), 'INVALID_STREAM');
  });

  it('does not open the stream for a finished job the caller has read to the end', async () => {
    routes.set('/v1/jobs/read', answer(job()));
    assert.deepEqual(await tail({ after: 4 }), []);
    assert.equal(await codeOf(() => tail({ after: 5 })), 'INVALID_JOB_CURSOR');
    assert.equal(streamRequests().length, 0);
  });

  it('closes the connection when the caller stops early', async () => {
    routes.set('/v1/jobs/read', answer(runningJob()));
    let closed: Promise<void> | undefined;
    jobStream([(response) => {
      closed = new Promise((resolve) => response.once('close', () => resolve()));
      openStream(response);
      response.write(frame(log()[0]!));
    }]);
    for await (const event of client().tailJob(JOB)) {
      assert.equal(event.type, 'run.started');
      break;
    }
    await closed;
    assert.equal(streamRequests().length, 1);
  });

  it('stops waiting to reconnect when the caller aborts', async () => {
    routes.set('/v1/jobs/read', answer(runningJob()));
    jobStream([sendAndDrop(0)]);
    const controller = new AbortController();
    // Abort once the first stream was dropped (the client is then waiting 10 s to reconnect),
    // not after a fixed time that a loaded machine may not have reached that point by.
    const aborted = (async () => {
      while (streamRequests().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
    })();
    const error = await failure(() => tail({ initialDelayMs: 10_000, signal: controller.signal }));
    await aborted;
    assert.equal(error.code, 'CANCELLED');
    assert.equal(streamRequests().length, 1);
  });
});

describe('against the real host', () => {
  let host: TestHost;
  let real: AgenticClient;

  before(async () => {
    host = await startTestHost({
      tokens: [
        {
          id: 'main',
          subject: 'test-user',
          tokenRef: { env: 'AD_TEST_TOKEN' },
          providers: ['mock'],
          jobs: ['submit', 'read', 'cancel'],
          sessions: ['create', 'read', 'continue', 'delete'],
        },
        // The same subject with one more provider, and another subject with every grant.
        { id: 'other', subject: 'test-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock', 'second'], jobs: ['submit', 'read'], sessions: ['create', 'read'] },
        { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock', 'second'], jobs: ['submit', 'read'], sessions: ['create', 'read'] },
      ],
      jobs: { retentionMs: 60_000, pollIntervalMs: 20 },
      sessions: { retentionMs: 60_000 },
    });
    real = new AgenticClient({ url: host.url, token: TOKEN });
  });

  after(() => host.close());

  it('tails a job live to its end, resumes from the middle, and pages the same log', async () => {
    const submitted = await real.submitJob({ key: `tail-${Date.now()}`, request: { provider: 'mock', model: 'demo', input: script([{ stallMs: 100 }, { text: 'slow' }]) } });
    const tailed = [];
    for await (const event of real.tailJob(submitted.id)) tailed.push(event);
    assert.equal(tailed[0]!.type, 'run.started');
    const last = tailed.at(-1)!;
    assert.equal(last.type === 'run.completed' && last.result.text, 'slow');
    assert.deepEqual(tailed.map((event) => event.sequence), tailed.map((_, index) => index + 1));
    const page = await real.jobEvents({ id: submitted.id, after: 0 });
    assert.deepEqual(page.events, tailed);
    const rest: number[] = [];
    for await (const event of real.tailJob(submitted.id, { after: 2 })) rest.push(event.sequence);
    assert.deepEqual(rest, tailed.slice(2).map((event) => event.sequence));
    assert.equal((await real.cancelJob(submitted.id)).state, 'completed');
  });

  it('creates, continues, reads and deletes a session', async () => {
    const created = await real.createSession({ provider: 'mock', model: 'demo', mode: 'history', history: [{ role: 'user', content: 'I am Ada.' }] });
    const id = created.session.id;
    const result = await real.run({ provider: 'mock', model: 'demo', input: 'Hello', session: { id, revision: 0 } });
    assert.equal(result.session?.revision, 1);
    const read = await real.readSession(id);
    assert.deepEqual(read.history.map((message) => message.content), ['I am Ada.', 'Hello', result.text]);
    assert.deepEqual(await real.deleteSession(id), { id, deleted: true });
    assert.equal(await codeOf(() => real.readSession(id)), 'SESSION_NOT_FOUND');
  });

  it("lists the subject's jobs and sessions newest first, each token seeing only what it may read", async () => {
    const other = new AgenticClient({ url: host.url, token: OTHER_TOKEN });
    const stranger = new AgenticClient({ url: host.url, token: RESTRICTED_TOKEN });
    const mine = await real.submitJob({ key: `list-mock-${Date.now()}`, request: { provider: 'mock', model: 'demo', input: 'one' } });
    for await (const _ of real.tailJob(mine.id));
    const theirs = await other.submitJob({ key: `list-second-${Date.now()}`, request: { provider: 'second', model: 'demo', input: 'two' } });
    for await (const _ of other.tailJob(theirs.id));
    const ids = (jobs: { id: string }[]) => jobs.map((job) => job.id);
    // main may not use provider second: the job submitted there is not its to see.
    assert.ok(ids(await real.listJobs()).includes(mine.id));
    assert.ok(!ids(await real.listJobs()).includes(theirs.id));
    assert.deepEqual(ids(await other.listJobs({ limit: 2 })), [theirs.id, mine.id]);
    assert.deepEqual(ids(await other.listJobs({ state: 'queued' })), []);
    assert.deepEqual(await stranger.listJobs(), []);

    const first = await real.createSession({ provider: 'mock', model: 'demo', mode: 'history' });
    const second = await other.createSession({ provider: 'second', model: 'demo', mode: 'history' });
    await real.run({ provider: 'mock', model: 'demo', input: 'turn', session: { id: first.session.id, revision: 0 } });
    const listed = await other.listSessions();
    assert.deepEqual(listed.map((session) => [session.id, session.revision]), [[first.session.id, 1], [second.session.id, 0]], 'the session used last comes first');
    assert.deepEqual(ids(await real.listSessions()), [first.session.id]);
    assert.deepEqual(await stranger.listSessions(), []);
    assert.equal(await codeOf(() => real.listSessions({ limit: 0 })), 'INVALID_SESSION');
  });
});

describe('lists', () => {
  const older = job({ id: '00000000-0000-4000-8000-000000000005' });
  const newer = job({ updatedAt: '2026-09-21T12:00:01.000Z' });

  it('sends the request and returns the jobs, newest first', async () => {
    routes.set('/v1/jobs/list', answer({ jobs: [newer, older] }));
    assert.deepEqual((await client().listJobs({ state: 'completed', limit: 2 })).map((item) => item.id), [JOB, older.id]);
    assert.deepEqual(JSON.parse(seen[0]!.body), { state: 'completed', limit: 2 });
  });

  it('refuses a list out of order, with a job twice, over the limit, in another state, or with a broken job', async () => {
    for (const [jobs, request, rule] of [
      [[older, newer], {}, 'list.newestFirst'],
      [[newer, newer], {}, 'list.unique'],
      [[newer, older], { limit: 1 }, 'list.limit'],
      [[newer], { state: 'running' }, 'jobList.state'],
      [[job({ expiresAt: undefined })], {}, 'job.expiry'],
    ] as const) {
      routes.set('/v1/jobs/list', answer({ jobs }));
      const error = await failure(() => client().listJobs(request));
      assert.equal(error.code, 'INVALID_RESPONSE', JSON.stringify(jobs));
      assert.ok(error.message.endsWith(`[${rule}].`), error.message);
    }
    routes.set('/v1/sessions/list', answer({ sessions: [{ id: SESSION, revision: 0, provider: 'mock', model: 'demo', mode: 'history', state: 'running', createdAt: T0, updatedAt: T0, expiresAt: T1 }] }));
    const error = await failure(() => client().listSessions());
    assert.equal(error.code, 'INVALID_RESPONSE');
    assert.ok(error.message.endsWith('[session.expiry].'), error.message);
  });

  it('checks list requests before sending anything', async () => {
    assert.equal(await codeOf(() => client().listJobs({ limit: 101 })), 'INVALID_JOB');
    assert.equal(await codeOf(() => client().listJobs({ state: 'sleeping' as never })), 'INVALID_JOB');
    assert.equal(await codeOf(() => client().listSessions({ limit: 0 })), 'INVALID_SESSION');
    assert.deepEqual(seen, []);
  });
});
