/**
 * The MCP server at `/mcp`, driven only by the official MCP SDK client over Streamable HTTP on
 * loopback, against a real host (mock provider, SQLite): tools listed per token, a run answered,
 * progress notifications (per event and while a run is silent), an approval elicited and
 * answered both ways, an approval left pending for the API when the client cannot elicit, and a
 * background run submitted, followed, read and cancelled, and a call cancelled by the client
 * (`notifications/cancelled`, from the SDK's abort signal) cancelling its run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import { FakeClock } from '../support/fake-clock.js';
import { guardedTool, OTHER_TOKEN, RESTRICTED_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

const effects: unknown[] = [];
const guarded = guardedTool(effects);

const config = {
  mcp: {},
  approvals: { interactive: true },
  jobs: { retentionMs: 60_000, pollIntervalMs: 50 },
  tokens: [
    { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], approveTools: ['guarded'], jobs: ['submit', 'read', 'cancel'], mcp: true },
    { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'] },
    { id: 'other', subject: 'other-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['second'], jobs: ['read'], mcp: true },
  ],
};

const reviewed = {
  provider: 'mock',
  model: 'demo',
  input: script([{ toolCall: { name: 'guarded', arguments: { to: 'ada@example.com' } } }], [{ echoToolResults: true }]),
  tools: ['guarded'],
  approvals: { mode: 'interactive', idlePolicy: 'pause' },
};

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, any> };

describe('MCP server over Streamable HTTP (the official SDK client)', () => {
  let host: TestHost;
  const clients: Client[] = [];
  const usage: UsageRecord[] = [];
  before(async () => {
    host = await startTestHost(config, { tools: [guarded], onUsage: (record) => void usage.push(record) });
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await host.close();
  });

  async function connect(token = TOKEN, answer?: (message: string) => ElicitResult): Promise<Client> {
    const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities: answer ? { elicitation: {} } : {} });
    if (answer) client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params.message));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown>, onprogress?: (update: Progress) => void): Promise<ToolResult> {
    return (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress, resetTimeoutOnProgress: true } : {})) as ToolResult;
  }

  it('is advertised, behind the bearer token and the mcp grant', async () => {
    const protocol = (await (await fetch(`${host.url}/v1/protocol`, { headers: host.headers() })).json()) as { features: string[] };
    assert.ok(protocol.features.includes('mcp-server'));
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const post = (authorization?: string) =>
      fetch(`${host.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) }, body: JSON.stringify(initialize) });
    const anonymous = await post();
    assert.equal(anonymous.status, 401);
    assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
    const ungranted = await post(`Bearer ${RESTRICTED_TOKEN}`);
    assert.equal(ungranted.status, 403);
    assert.equal(((await ungranted.json()) as { error: { code: string } }).error.code, 'FORBIDDEN');
    await assert.rejects(connect(RESTRICTED_TOKEN));
    const stream = await fetch(`${host.url}/mcp`, { headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' } });
    assert.equal(stream.status, 405);
    assert.equal(stream.headers.get('allow'), 'POST');
    await stream.body?.cancel();
  });

  it('lists the tools each token may use', async () => {
    const main = await connect();
    assert.deepEqual((await main.listTools()).tools.map((tool) => tool.name), ['run', 'submit_job', 'read_job', 'follow_job', 'cancel_job']);
    const run = (await main.listTools()).tools[0]!;
    assert.deepEqual((run.inputSchema.properties as Record<string, { enum?: string[] }>).provider?.enum, ['mock']);
    const other = await connect(OTHER_TOKEN);
    assert.deepEqual((await other.listTools()).tools.map((tool) => tool.name), ['run', 'read_job', 'follow_job']);
  });

  it('runs an agent and answers with its text and result', async () => {
    const client = await connect();
    const result = await call(client, 'run', { provider: 'mock', model: 'demo', input: script([{ text: 'hello ' }, { text: 'world' }]) });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.content, [{ type: 'text', text: 'hello world' }]);
    assert.equal(result.structuredContent?.result.text, 'hello world');
    assert.equal(result.structuredContent?.result.provider, 'mock');
  });

  it('refuses what the token may not use with a typed error, and arguments a run tool does not take', async () => {
    const client = await connect(OTHER_TOKEN);
    const forbidden = await call(client, 'run', { provider: 'mock', model: 'demo', input: 'hi' });
    assert.equal(forbidden.isError, true);
    assert.equal(forbidden.structuredContent?.error.code, 'FORBIDDEN');
    const main = await connect();
    const unknown = await call(main, 'run', { provider: 'mock', model: 'demo', input: 'hi', session: { id: 'x' } });
    assert.equal(unknown.structuredContent?.error.code, 'INVALID_REQUEST');
    const invalid = await call(main, 'run', { provider: 'mock', model: 'demo', input: '' });
    assert.equal(invalid.isError, true);
    assert.equal(invalid.structuredContent?.error.code, 'INVALID_REQUEST');
    await assert.rejects(call(main, 'no_such_tool', {}), /No tool no_such_tool/);
  });

  it('sends a progress notification per run event', async () => {
    const client = await connect();
    const progress: Progress[] = [];
    const result = await call(client, 'run', { provider: 'mock', model: 'demo', input: script([{ text: 'a' }]) }, (update) => progress.push(update));
    assert.equal(result.content[0]?.text, 'a');
    const messages = progress.map((update) => update.message);
    assert.deepEqual(messages.slice(0, 3), ['run.started', 'step.started', 'text: a'], messages.join(' | '));
    for (let i = 1; i < progress.length; i += 1) assert.ok(progress[i]!.progress > progress[i - 1]!.progress, 'progress only grows');
  });

  it('sends a heartbeat progress notification while a run is silent (a person deciding)', async () => {
    // Its own host on a manual clock: the heartbeat comes due only when the test moves time.
    const clock = new FakeClock();
    const quiet = await startTestHost({ ...config, mcp: { heartbeatMs: 15_000 } }, { tools: [guarded], clock });
    try {
      const transport = new StreamableHTTPClientTransport(new URL(`${quiet.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
      const client = new Client({ name: 'quiet', version: '1.0.0' });
      await client.connect(transport);
      const messages: string[] = [];
      let decided: Promise<Response> | undefined;
      const result = (await client.callTool({ name: 'run', arguments: reviewed }, undefined, {
        resetTimeoutOnProgress: true,
        onprogress: (update) => {
          const message = update.message ?? '';
          messages.push(message);
          const pending = /^approval ([0-9a-f-]{36}) of guarded is pending/.exec(message);
          // Silence: nothing happens until the clock passes the heartbeat; then the person decides.
          if (pending) void clock.advance(15_000);
          if (message.startsWith('still running') && !decided) decided = decideThroughApi(quiet, /approval ([0-9a-f-]{36})/.exec(messages.find((m) => m.startsWith('approval'))!)![1]!);
        },
      })) as ToolResult;
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.equal((await decided)?.status, 200);
      const heartbeat = messages.findIndex((message) => message.startsWith('still running (last: approval '));
      assert.ok(heartbeat > messages.findIndex((message) => message.startsWith('approval ')), messages.join(' | '));
      await client.close();
    } finally {
      await quiet.close();
    }
  });

  it('turns an approval into an elicitation: accepted, the tool runs', async () => {
    effects.length = 0;
    const asked: string[] = [];
    const client = await connect(TOKEN, (message) => {
      asked.push(message);
      assert.equal(effects.length, 0, 'nothing runs before the answer');
      return { action: 'accept', content: {} };
    });
    const result = await call(client, 'run', reviewed);
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, /guarded/);
    assert.match(asked[0]!, /ada@example\.com/);
    assert.deepEqual(effects, [{ to: 'ada@example.com' }]);
    assert.match(result.content[0]!.text!, /"done":true/);
  });

  it('turns an approval into an elicitation: declined, the tool does not run and the run ends denied', async () => {
    effects.length = 0;
    const client = await connect(TOKEN, () => ({ action: 'decline' }));
    const result = await call(client, 'run', reviewed);
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent?.error.code, 'APPROVAL_DENIED');
    assert.deepEqual(effects, []);
  });

  it('leaves the approval pending for the API when the client cannot elicit', async () => {
    effects.length = 0;
    const client = await connect();
    let decided: Promise<Response> | undefined;
    const result = await call(client, 'run', reviewed, (update) => {
      const pending = /^approval ([0-9a-f-]{36}) of guarded is pending: decide it in the console or through the API$/.exec(update.message ?? '');
      if (pending && !decided) decided = decideThroughApi(host, pending[1]!);
    });
    assert.ok(decided, 'the pending approval was announced');
    assert.equal((await decided).status, 200);
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.deepEqual(effects, [{ to: 'ada@example.com' }]);
  });

  async function decideThroughApi(on: TestHost, approvalId: string): Promise<Response> {
    const row = await on.store.approvals.read(approvalId);
    return on.post('/v1/approvals/decisions', { approvalId, runId: row!.approval.runId, call: row!.approval.call, decision: 'approve' });
  }

  it('submits, follows and reads a background run', async () => {
    const client = await connect();
    const submitted = await call(client, 'submit_job', { provider: 'mock', model: 'demo', input: script([{ text: 'in the ' }, { stallMs: 200 }, { text: 'background' }]), key: 'mcp-job-1' });
    assert.equal(submitted.isError, undefined, JSON.stringify(submitted));
    const job = submitted.structuredContent!.job as { id: string; state: string };
    assert.ok(['queued', 'running'].includes(job.state));
    const progress: Progress[] = [];
    const followed = await call(client, 'follow_job', { id: job.id }, (update) => progress.push(update));
    assert.equal(followed.content[0]?.text, 'in the background');
    assert.ok(progress.some((update) => update.message === 'text: background'));
    const read = await call(client, 'read_job', { id: job.id });
    assert.equal(read.structuredContent?.job.state, 'completed');
    assert.equal(read.structuredContent?.result.text, 'in the background');
    const again = await call(client, 'submit_job', { provider: 'mock', model: 'demo', input: script([{ text: 'in the ' }, { stallMs: 200 }, { text: 'background' }]), key: 'mcp-job-1' });
    assert.equal(again.structuredContent?.job.id, job.id, 'a repeated key is the same job');
    const stranger = await call(await connect(OTHER_TOKEN), 'read_job', { id: job.id });
    assert.equal(stranger.isError, true);
    assert.equal(stranger.structuredContent?.error.code, 'JOB_NOT_FOUND');
    const malformed = await call(client, 'read_job', { id: 'not-a-uuid' });
    assert.equal(malformed.structuredContent?.error.code, 'INVALID_JOB');
  });

  it('runs `run` as an MCP task: created, polled, its result fetched', async () => {
    const client = await connect();
    const run = (await client.listTools()).tools.find((tool) => tool.name === 'run')!;
    assert.equal(run.execution?.taskSupport, 'optional');
    const seen: string[] = [];
    let result: ToolResult | undefined;
    const stream = client.experimental.tasks.callToolStream({ name: 'run', arguments: { provider: 'mock', model: 'demo', input: script([{ text: 'as ' }, { text: 'a task' }]) } }, undefined, { task: { ttl: 60_000 } });
    for await (const message of stream) {
      seen.push(message.type);
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') result = message.result as ToolResult;
    }
    assert.equal(seen[0], 'taskCreated');
    assert.equal(seen.at(-1), 'result');
    assert.equal(result?.content[0]?.text, 'as a task');
    const listed = await client.experimental.tasks.listTasks();
    assert.ok(listed.tasks.some((task) => task.status === 'completed'));
  });

  it('cancels an MCP task; another subject cannot see it', async () => {
    const client = await connect();
    let taskId = '';
    for await (const message of client.experimental.tasks.callToolStream({ name: 'run', arguments: { provider: 'mock', model: 'demo', input: script([{ hang: true }]) } }, undefined, { task: { ttl: 60_000 } })) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      break;
    }
    await assert.rejects((await connect(OTHER_TOKEN)).experimental.tasks.getTask(taskId), /JOB_NOT_FOUND/);
    assert.equal((await client.experimental.tasks.cancelTask(taskId)).status, 'cancelled');
    const read = await call(client, 'follow_job', { id: taskId });
    assert.equal(read.structuredContent?.error.code, 'CANCELLED');
    assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'cancelled');
  });

  it('cancels a background run', async () => {
    const client = await connect();
    const submitted = await call(client, 'submit_job', { provider: 'mock', model: 'demo', input: script([{ hang: true }]) });
    const id = submitted.structuredContent!.job.id as string;
    const cancelled = await call(client, 'cancel_job', { id });
    assert.equal(cancelled.structuredContent?.job.cancelRequested, true);
    const followed = await call(client, 'follow_job', { id });
    assert.equal(followed.isError, true);
    assert.equal(followed.structuredContent?.error.code, 'CANCELLED');
    assert.equal((await call(client, 'read_job', { id })).structuredContent?.job.state, 'cancelled');
  });

  it('cancels a run when the client cancels its call (notifications/cancelled), and a followed job goes on', async () => {
    const client = await connect();
    usage.length = 0;
    const controller = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const sent: string[] = [];
    const pending = client.callTool({ name: 'run', arguments: { provider: 'mock', model: 'demo', input: script([{ hang: true }]) } }, undefined, {
      signal: controller.signal,
      resetTimeoutOnProgress: true,
      onprogress: (update) => void (update.message === 'step.started' && started()),
    });
    await running;
    const transport = (client as unknown as { _transport: { send(message: unknown): Promise<void> } })._transport;
    const send = transport.send.bind(transport);
    transport.send = async (message) => {
      sent.push(String((message as { method?: string }).method));
      return send(message);
    };
    controller.abort('changed my mind');
    await assert.rejects(pending);
    while (!usage.some((record) => record.status === 'cancelled')) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(sent, ['notifications/cancelled'], 'the SDK told the server');
    assert.equal(usage.length, 1);

    // A followed job: the follow ends, the job does not.
    const submitted = await call(client, 'submit_job', { provider: 'mock', model: 'demo', input: script([{ hang: true }]) });
    const id = submitted.structuredContent!.job.id as string;
    const following = new AbortController();
    let followed!: () => void;
    const followedOnce = new Promise<void>((resolve) => (followed = resolve));
    const follow = client.callTool({ name: 'follow_job', arguments: { id } }, undefined, { signal: following.signal, resetTimeoutOnProgress: true, onprogress: () => followed() });
    await followedOnce;
    following.abort('enough');
    await assert.rejects(follow);
    const read = await call(client, 'read_job', { id });
    assert.equal(read.structuredContent!.job.state, 'running');
    await call(client, 'cancel_job', { id });
  });
});
