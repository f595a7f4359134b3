/**
 * The agent protocols behind two replicas of one PostgreSQL store (issue 33): each step of a
 * conversation may reach either replica, as behind a load balancer, and the run goes on. MCP:
 * the elicitation is answered to the other replica, and a call is cancelled by a
 * `notifications/cancelled` sent to the other replica. AG-UI: the frontend tool's answer (the next
 * AG-UI run) goes to the other replica. A2A: a task made input-required on one replica is
 * answered on the other, and a dropped stream is resubscribed there; a push-notification config
 * taken by a replica that then stops is delivered by another when the task ends there. Official
 * clients only.
 *
 *   node scripts/postgres.mjs --run node --import tsx --test test/store/agent-protocols-replicas.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Role, StreamResponse, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { HttpAgent } from '@ag-ui/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseHostConfig } from '../../src/host/config.js';
import { startHost, type RunningHost } from '../../src/host/index.js';
import type { HostTool } from '../../src/runtime/tools.js';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import { script } from '../support/host.js';
import { makeThrowawayPki } from '../support/pki.js';
import { freshDatabase } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'protocols-replica-token-0123456789abcdef';

describe('agent protocols across two replicas (postgres)', () => {
  const dir = tempDir('agenticdriver-protocol-replicas-');
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let a: RunningHost;
  let b: RunningHost;
  let replica: () => Promise<RunningHost>;
  const pki = makeThrowawayPki();
  const usage: UsageRecord[] = [];
  const effects: string[] = [];
  const guarded: HostTool = { name: 'guarded', description: 'Needs review.', inputSchema: { type: 'object' }, requiresApproval: true, execute: (input) => effects.push(String(input.to)) };

  before(async () => {
    database = await freshDatabase();
    const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_PROTOCOLS_TOKEN: TOKEN, AD_PROTOCOLS_DB: database.url };
    const raw = {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [
        {
          id: 'main',
          subject: 'ops',
          tokenRef: { env: 'AD_PROTOCOLS_TOKEN' },
          providers: ['mock'],
          tools: ['guarded'],
          approveTools: ['guarded'],
          applicationTools: [{ name: 'weather', requiresApproval: false }],
          jobs: ['submit', 'read', 'cancel'],
          mcp: true,
          agUi: true,
          a2a: true,
        },
      ],
      approvals: { interactive: true },
      applicationTools: { enabled: true, requireApproval: false },
      jobs: { retentionMs: 600_000, interactive: true, pollIntervalMs: 50 },
      mcp: {},
      agUi: { provider: 'mock', model: 'demo' },
      a2a: { provider: 'mock', model: 'demo', pushNotifications: { caFile: pki.trusted.caFile } },
      state: { engine: 'postgres', urlRef: { env: 'AD_PROTOCOLS_DB' } },
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(raw), { mode: 0o600 });
    replica = () => startHost({ config: parseHostConfig(raw, join(dir, 'config.json')), env, tools: [guarded], logger: false, onUsage: (record) => void usage.push(record) });
    a = await replica();
    b = await replica();
  });
  after(async () => {
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
    pki.remove();
  });

  it('MCP: an elicitation raised on one replica is answered on the other', async () => {
    effects.length = 0;
    const answeredOn: string[] = [];
    // The load balancer: a JSON-RPC response (the elicitation's answer) goes to replica B, everything else to A.
    const balanced: typeof fetch = (input, init) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
      const toB = body !== undefined && 'result' in body && !('method' in body);
      if (toB) answeredOn.push(b.url);
      return fetch(String(input).replace(a.url, toB ? b.url : a.url), init);
    };
    const client = new Client({ name: 'replicas', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { fetch: balanced, requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    try {
      const input = script([{ toolCall: { name: 'guarded', arguments: { to: 'mcp' } } }], [{ text: 'done' }]);
      const result = (await client.callTool({ name: 'run', arguments: { provider: 'mock', model: 'demo', input, tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } } })) as { isError?: boolean; content: { text: string }[] };
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.equal(result.content[0]!.text, 'done');
      assert.deepEqual(answeredOn, [b.url]);
      assert.deepEqual(effects, ['mcp']);
    } finally {
      await client.close();
    }
  });

  it('MCP: a call running on one replica is cancelled by a notification sent to the other', async () => {
    usage.length = 0;
    let call: { id: number | string; session: string } | undefined;
    // Records the tool call's request id and the session id the client sends with it.
    const recording: typeof fetch = (input, init) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string; id?: number | string }) : undefined;
      if (body?.method === 'tools/call') call = { id: body.id!, session: new Headers(init?.headers).get('mcp-session-id')! };
      return fetch(input, init);
    };
    const client = new Client({ name: 'replicas', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { fetch: recording, requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    const stopped = new AbortController();
    try {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const pending = client.callTool({ name: 'run', arguments: { provider: 'mock', model: 'demo', input: script([{ hang: true }]) } }, undefined, {
        signal: stopped.signal,
        resetTimeoutOnProgress: true,
        onprogress: (update) => void (update.message === 'step.started' && started()),
      });
      pending.catch(() => undefined);
      await running;
      assert.ok(call?.session, 'the client sent its session id');
      // The notification reaches replica B, as a load balancer may route it; the client has not let go.
      const notified = await fetch(`${b.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': call.session, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: call.id, reason: 'no longer needed' } }),
      });
      assert.equal(notified.status, 202);
      while (!usage.some((record) => record.status === 'cancelled')) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(usage.length, 1);
    } finally {
      stopped.abort();
      await client.close();
    }
  });

  it('AG-UI: a frontend tool called on one replica is answered on the other', async () => {
    const agent = (url: string, threadId: string, messages: HttpAgent['messages']) => new HttpAgent({ url: `${url}/ag-ui`, headers: { authorization: `Bearer ${TOKEN}` }, threadId, initialMessages: messages });
    const weather = { name: 'weather', description: 'The weather, looked up by the page.', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
    const threadId = randomUUID();
    const first = agent(a.url, threadId, [{ id: randomUUID(), role: 'user', content: script([{ toolCall: { name: 'weather', arguments: { city: 'Oslo' } } }], [{ echoToolResults: true }]) }]);
    await first.runAgent({ runId: randomUUID(), tools: [weather] });
    const call = first.messages.flatMap((message) => ('toolCalls' in message ? (message.toolCalls ?? []) : [])).at(-1)!;
    const second = agent(b.url, threadId, [...first.messages, { id: randomUUID(), role: 'tool', toolCallId: call.id, content: '{"forecast":"rain"}' }]);
    const texts: string[] = [];
    await second.runAgent({ runId: randomUUID(), tools: [weather] }, { onEvent: ({ event }) => void (event.type === 'TEXT_MESSAGE_CONTENT' && texts.push((event as unknown as { delta: string }).delta)) });
    assert.deepEqual(texts.map((text) => JSON.parse(text)), [[{ forecast: 'rain' }]]);
  });

  it('A2A: a task waiting on one replica is answered and resubscribed on the other', async () => {
    effects.length = 0;
    const connect = (url: string) => {
      const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });
      return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] })).createFromUrl(url);
    };
    const message = (text: string, extra: Partial<Message> = {}): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [], ...extra });
    const send = (msg: Message) => ({ tenant: '', message: msg, configuration: undefined, metadata: undefined });
    const [onA, onB] = [await connect(a.url), await connect(b.url)];
    let taskId = '';
    for await (const response of onA.sendMessageStream(send(message(script([{ toolCall: { name: 'guarded', arguments: { to: 'a2a' } } }], [{ text: 'approved on B' }]), { metadata: { tools: ['guarded'] } })))) {
      if (response.payload?.$case === 'task') taskId = response.payload.value.id;
      break; // replica A's stream is dropped
    }
    let state: TaskState | undefined;
    do state = (await onB.getTask({ tenant: '', id: taskId })).status?.state;
    while (state !== TaskState.TASK_STATE_INPUT_REQUIRED);
    const resubscribed = (async () => {
      const responses: StreamResponse[] = [];
      for await (const response of onB.resubscribeTask({ tenant: '', id: taskId })) responses.push(response);
      return responses;
    })();
    const done = (await onB.sendMessage(send(message('approve', { taskId })))) as Task;
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    const last = (await resubscribed).at(-1)!.payload;
    assert.equal(last?.$case === 'statusUpdate' && last.value.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(effects, ['a2a']);
    assert.equal((await onA.getTask({ tenant: '', id: taskId })).status?.state, TaskState.TASK_STATE_COMPLETED);
  });

  it('A2A: a push config taken by a replica that then stopped is delivered by the replica the task ended on', async () => {
    effects.length = 0;
    const received: { token: string | undefined; task: Task }[] = [];
    const receiver = createServer({ cert: pki.trusted.cert, key: pki.trusted.key }, (request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        received.push({ token: request.headers['x-a2a-notification-token'] as string | undefined, task: StreamResponse.fromJSON(JSON.parse(body)).payload!.value as Task });
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const c = await replica();
    try {
      const connect = (url: string) => {
        const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });
        return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] })).createFromUrl(url);
      };
      const message = (text: string, extra: Partial<Message> = {}): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [], ...extra });
      const [onB, onC] = [await connect(b.url), await connect(c.url)];
      const url = `https://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
      const input = script([{ toolCall: { name: 'guarded', arguments: { to: 'push' } } }], [{ text: 'ended elsewhere' }]);
      const started = (await onC.sendMessage({ tenant: '', message: message(input, { metadata: { tools: ['guarded'] } }), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: { tenant: '', id: 'hook', taskId: '', url, token: 'replicas', authentication: undefined }, returnImmediately: false }, metadata: undefined })) as Task;
      assert.equal(started.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      // The replica that took the config stops; the task waits in the store, and ends on B.
      await c.close();
      const done = (await onB.sendMessage({ tenant: '', message: message('approve', { taskId: started.id }), configuration: undefined, metadata: undefined })) as Task;
      assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
      while (!received.some(({ task }) => task.status?.state === TaskState.TASK_STATE_COMPLETED)) await new Promise((resolve) => setTimeout(resolve, 50));
      const ended = received.find(({ task }) => task.status?.state === TaskState.TASK_STATE_COMPLETED)!;
      assert.equal(ended.task.id, started.id);
      assert.equal(ended.token, 'replicas');
      assert.deepEqual(effects, ['push']);
    } finally {
      await c.close().catch(() => undefined);
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
