/**
 * Approval decisions and application tools in the TypeScript client: what goes on the wire
 * (scripted loopback server), and the whole lifecycle against the real host over HTTP and
 * verified HTTPS.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { AgenticClient, DriverError, type RunEvent, type RunRequest, type ToolContext } from '../../src/client/index.js';
import { makeServerIdentity, type ServerIdentity } from '../support/pki.js';
import { script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

const TIME = '2026-09-20T12:00:00.000Z';
const CALL = { id: 'call-1', name: 'lookup', arguments: { query: 'x', nested: { ids: [1, 2] } } };
const LOOKUP = { name: 'lookup', description: 'Look something up', inputSchema: { type: 'object' } };

async function codeOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof DriverError, `expected a DriverError, got ${String(error)}`);
    return error.code;
  }
  return 'none';
}

async function collect(events: AsyncIterable<RunEvent>, onEvent: (event: RunEvent) => Promise<void> = async () => undefined): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    await onEvent(event);
  }
  return seen;
}

function terminal(events: RunEvent[]): string {
  const last = events.at(-1);
  if (last?.type === 'run.completed') return `completed ${last.result.text}`;
  if (last?.type === 'run.failed' || last?.type === 'run.cancelled') return `${last.type} ${last.error.code}${last.error.outcome ? ` ${last.error.outcome}` : ''}`;
  return `unfinished: ${events.map((event) => event.type).join(',')}`;
}

describe('interactive calls on the wire (scripted loopback server)', () => {
  let server: Server;
  let url: string;
  const posts: { path: string; body: unknown }[] = [];
  let answer: (request: IncomingMessage, body: unknown, response: ServerResponse) => void;

  before(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
        posts.push({ path: request.url ?? '', body });
        answer(request, body, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prefix/`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const json = (response: ServerResponse, value: unknown) =>
    response.writeHead(200, { 'Content-Type': 'application/json', 'AgenticDriver-Version': '1.0' }).end(JSON.stringify(value));
  const stream = (response: ServerResponse, events: unknown[]) =>
    response
      .writeHead(200, { 'Content-Type': 'text/event-stream', 'AgenticDriver-Version': '1.0' })
      .end(events.map((event, index) => `data: ${JSON.stringify({ runId: 'run', sequence: index + 1, timestamp: TIME, ...(event as object) })}\n\n`).join(''));
  const started = { type: 'run.started', provider: 'mock', model: 'demo' };
  const completed = { type: 'run.completed', result: { runId: 'run', provider: 'mock', model: 'demo', text: 'ok', usage: {}, steps: 1, finishReason: 'stop' } };
  const approvalRequested = { type: 'approval.requested', approval: { approvalId: 'a-1', runId: 'run', call: CALL, requestedAt: TIME, idlePolicy: 'pause' } };
  const executionRequested = { type: 'tool.execution.requested', execution: { executionId: 'e-1', runId: 'run', call: CALL } };

  it('answers an approval with one call that echoes the exact run and call, and checks the receipt', async () => {
    posts.length = 0;
    answer = (request, body, response) => {
      if (request.url?.endsWith('/v1/runs')) return stream(response, [started, approvalRequested, completed]);
      const decision = body as { approvalId: string; runId: string; call: { id: string }; decision: string };
      const outcome = { approve: 'approved', deny: 'denied', cancel: 'cancelled' }[decision.decision];
      json(response, { approvalId: decision.approvalId, runId: decision.runId, callId: decision.call.id, outcome, decidedAt: TIME, later: true });
    };
    const client = new AgenticClient({ url, token: 'token' });
    const request: RunRequest = { provider: 'mock', model: 'demo', input: 'Hello', tools: ['lookup'], approvals: { mode: 'interactive', idlePolicy: 'pause' } };
    const receipts: string[] = [];
    await collect(client.stream(request), async (event) => {
      if (event.type === 'approval.requested') {
        for (const answerWith of ['approve', 'deny', 'cancel'] as const) receipts.push((await client.approval(event)[answerWith]()).outcome);
      }
    });
    assert.deepEqual(receipts, ['approved', 'denied', 'cancelled']);
    assert.deepEqual(posts[1], { path: '/prefix/v1/approvals/decisions', body: { approvalId: 'a-1', runId: 'run', call: CALL, decision: 'approve' } });

    answer = (_request, _body, response) => json(response, { approvalId: 'a-1', runId: 'run', callId: 'call-1', outcome: 'approved', decidedAt: TIME });
    const pending = client.approval(approvalRequested.approval as never);
    assert.equal(await codeOf(() => pending.deny()), 'INVALID_RESPONSE', 'a receipt with another outcome');
    posts.length = 0;
    assert.equal(await codeOf(() => client.decideApproval({ ...pending.approval, call: CALL, decision: 'maybe' } as never)), 'INVALID_APPROVAL');
    assert.equal(posts.length, 0, 'an invalid decision is never sent');
  });

  it('reports progress and delivers a result or a failure for one execution, checking each receipt', async () => {
    posts.length = 0;
    answer = (request, body, response) => {
      const identity = body as { executionId: string; runId: string; callId: string };
      json(response, { ...identity, status: request.url?.endsWith('/progress') ? 'progress' : 'accepted' });
    };
    const client = new AgenticClient({ url, token: 'token' });
    const execution = client.execution(executionRequested.execution);
    assert.equal((await execution.progress()).status, 'progress');
    assert.equal((await execution.complete({ answer: 42 })).status, 'accepted');
    assert.equal((await execution.fail()).status, 'accepted');
    const identity = { executionId: 'e-1', runId: 'run', callId: 'call-1' };
    assert.deepEqual(posts, [
      { path: '/prefix/v1/tool-executions/progress', body: identity },
      { path: '/prefix/v1/tool-executions/results', body: { ...identity, output: { answer: 42 } } },
      { path: '/prefix/v1/tool-executions/results', body: { ...identity, error: 'APPLICATION_TOOL_FAILED' } },
    ]);
    answer = (_request, body, response) => json(response, { ...(body as object), status: 'progress' });
    assert.equal(await codeOf(() => execution.complete({ answer: 42 })), 'INVALID_RESPONSE', 'a result answered with a progress receipt');
  });

  it('rejects approval and execution events on a run that did not opt in', async () => {
    const client = new AgenticClient({ url, token: 'token' });
    const plain: RunRequest = { provider: 'mock', model: 'demo', input: 'Hello', tools: ['lookup'] };
    for (const event of [approvalRequested, executionRequested, { type: 'approval.resolved', resolution: { approvalId: 'a-1', runId: 'run', callId: 'call-1', outcome: 'approved', decidedAt: TIME } }]) {
      answer = (_request, _body, response) => stream(response, [started, { ...event, optional: true }, completed]);
      assert.equal(await codeOf(() => collect(client.stream(plain))), 'UNSUPPORTED_EVENT', event.type);
    }
  });

  it('never runs a tool the application did not register, and refuses functions for undeclared tools', async () => {
    posts.length = 0;
    answer = (_request, _body, response) => stream(response, [started, executionRequested, completed]);
    const client = new AgenticClient({ url, token: 'token' });
    const request: RunRequest = { provider: 'mock', model: 'demo', input: 'Hello', tools: ['lookup'], applicationTools: [LOOKUP] };
    const events = await collect(client.streamWithTools(request, {}));
    assert.deepEqual(events.map((event) => event.type), ['run.started', 'tool.execution.requested', 'run.completed']);
    assert.deepEqual(posts.map((post) => post.path), ['/prefix/v1/runs'], 'nothing was executed or reported');
    assert.equal(await codeOf(() => collect(client.streamWithTools(request, { toString: () => 'x' }))), 'INVALID_ARGUMENT');
  });
});

const LOOKUP_APPROVED: RunRequest = {
  provider: 'mock',
  model: 'demo',
  input: script([{ toolCall: { name: 'lookup', arguments: { query: 'x' } } }], [{ echoToolResults: true }]),
  tools: ['lookup'],
  applicationTools: [{ ...LOOKUP, outputSchema: { type: 'object', required: ['answer'] }, requiresApproval: true }],
  approvals: { mode: 'interactive', idlePolicy: 'pause' },
};

function appHostConfig(tls?: ServerIdentity): Record<string, unknown> {
  return {
    listen: { host: '127.0.0.1', port: 0, ...(tls ? { tls: { certFile: tls.certFile, keyRef: { file: tls.keyFile } } } : {}) },
    approvals: { interactive: true },
    applicationTools: { enabled: true },
    tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], approveTools: ['lookup'], applicationTools: [{ name: 'lookup' }] }],
  };
}

for (const transport of ['http', 'https'] as const) {
  describe(`an application-owned function against the real host over ${transport}`, () => {
    let host: TestHost;
    let pki: ServerIdentity | undefined;
    let client: AgenticClient;
    before(async () => {
      pki = transport === 'https' ? makeServerIdentity() : undefined;
      host = await startTestHost(appHostConfig(pki));
      assert.ok(host.url.startsWith(`${transport}://`));
      client = new AgenticClient({ url: host.url, token: TOKEN, ...(pki ? { ca: pki.ca } : {}) });
    });
    after(async () => {
      await host.close();
      if (pki) rmSync(pki.directory, { recursive: true, force: true });
    });

    it('is approved interactively, reports progress, completes once, and a stale second result is rejected', async () => {
      const features = (await client.protocol()).features;
      assert.ok(features.includes('interactive-approvals') && features.includes('application-tools'), features.join());
      const calls: unknown[] = [];
      const functions = {
        lookup: async (args: Record<string, unknown>, context: ToolContext) => {
          calls.push(args);
          assert.equal((await context.progress()).status, 'progress');
          return { answer: 42 };
        },
      };
      const events = await collect(client.streamWithTools(LOOKUP_APPROVED, functions), async (event) => {
        if (event.type === 'approval.requested') {
          assert.deepEqual(calls, [], 'nothing runs before the approval');
          assert.equal((await client.approval(event).approve()).outcome, 'approved');
        }
      });
      assert.deepEqual(calls, [{ query: 'x' }], 'the function ran once with the reviewed arguments');
      const types = events.map((event) => event.type);
      assert.ok(types.indexOf('approval.resolved') < types.indexOf('tool.execution.requested'), types.join());
      assert.equal(terminal(events), 'completed [{"answer":42}]');
      const execution = events.find((event) => event.type === 'tool.execution.requested');
      assert.ok(execution?.type === 'tool.execution.requested');
      assert.equal(await codeOf(() => client.execution(execution).complete({ answer: 43 })), 'TOOL_EXECUTION_NOT_FOUND');
      assert.equal(await codeOf(() => client.execution(execution).progress()), 'TOOL_EXECUTION_NOT_FOUND');
    });

    it('keeps an idle-limited run alive with real progress, and reports a throwing function as a failure', async () => {
      // 3 x 150 ms of work outlasts the 400 ms idle limit: only the progress reports keep the run alive.
      const slowly = {
        lookup: async (_args: Record<string, unknown>, context: ToolContext) => {
          for (let part = 0; part < 3; part += 1) {
            await new Promise((resolve) => setTimeout(resolve, 150));
            await context.progress();
          }
          return { answer: 1 };
        },
      };
      const approve = async (event: RunEvent) => {
        if (event.type === 'approval.requested') await client.approval(event).approve();
      };
      assert.equal(terminal(await collect(client.streamWithTools({ ...LOOKUP_APPROVED, idleTimeoutMs: 400 }, slowly), approve)), 'completed [{"answer":1}]');
      const failing = {
        lookup: () => {
          throw new Error('the mail server is down');
        },
      };
      const failed = await collect(client.streamWithTools(LOOKUP_APPROVED, failing), approve);
      assert.equal(terminal(failed), 'run.failed APPLICATION_TOOL_FAILED uncertain');
      assert.ok(!JSON.stringify(failed).includes('mail server'), 'the exception text never leaves the application');
    });

    it('denies without executing anything', async () => {
      let ran = false;
      const events = await collect(
        client.streamWithTools(LOOKUP_APPROVED, {
          lookup: () => {
            ran = true;
            return { answer: 0 };
          },
        }),
        async (event) => {
          if (event.type === 'approval.requested') assert.equal((await client.approval(event).deny()).outcome, 'denied');
        },
      );
      assert.equal(ran, false);
      assert.equal(terminal(events), 'run.failed APPROVAL_DENIED');
    });
  });
}
