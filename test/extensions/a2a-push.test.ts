/**
 * A2A push notifications, driven by the official A2A JS SDK client (1.0 and its 0.3 transport)
 * against a real host (mock provider, SQLite), delivered to a receiver on HTTPS signed by a
 * throwaway CA the host is told to trust (`a2a.pushNotifications.caFile`): the config set with a
 * message and by the push-config methods (set, get, list, delete), the task POSTed when it ends
 * and when it needs input (an approval, an application tool's result), with the config's token
 * and authentication, retried after a 503.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { Role, StreamResponse, TaskState, type Message, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { checkPushUrl } from '../../src/extensions/a2a/push.js';
import { makeThrowawayPki, type ThrowawayPki } from '../support/pki.js';
import { guardedTool, OTHER_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

interface Delivery {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
}

/** An HTTPS receiver: answers each POST with the next scripted status (200 once the script is spent), records them all. */
async function startReceiver(pki: ThrowawayPki) {
  const deliveries: Delivery[] = [];
  const script: number[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer({ cert: pki.trusted.cert, key: pki.trusted.key }, (request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const status = script.shift() ?? 200;
      deliveries.push({ path: request.url ?? '', headers: request.headers, body, status });
      response.writeHead(status).end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: (path: string) => `https://127.0.0.1:${port}${path}`,
    deliveries,
    script,
    /** Resolves once a delivery to `path` satisfies `test`. */
    async until(path: string, test: (task: Task, delivery: Delivery) => boolean): Promise<{ task: Task; delivery: Delivery }> {
      for (;;) {
        const found = deliveries.filter((delivery) => delivery.status === 200 && delivery.path === path).map((delivery) => ({ delivery, task: taskIn(delivery) })).find(({ task, delivery }) => test(task, delivery));
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The task a 1.0 notification carries (a StreamResponse); a 0.3 notification is the task itself. */
function taskIn(delivery: Delivery): Task {
  const json = JSON.parse(delivery.body) as Record<string, unknown>;
  return 'task' in json ? StreamResponse.fromJSON(json).payload!.value as Task : (json as unknown as Task);
}

const effects: unknown[] = [];

function message(text: string, extra: Partial<Message> = {}): Message {
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [], ...extra };
}
const textOf = (task: Task) => task.artifacts.flatMap((artifact) => artifact.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : ''))).join('');

describe('A2A push notifications (the official A2A JS SDK client, an HTTPS receiver)', () => {
  let pki: ThrowawayPki;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let host: TestHost;
  before(async () => {
    pki = makeThrowawayPki();
    receiver = await startReceiver(pki);
    host = await startTestHost(
      {
        a2a: { provider: 'mock', model: 'demo', pushNotifications: { caFile: pki.trusted.caFile, allowedUrls: [receiver.url('/'), 'https://hooks.example.com/a2a'] } },
        approvals: { interactive: true },
        applicationTools: { enabled: true, requireApproval: false },
        jobs: { retentionMs: 60_000, pollIntervalMs: 50, interactive: true },
        tokens: [
          { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'], applicationTools: [{ name: 'weather', requiresApproval: false }], jobs: ['submit', 'read', 'cancel'], a2a: true },
          { id: 'other', subject: 'other-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], jobs: ['submit', 'read', 'cancel'], a2a: true },
        ],
      },
      { tools: [guardedTool(effects)] },
    );
  });
  after(async () => {
    await host?.close();
    await receiver?.close();
    pki?.remove();
  });

  async function connect(token = TOKEN, legacy = false): Promise<Client> {
    const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${token}` } });
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl, ...(legacy ? { legacyCompat: { enabled: true } } : {}) })] }));
    if (!legacy) return factory.createFromUrl(host.url);
    const card = await factory.createFromUrl(host.url).then((client) => client.getAgentCard());
    return factory.createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter((entry) => entry.protocolVersion === '0.3') });
  }

  /** A config for the receiver at `path` (each test reads its own). */
  function pushConfig(path: string, extra: Partial<TaskPushNotificationConfig> = {}): TaskPushNotificationConfig {
    return { tenant: '', id: '', taskId: '', url: receiver.url(path), token: `token-${path}`, authentication: { scheme: 'Bearer', credentials: `credentials-${path}` }, ...extra };
  }

  it('says so on its card', async () => {
    const card = (await (await fetch(`${host.url}/.well-known/agent-card.json`)).json()) as { capabilities: { pushNotifications: boolean } };
    assert.equal(card.capabilities.pushNotifications, true);
  });

  it("POSTs the ended task to the message's config, with its token and authentication, again after a 503", async () => {
    receiver.script.push(503);
    const client = await connect();
    const config = pushConfig('/ended');
    const task = (await client.sendMessage({ tenant: '', message: message(script([{ text: 'pushed' }])), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: config, returnImmediately: true }, metadata: undefined })) as Task;
    const { task: notified, delivery } = await receiver.until('/ended', (pushed) => pushed.id === task.id);
    assert.equal(notified.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(notified), 'pushed');
    assert.equal(delivery.headers['x-a2a-notification-token'], 'token-/ended');
    assert.equal(delivery.headers.authorization, 'Bearer credentials-/ended');
    assert.equal(delivery.headers['content-type'], 'application/a2a+json');
    const attempts = receiver.deliveries.filter((entry) => entry.path === '/ended');
    assert.deepEqual(attempts.map((entry) => entry.status), [503, 200], 'the refused attempt was retried');
    const [stored] = (await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' })).configs;
    assert.equal(stored?.url, config.url);
    assert.ok(stored?.id, 'the host named the config');
  });

  it('notifies when the task needs input, and again when it ends; set, get, list and delete the configs', async () => {
    effects.length = 0;
    const client = await connect();
    const reviewed = message(script([{ toolCall: { name: 'guarded', arguments: { to: 'push' } } }], [{ text: 'approved' }]), { metadata: { tools: ['guarded'] } });
    // The message's own config is set with the task; the spare one once the task waits, so that no run outpaces the test.
    const started = (await client.sendMessage({ tenant: '', message: reviewed, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: pushConfig('/waits'), returnImmediately: true }, metadata: undefined })) as Task;
    const waiting = await receiver.until('/waits', (task) => task.id === started.id && task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(String(waiting.task.status?.message?.parts[0]?.content?.value), /guarded/);
    assert.deepEqual(effects, []);
    const [mine] = (await client.listTaskPushNotificationConfig({ tenant: '', taskId: started.id, pageSize: 10, pageToken: '' })).configs;
    assert.equal(mine?.url, receiver.url('/waits'));
    const spare = await client.createTaskPushNotificationConfig({ ...pushConfig('/spare'), taskId: started.id, id: 'spare' });
    assert.equal(spare.id, 'spare');
    assert.deepEqual((await client.getTaskPushNotificationConfig({ tenant: '', taskId: started.id, id: 'spare' })).url, receiver.url('/spare'));
    assert.deepEqual((await client.listTaskPushNotificationConfig({ tenant: '', taskId: started.id, pageSize: 10, pageToken: '' })).configs.map((entry) => entry.id).sort(), [mine!.id, 'spare'].sort());
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: started.id, id: spare.id });
    assert.deepEqual((await client.listTaskPushNotificationConfig({ tenant: '', taskId: started.id, pageSize: 10, pageToken: '' })).configs.map((entry) => entry.id), [mine!.id]);
    await client.sendMessage({ tenant: '', message: message('approve', { taskId: started.id }), configuration: undefined, metadata: undefined });
    const ended = await receiver.until('/waits', (task) => task.id === started.id && task.status?.state === TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(ended.task), 'approved');
    assert.equal(receiver.deliveries.filter((entry) => entry.path === '/spare').length, 0, 'a deleted config is not told');
  });

  it("notifies when the task waits for an application tool's result", async () => {
    const client = await connect();
    const weather = { name: 'weather', description: 'The weather where the peer is.', inputSchema: { type: 'object' } };
    const asked = message(script([{ toolCall: { name: 'weather', arguments: { city: 'Oslo' } } }], [{ echoToolResults: true }]), { metadata: { applicationTools: [weather] } });
    const started = (await client.sendMessage({ tenant: '', message: asked, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: pushConfig('/tool'), returnImmediately: true }, metadata: undefined })) as Task;
    const { task } = await receiver.until('/tool', (pushed) => pushed.id === started.id && pushed.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal((task.status?.message?.metadata?.execution as { call: { name: string } }).call.name, 'weather');
    const result = message('', { taskId: started.id, parts: [{ content: { $case: 'data', value: { output: 'sunny' } }, metadata: undefined, filename: '', mediaType: 'application/json' }] });
    await client.sendMessage({ tenant: '', message: result, configuration: undefined, metadata: undefined });
    const ended = await receiver.until('/tool', (pushed) => pushed.id === started.id && pushed.status?.state === TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(JSON.parse(textOf(ended.task)), ['sunny']);
  });

  it('notifies a 0.3 client in the 0.3 form (the task itself)', async () => {
    const client = await connect(TOKEN, true);
    const task = (await client.sendMessage({ tenant: '', message: message(script([{ text: 'old form' }])), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: pushConfig('/legacy'), returnImmediately: false }, metadata: undefined })) as Task;
    const { delivery } = await receiver.until('/legacy', () => true);
    const body = JSON.parse(delivery.body) as { kind: string; id: string; status: { state: string } };
    assert.equal(body.kind, 'task');
    assert.equal(body.id, task.id);
    assert.equal(body.status.state, 'completed');
    assert.equal(delivery.headers['content-type'], 'application/json');
  });

  it('refuses receivers that are not HTTPS or loopback, credentials in the URL, and another subject’s task', async () => {
    const client = await connect();
    const task = (await client.sendMessage({ tenant: '', message: message(script([{ text: 'x' }])), configuration: undefined, metadata: undefined })) as Task;
    // The last three pass the URL rule but are not under the config's allowedUrls.
    const port = new URL(receiver.url('/')).port;
    for (const url of ['http://example.com/hook', 'https://user:secret@example.com/hook', 'ftp://127.0.0.1/hook', 'not a url', 'https://example.com/hook', `https://localhost:${port}/hook`, 'https://hooks.example.com/a2a-other']) {
      await assert.rejects(client.createTaskPushNotificationConfig({ ...pushConfig('/refused'), taskId: task.id, url }), (error: Error) => /INVALID_REQUEST/.test(error.message), url);
    }
    await assert.rejects(
      client.sendMessage({ tenant: '', message: message(script([{ text: 'x' }])), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: { ...pushConfig('/refused'), url: 'http://10.0.0.1/hook' }, returnImmediately: true }, metadata: undefined }),
      (error: Error) => /INVALID_REQUEST/.test(error.message),
    );
    const stranger = await connect(OTHER_TOKEN);
    await assert.rejects(stranger.createTaskPushNotificationConfig({ ...pushConfig('/stranger'), taskId: task.id }), TaskNotFoundError);
    await assert.rejects(stranger.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' }), TaskNotFoundError);
  });

  it('allows a receiver only under an allowedUrls prefix: same scheme, host and port, the path at or below it', () => {
    const allowed = ['https://hooks.example.com/a2a', 'http://127.0.0.1:8080/'];
    for (const url of ['https://hooks.example.com/a2a', 'https://hooks.example.com/a2a/t/1', 'http://127.0.0.1:8080/any']) assert.doesNotThrow(() => checkPushUrl(url, allowed), url);
    for (const url of ['https://hooks.example.com/a2ab', 'https://hooks.example.com:444/a2a', 'http://hooks.example.com/a2a', 'https://hooks.example.com.evil.test/a2a', 'http://127.0.0.1:8081/', 'https://HOOKS.example.com/b']) {
      assert.throws(() => checkPushUrl(url, allowed), (error: { code?: string }) => error.code === 'INVALID_REQUEST', url);
    }
  });

  it('refuses to start with an allowedUrls entry the URL rule refuses', async () => {
    await assert.rejects(
      startTestHost({ a2a: { pushNotifications: { allowedUrls: ['http://hooks.example.com/'] } }, jobs: { retentionMs: 60_000, interactive: true } }),
      (error: { code?: string; message?: string }) => error.code === 'INVALID_CONFIG' && /allowedUrls/.test(error.message ?? ''),
    );
  });

  it('refuses to start with a CA file it cannot read', async () => {
    await assert.rejects(
      startTestHost({ a2a: { pushNotifications: { caFile: 'missing-ca.pem' } }, jobs: { retentionMs: 60_000, interactive: true } }),
      (error: { code?: string; message?: string }) => error.code === 'INVALID_CONFIG' && /caFile/.test(error.message ?? ''),
    );
  });

  it('refuses push configs on a host that does not turn them on', async () => {
    const plain = await startTestHost({
      a2a: { provider: 'mock', model: 'demo' },
      jobs: { retentionMs: 60_000, pollIntervalMs: 50, interactive: true },
      tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], jobs: ['submit', 'read', 'cancel'], a2a: true }],
    });
    try {
      const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });
      const client = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] })).createFromUrl(plain.url);
      assert.equal((await client.getAgentCard()).capabilities?.pushNotifications, false);
      // The SDK client reads the card and does not ask; the host refuses whoever asks anyway.
      assert.throws(() => client.createTaskPushNotificationConfig({ ...pushConfig('/off'), taskId: randomUUID() }), (error: Error) => error.name === 'PushNotificationNotSupportedError');
      const raw = await fetch(`${plain.url}/a2a`, {
        method: 'POST',
        headers: plain.headers(),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CreateTaskPushNotificationConfig', params: { taskId: randomUUID(), url: receiver.url('/off') } }),
      });
      const answer = (await raw.json()) as { error?: { code: number; message: string } };
      assert.match(String(answer.error?.message), /not (turned on|supported)/i);
    } finally {
      await plain.close();
    }
  });
});
