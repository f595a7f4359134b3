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

describe('handles on a followed background run (scripted host)', () => {
  const JOB = '00000000-0000-4000-8000-000000000001';
  const CALL = { id: 'call-1', name: 'lookup', arguments: { q: 'x' } };
  const frame = (event: Json): string => `id: ${event.sequence}\ndata: ${JSON.stringify(event)}\n\n`;
  const background = (extra: Json = {}): Json => running({ mode: 'background', jobId: JOB, cursor: 1, ...extra });
  const protocol = (features: string[]) => answer({ protocol: 'agenticdriver', version: '1.0', supportedVersions: ['1.0'], features });
  const approvalRequested = ev('approval.requested', 2, { approval: { approvalId: 'a-1', runId: RUN, call: CALL, requestedAt: T0, idlePolicy: 'pause' } });
  const ticket = { executionId: 'e-1', runId: RUN, call: { ...CALL, id: 'call-2' } };

  /**
   * A background run that asks for approval, then (once decided) dispatches an application tool,
   * then (once completed) ends: each part of the stream is written only after the client's answer
   * reached the host (the fence is the answer itself, never a timer).
   */
  function interactiveRun(): { decided: Promise<Json>; completed: Promise<Json> } {
    let decide!: (body: Json) => void;
    let complete!: (body: Json) => void;
    const decided = new Promise<Json>((resolve) => (decide = resolve));
    const completed = new Promise<Json>((resolve) => (complete = resolve));
    routes.set(`/v1/runs/${RUN}/stream`, (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream', 'AgenticDriver-Version': '1.0' });
      response.write(frame(approvalRequested));
      void decided.then((decision) => {
        const outcome = decision.decision === 'approve' ? 'approved' : 'denied';
        response.write(frame(ev('approval.resolved', 3, { resolution: { approvalId: 'a-1', runId: RUN, callId: 'call-1', outcome, decidedAt: T0 } })));
        response.write(frame(ev('tool.execution.requested', 4, { execution: ticket })));
      });
      void completed.then((delivered) => response.end(frame(ev('run.completed', 5, { result: result({ text: JSON.stringify(delivered.output) }) }))));
    });
    routes.set('/v1/approvals/decisions', (request, response) => {
      const decision = JSON.parse(seen.at(-1)!.body) as Json;
      json(response, 200, { approvalId: decision.approvalId, runId: decision.runId, callId: decision.call.id, outcome: 'approved', decidedAt: T0 });
      decide(decision);
    });
    routes.set('/v1/tool-executions/results', (_request, response) => {
      const delivered = JSON.parse(seen.at(-1)!.body) as Json;
      json(response, 200, { executionId: delivered.executionId, runId: delivered.runId, callId: delivered.callId, status: 'accepted' });
      complete(delivered);
    });
    return { decided, completed };
  }

  it('with interactive-jobs: the approval is decided and the tool completed through handles made from followed events', async () => {
    routes.set('/v1/protocol', protocol(['durable-jobs', 'run-records', 'interactive-jobs']));
    routes.set('/v1/runs/read', answer(background()));
    const { decided, completed } = interactiveRun();
    const c = client();
    const types: string[] = [];
    for await (const event of c.followRun(RUN, { after: 1 })) {
      types.push(event.type);
      if (event.type === 'approval.requested') assert.equal((await c.approval(event).approve()).outcome, 'approved');
      if (event.type === 'tool.execution.requested') assert.equal((await c.execution(event).complete({ found: 42 })).status, 'accepted');
      if (event.type === 'run.completed') assert.equal(event.result.text, '{"found":42}');
    }
    assert.deepEqual(types, ['approval.requested', 'approval.resolved', 'tool.execution.requested', 'run.completed']);
    assert.deepEqual(await decided, { approvalId: 'a-1', runId: RUN, call: CALL, decision: 'approve' });
    assert.deepEqual(await completed, { executionId: 'e-1', runId: RUN, callId: 'call-2', output: { found: 42 } });
  });

  it('without interactive-jobs: a followed background run that asks for approval is UNSUPPORTED_EVENT, before any handle', async () => {
    routes.set('/v1/protocol', protocol(['durable-jobs', 'run-records']));
    routes.set('/v1/runs/read', answer(background()));
    interactiveRun();
    const delivered: string[] = [];
    const error = await failure(async () => {
      for await (const event of client().followRun(RUN, { after: 1 })) delivered.push(event.type);
    });
    assert.equal(error.code, 'UNSUPPORTED_EVENT');
    assert.deepEqual(delivered, []);
    assert.equal(seen.filter((entry) => entry.path === '/v1/approvals/decisions').length, 0);
  });

  it('an attached run followed asks nothing of the host\'s features', async () => {
    routes.set('/v1/runs/read', answer(running({ cursor: 1 })));
    routes.set(`/v1/runs/${RUN}/stream`, (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream', 'AgenticDriver-Version': '1.0' });
      response.end(log().slice(1).map(frame).join(''));
    });
    for await (const _ of client().followRun(RUN, { after: 1 }));
    assert.equal(seen.filter((entry) => entry.path === '/v1/protocol').length, 0);
  });
});

describe('waitRun (scripted host)', () => {
  it('answers a finished run from its record: its result, or its error thrown', async () => {
    routes.set('/v1/runs/read', answer(run()));
    assert.equal((await client().waitRun(RUN)).text, 'hi');
    const { result: _r, ...failed } = run({ state: 'failed', error: { code: 'APPROVAL_DENIED', message: 'Denied.', retryable: false } });
    routes.set('/v1/runs/read', answer(failed));
    const error = await failure(() => client().waitRun(RUN));
    assert.deepEqual([error.code, error.retryable], ['APPROVAL_DENIED', false]);
    assert.equal(seen.filter((entry) => entry.path.endsWith('/stream')).length, 0);
  });

  it('follows a running run from its cursor to its terminal event', async () => {
    routes.set('/v1/runs/read', answer(running({ cursor: 2 })));
    routes.set(`/v1/runs/${RUN}/stream`, (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream', 'AgenticDriver-Version': '1.0' });
      const failedEnd = ev('run.failed', 4, { error: { code: 'PROVIDER_ERROR', message: 'Gone.', retryable: true, outcome: 'uncertain' } });
      response.end([log()[2]!, failedEnd].map((event) => `id: ${event.sequence}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
    });
    const error = await failure(() => client().waitRun(RUN));
    assert.deepEqual([error.code, error.retryable, error.outcome], ['PROVIDER_ERROR', true, 'uncertain']);
    assert.deepEqual(seen.filter((entry) => entry.path.endsWith('/stream')).map((entry) => entry.lastEventId), ['2']);
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

describe('a background run that waits for people, followed against the real host (jobs.interactive)', () => {
  let host: TestHost;
  let real: AgenticClient;
  let executions = 0;
  const lookup = { name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' } };
  before(async () => {
    const guarded = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => `executed ${++executions}` };
    host = await startTestHost(
      {
        tokens: [
          {
            id: 'main',
            subject: 'test-user',
            tokenRef: { env: 'AD_TEST_TOKEN' },
            providers: ['mock'],
            tools: ['guarded'],
            approveTools: ['guarded'],
            applicationTools: [{ name: 'lookup', requiresApproval: false }],
            jobs: ['submit', 'read'],
          },
        ],
        approvals: { interactive: true },
        applicationTools: { enabled: true, requireApproval: false },
        jobs: { retentionMs: 60_000, workers: 1, interactive: true },
      },
      { tools: [guarded] },
    );
    real = new AgenticClient({ url: host.url, token: TOKEN });
  });
  after(() => host.close());

  it('submitted, followed, approved and its tool completed through the handles, then its result waited for', async () => {
    const job = await real.submitJob({
      key: `handles-${Date.now()}`,
      request: {
        provider: 'mock',
        model: 'demo',
        input: script([{ toolCall: { name: 'guarded', arguments: { n: 1 }, id: 'g1' } }], [{ toolCall: { name: 'lookup', arguments: { q: 'x' }, id: 'l1' } }], [{ echoToolResults: true }]),
        tools: ['guarded', 'lookup'],
        applicationTools: [lookup],
        approvals: { mode: 'interactive', idlePolicy: 'pause' },
      },
    });
    const waited = real.waitRun(job.runId);
    const types: string[] = [];
    for await (const event of real.followRun(job.runId)) {
      types.push(event.type);
      if (event.type === 'approval.requested') assert.equal((await real.approval(event).approve()).outcome, 'approved');
      if (event.type === 'tool.execution.requested') assert.equal((await real.execution(event).complete({ found: 42 })).status, 'accepted');
    }
    for (const expected of ['approval.requested', 'approval.resolved', 'tool.execution.requested', 'run.completed']) assert.ok(types.includes(expected), `${expected} in ${types.join(',')}`);
    const result = await waited;
    assert.equal(result.runId, job.runId);
    assert.equal(result.text, '[{"found":42}]');
    assert.equal(executions, 1, 'the approved host tool ran once');
    assert.deepEqual((await real.readRun(job.runId)).result, result);
  });
});
