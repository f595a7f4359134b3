/**
 * A2A contexts as sessions, driven by the official A2A JS SDK client against a real host whose
 * provider is an OpenAI-compatible API on a loopback Chat Completions server (the vendor's exact
 * format): the second task of a context is a turn of its session, so the model is sent the first
 * task's exchange; a message without a context starts a new session; another subject's context is
 * not found; a token without the sessions grants keeps no contexts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { OTHER_TOKEN, RESTRICTED_TOKEN, startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { startChatCompletionsServer, type VendorServer } from '../vendors/index.js';

function message(text: string, extra: Partial<Message> = {}): Message {
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [], ...extra };
}
const send = (msg: Message) => ({ tenant: '', message: msg, configuration: undefined, metadata: undefined });
const textOf = (task: Task) => task.artifacts.flatMap((artifact) => artifact.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : ''))).join('');

describe('A2A contexts are sessions (the official A2A JS SDK client, a loopback Chat Completions server)', () => {
  let vendor: VendorServer;
  let host: TestHost;
  before(async () => {
    vendor = await startChatCompletionsServer({ models: ['chat-model'] });
    const grants = { providers: ['compat'], jobs: ['submit', 'read', 'cancel'], a2a: true };
    host = await startTestHost(
      {
        providers: [{ kind: 'openai-compatible', id: 'compat', models: ['chat-model'], apiKeyRef: { env: 'AD_TEST_VENDOR_KEY' }, baseUrl: vendor.url }],
        a2a: { provider: 'compat', model: 'chat-model' },
        sessions: { retentionMs: 600_000 },
        jobs: { retentionMs: 60_000, pollIntervalMs: 50, interactive: true },
        tokens: [
          { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, ...grants, sessions: ['create', 'read', 'continue'] },
          { id: 'other', subject: 'other-user', tokenRef: { env: 'AD_TEST_OTHER' }, ...grants, sessions: ['create', 'read', 'continue'] },
          { id: 'restricted', subject: 'test-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, ...grants },
        ],
      },
      { env: { ...process.env, AD_TEST_TOKEN: TOKEN, AD_TEST_OTHER: OTHER_TOKEN, AD_TEST_RESTRICTED: RESTRICTED_TOKEN, AD_TEST_VENDOR_KEY: 'sk-test' } },
    );
  });
  after(async () => {
    await host?.close();
    await vendor?.close();
  });

  async function connect(token = TOKEN): Promise<Client> {
    const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${token}` } });
    return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] })).createFromUrl(host.url);
  }

  /** The messages the model was sent in the latest generation request. */
  const lastPrompt = () => (vendor.generations.at(-1)!.body as { messages: { role: string; content: unknown }[] }).messages.map(({ role, content }) => ({ role, content }));

  it("continues the context's conversation in a new task", async () => {
    vendor.push({ turn: { text: 'Nice to meet you, Ada.' } }, { turn: { text: 'Your name is Ada.' } });
    const client = await connect();
    const first = (await client.sendMessage(send(message('My name is Ada.')))) as Task;
    assert.equal(first.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.notEqual(first.contextId, first.id, 'the context is a session of its own');
    const second = (await client.sendMessage(send(message('What is my name?', { contextId: first.contextId })))) as Task;
    assert.equal(second.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.notEqual(second.id, first.id, 'a new task');
    assert.equal(second.contextId, first.contextId);
    assert.equal(textOf(second), 'Your name is Ada.');
    assert.deepEqual(lastPrompt().filter(({ role }) => role !== 'system'), [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Nice to meet you, Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    assert.equal((await client.getTask({ tenant: '', id: second.id })).contextId, first.contextId);
    const session = (await (await host.post('/v1/sessions/read', { id: first.contextId })).json()) as { session: { revision: number } };
    assert.equal(session.session.revision, 2, 'both tasks are turns of the session');
  });

  it('starts a new session for a message without a context', async () => {
    vendor.push({ turn: { text: 'Hello.' } });
    const task = (await (await connect()).sendMessage(send(message('Hi.')))) as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(lastPrompt().filter(({ role }) => role !== 'system'), [{ role: 'user', content: 'Hi.' }]);
  });

  it("does not find another subject's context, nor one that is not a session", async () => {
    vendor.push({ turn: { text: 'Mine.' } });
    const mine = (await (await connect()).sendMessage(send(message('Mine.')))) as Task;
    const generations = vendor.generations.length;
    const stranger = await connect(OTHER_TOKEN);
    await assert.rejects(stranger.sendMessage(send(message('Whose?', { contextId: mine.contextId }))), (error: Error) => /SESSION_NOT_FOUND/.test(error.message));
    await assert.rejects(stranger.sendMessage(send(message('Whose?', { contextId: 'not-a-session' }))), (error: Error) => /SESSION_NOT_FOUND/.test(error.message));
    assert.equal(vendor.generations.length, generations, 'nothing ran');
  });

  it('keeps no contexts for a token without the sessions grants', async () => {
    vendor.push({ turn: { text: 'On its own.' } });
    const client = await connect(RESTRICTED_TOKEN);
    const task = (await client.sendMessage(send(message('Alone.')))) as Task;
    assert.equal(task.contextId, task.id, 'each task is its own context');
    await assert.rejects(client.sendMessage(send(message('Again.', { contextId: task.contextId }))), (error: Error) => /INVALID_REQUEST.*contexts/.test(error.message));
  });
});
