/**
 * The A2A agent, driven only by the official A2A JS SDK client (JSON-RPC transport) over loopback
 * against a real host (mock provider, SQLite): the public card, a message answered, a streamed
 * task, an input-required round trip (an approval answered by the next message), an application
 * tool the peer runs (its call input-required, its result a data part), a cancel, and a
 * resubscription after the first stream was dropped.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AgentCard, Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { guardedTool, OTHER_TOKEN, RESTRICTED_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

const effects: unknown[] = [];
const guarded = guardedTool(effects);

const config = {
  a2a: { provider: 'mock', model: 'demo', name: 'Test agent' },
  approvals: { interactive: true },
  applicationTools: { enabled: true, requireApproval: false },
  jobs: { retentionMs: 60_000, pollIntervalMs: 50, interactive: true },
  tokens: [
    { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'], applicationTools: [{ name: 'weather', requiresApproval: false }], jobs: ['submit', 'read', 'cancel'], a2a: true },
    { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'], jobs: ['submit', 'read', 'cancel'] },
    { id: 'other', subject: 'other-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], jobs: ['submit', 'read', 'cancel'], a2a: true },
  ],
};

function message(text: string, extra: Partial<Message> = {}): Message {
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [], ...extra };
}
const send = (msg: Message, returnImmediately = false) => ({ tenant: '', message: msg, configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately }, metadata: undefined });
const textOf = (task: Task) => task.artifacts.flatMap((artifact) => artifact.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : ''))).join('');

describe('A2A agent (the official A2A JS SDK client)', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost(config, { tools: [guarded] });
  });
  after(() => host.close());

  async function connect(token = TOKEN): Promise<Client> {
    const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${token}` } });
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }));
    return factory.createFromUrl(host.url);
  }

  it('refuses to start without jobs that wait for people', async () => {
    await assert.rejects(startTestHost({ a2a: {}, jobs: { retentionMs: 60_000 } }), (error: { code?: string; message?: string }) => error.code === 'INVALID_CONFIG' && /interactive/.test(error.message ?? ''));
  });

  it('publishes its card, with bearer auth and no provider named', async () => {
    const response = await fetch(`${host.url}/.well-known/agent-card.json`);
    assert.equal(response.status, 200);
    const card = (await response.json()) as Record<string, any>;
    assert.equal(card.name, 'Test agent');
    assert.equal(card.supportedInterfaces[0].url, `${host.url}/a2a`);
    assert.equal(card.supportedInterfaces[0].protocolBinding, 'JSONRPC');
    assert.equal(card.capabilities.streaming, true);
    assert.equal(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, 'Bearer');
    assert.doesNotMatch(JSON.stringify(card), /"mock"/);
    const protocol = (await (await fetch(`${host.url}/v1/protocol`, { headers: host.headers() })).json()) as { features: string[] };
    assert.ok(protocol.features.includes('a2a'));
  });

  it('answers a message with a completed task', async () => {
    const client = await connect();
    const task = (await client.sendMessage(send(message(script([{ text: 'Hello ' }, { text: 'agent.' }]))))) as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(task), 'Hello agent.');
    const read = await client.getTask({ tenant: '', id: task.id });
    assert.equal(read.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(read), 'Hello agent.');
  });

  it('streams a task: the task, working, text as artifact chunks, completed', async () => {
    const client = await connect();
    const responses: StreamResponse[] = [];
    for await (const response of client.sendMessageStream(send(message(script([{ text: 'one ' }, { text: 'two' }]))))) responses.push(response);
    // Text deltas a slow reader has not taken yet arrive merged (src/runtime/event-channel.ts): one or two chunks.
    const kinds = responses.map((response) => response.payload?.$case);
    assert.deepEqual(kinds.filter((kind, i) => kind !== kinds[i - 1]), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    const chunks = responses.flatMap((response) => (response.payload?.$case === 'artifactUpdate' ? [response.payload.value] : []));
    assert.deepEqual(chunks.map((chunk) => chunk.append), chunks.map((_, i) => i > 0), 'every chunk after the first appends');
    assert.equal(chunks.map((chunk) => chunk.artifact?.parts[0]?.content?.value).join(''), 'one two');
    const last = responses.at(-1)!.payload;
    assert.equal(last?.$case === 'statusUpdate' && last.value.status?.state, TaskState.TASK_STATE_COMPLETED);
  });

  it('makes a task input-required for an approval, answered by the next message', async () => {
    effects.length = 0;
    const client = await connect();
    const reviewed = message(script([{ toolCall: { name: 'guarded', arguments: { to: 'ada@example.com' } } }], [{ text: 'sent' }]), { metadata: { tools: ['guarded'] } });
    const waiting = (await client.sendMessage(send(reviewed))) as Task;
    assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(String(waiting.status?.message?.parts[0]?.content?.value), /guarded/);
    assert.deepEqual(effects, [], 'nothing runs before the answer');
    const done = (await client.sendMessage(send(message('approve', { taskId: waiting.id })))) as Task;
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(done), 'sent');
    assert.deepEqual(effects, [{ to: 'ada@example.com' }]);
  });

  it("runs an application tool on the peer's side: its call makes the task input-required, a data part answers it", async () => {
    const client = await connect();
    const weather = { name: 'weather', description: 'The weather where the peer is.', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } };
    const asked = message(script([{ toolCall: { name: 'weather', arguments: { city: 'Oslo' } } }], [{ echoToolResults: true }]), { metadata: { applicationTools: [weather] } });
    const waiting = (await client.sendMessage(send(asked))) as Task;
    assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const execution = waiting.status?.message?.metadata?.execution as { call: { name: string; arguments: unknown } };
    assert.deepEqual([execution.call.name, execution.call.arguments], ['weather', { city: 'Oslo' }]);
    await assert.rejects(client.sendMessage(send(message('rain', { taskId: waiting.id }))), (error: Error) => /INVALID_REQUEST.*data part/.test(error.message));
    const result = message('', { taskId: waiting.id, parts: [{ content: { $case: 'data', value: { output: { forecast: 'rain' } } }, metadata: undefined, filename: '', mediaType: 'application/json' }] });
    const done = (await client.sendMessage(send(result))) as Task;
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(JSON.parse(textOf(done)), [{ forecast: 'rain' }]);
    // A tool the token's applicationTools grant does not name is refused before anything runs.
    const ungranted = message(script([{ text: 'never' }]), { metadata: { applicationTools: [{ ...weather, name: 'calendar' }] } });
    await assert.rejects(client.sendMessage(send(ungranted)), (error: Error) => /FORBIDDEN/.test(error.message));
  });

  it('cancels a task', async () => {
    const client = await connect();
    const started = (await client.sendMessage(send(message(script([{ hang: true }])), true))) as Task;
    assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(started.status!.state));
    const cancelled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    assert.equal(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
  });

  it('resubscribes to a task after its stream was dropped, on to its end', async () => {
    effects.length = 0;
    const client = await connect();
    const reviewed = message(script([{ toolCall: { name: 'guarded', arguments: { to: 'bob@example.com' } } }], [{ text: 'resumed' }]), { metadata: { tools: ['guarded'] } });
    let taskId = '';
    for await (const response of client.sendMessageStream(send(reviewed))) {
      if (response.payload?.$case === 'task') taskId = response.payload.value.id;
      break; // the stream is dropped; the task goes on
    }
    // The task waits for its approval whether or not anyone listens.
    let state: TaskState | undefined;
    do state = (await client.getTask({ tenant: '', id: taskId })).status?.state;
    while (state !== TaskState.TASK_STATE_INPUT_REQUIRED);
    const resubscribed = (async () => {
      const responses: StreamResponse[] = [];
      for await (const response of client.resubscribeTask({ tenant: '', id: taskId })) responses.push(response);
      return responses;
    })();
    const done = (await client.sendMessage(send(message('approve', { taskId })))) as Task;
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    const responses = await resubscribed;
    assert.equal(responses[0]?.payload?.$case, 'task');
    const last = responses.at(-1)!.payload;
    assert.equal(last?.$case === 'statusUpdate' && last.value.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.ok(responses.some((response) => response.payload?.$case === 'artifactUpdate' && response.payload.value.artifact?.parts[0]?.content?.value === 'resumed'));
    assert.deepEqual(effects, [{ to: 'bob@example.com' }]);
  });

  it('speaks A2A 0.3 to a 0.3 client too (message/send, message/stream, tasks/get, tasks/cancel)', async () => {
    const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });
    const card = AgentCard.fromJSON(await (await fetch(`${host.url}/.well-known/agent-card.json`)).json());
    const legacyCard = { ...card, supportedInterfaces: card.supportedInterfaces.filter((entry) => entry.protocolVersion === '0.3') };
    assert.equal(legacyCard.supportedInterfaces.length, 1);
    const methods: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      methods.push(String((JSON.parse(String(init?.body)) as { method: string }).method));
      return fetchImpl(input, init);
    };
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: recording, legacyCompat: { enabled: true } })] }));
    const client = await factory.createFromAgentCard(legacyCard);
    const task = (await client.sendMessage(send(message(script([{ text: 'old ' }, { text: 'wire' }]))))) as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(task), 'old wire');
    const streamed: StreamResponse[] = [];
    for await (const response of client.sendMessageStream(send(message(script([{ text: 'streamed' }]))))) streamed.push(response);
    const last = streamed.at(-1)!.payload;
    assert.equal(last?.$case === 'statusUpdate' && last.value.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal((await client.getTask({ tenant: '', id: task.id })).status?.state, TaskState.TASK_STATE_COMPLETED);
    const hanging = (await client.sendMessage(send(message(script([{ hang: true }])), true))) as Task;
    assert.equal((await client.cancelTask({ tenant: '', id: hanging.id, metadata: undefined })).status?.state, TaskState.TASK_STATE_CANCELED);
    assert.deepEqual([...new Set(methods)], ['message/send', 'message/stream', 'tasks/get', 'tasks/cancel']);
  });

  it("refuses what the token may not do, and hides another subject's task", async () => {
    const mine = (await (await connect()).sendMessage(send(message(script([{ text: 'mine' }]))))) as Task;
    const stranger = await connect(OTHER_TOKEN);
    await assert.rejects(stranger.getTask({ tenant: '', id: mine.id }), TaskNotFoundError);
    await assert.rejects(stranger.cancelTask({ tenant: '', id: mine.id, metadata: undefined }), TaskNotFoundError);
    await assert.rejects(stranger.sendMessage(send(message('approve', { taskId: mine.id }))), TaskNotFoundError);
    await assert.rejects(async () => {
      for await (const _ of stranger.resubscribeTask({ tenant: '', id: mine.id })) assert.fail('a stranger follows the task');
    }, TaskNotFoundError);
    const raw = (token?: string) =>
      fetch(`${host.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: mine.id } }) });
    assert.equal((await raw()).status, 401);
    const ungranted = await raw(RESTRICTED_TOKEN);
    assert.equal(ungranted.status, 403);
    assert.equal(((await ungranted.json()) as { error: { code: string } }).error.code, 'FORBIDDEN');
  });
});
