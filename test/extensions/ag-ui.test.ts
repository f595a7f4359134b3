/**
 * AG-UI runs at `/ag-ui`, driven only by AG-UI's official `HttpAgent` (@ag-ui/client) over
 * loopback against a real host (mock provider, SQLite): a streamed run, a frontend tool round
 * trip (the call ends the first AG-UI run, the tool's answer continues the same job in the
 * second), an approval as an interrupt resumed both ways, a failure as RUN_ERROR, and typed
 * refusals before any event.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { HttpAgent } from '@ag-ui/client';
import type { BaseEvent, Message } from '@ag-ui/core';
import { guardedTool, OTHER_TOKEN, RESTRICTED_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

const effects: unknown[] = [];
const guarded = guardedTool(effects);

const config = {
  agUi: { provider: 'mock', model: 'demo' },
  approvals: { interactive: true },
  applicationTools: { enabled: true, requireApproval: false },
  jobs: { retentionMs: 60_000, pollIntervalMs: 50, interactive: true },
  tokens: [
    {
      id: 'main',
      subject: 'test-user',
      tokenRef: { env: 'AD_TEST_TOKEN' },
      providers: ['mock'],
      tools: ['guarded'],
      approveTools: ['guarded'],
      applicationTools: [{ name: 'weather', requiresApproval: false }],
      jobs: ['submit', 'read'],
      agUi: true,
    },
    { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'] },
    { id: 'other', subject: 'other-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], agUi: true },
  ],
};

/** Consecutive repeats as one: how many chunks a text arrives in depends on how fast it is read. */
const squeezed = (types: string[]) => types.filter((type, i) => type !== types[i - 1]);

const weather = { name: 'weather', description: 'The weather in a city, looked up by the page.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('AG-UI runs (the official HttpAgent)', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost(config, { tools: [guarded] });
  });
  after(() => host.close());

  function agent(initial: string): HttpAgent {
    return new HttpAgent({
      url: `${host.url}/ag-ui`,
      headers: { authorization: `Bearer ${TOKEN}` },
      threadId: randomUUID(),
      initialMessages: [{ id: randomUUID(), role: 'user', content: initial }],
    });
  }

  async function run(client: HttpAgent, parameters: Parameters<HttpAgent['runAgent']>[0] = {}) {
    const events: BaseEvent[] = [];
    const outcome = await client.runAgent({ runId: randomUUID(), ...parameters }, { onEvent: ({ event }) => void events.push(event) });
    return { events, types: events.map((event) => event.type as string), outcome };
  }

  it('refuses to start without jobs that wait for people', async () => {
    await assert.rejects(startTestHost({ agUi: {}, jobs: { retentionMs: 60_000 } }), (error: { code?: string; message?: string }) => error.code === 'INVALID_CONFIG' && /interactive/.test(error.message ?? ''));
  });

  it('is advertised', async () => {
    const protocol = (await (await fetch(`${host.url}/v1/protocol`, { headers: host.headers() })).json()) as { features: string[] };
    assert.ok(protocol.features.includes('ag-ui'));
  });

  it('streams a run as AG-UI events', async () => {
    const client = agent(script([{ text: 'Hello, ' }, { text: 'world.' }]));
    const { types, events } = await run(client);
    // Text deltas a slow reader has not taken yet arrive merged (src/runtime/event-channel.ts): one or two contents.
    assert.deepEqual(squeezed(types), ['RUN_STARTED', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'STEP_FINISHED', 'RUN_FINISHED']);
    assert.equal(events.filter((event) => event.type === 'TEXT_MESSAGE_CONTENT').map((event) => (event as unknown as { delta: string }).delta).join(''), 'Hello, world.');
    const finished = events.at(-1) as unknown as { outcome: { type: string }; result: { text: string } };
    assert.deepEqual(finished.outcome, { type: 'success' });
    assert.equal(finished.result.text, 'Hello, world.');
    const last = client.messages.at(-1) as Message & { content: string };
    assert.equal(last.role, 'assistant');
    assert.equal(last.content, 'Hello, world.');
  });

  it('hands a frontend tool call to the page and goes on with its answer in the next run', async () => {
    const client = agent(script([{ text: 'Looking it up.' }, { toolCall: { name: 'weather', arguments: { city: 'Oslo' } } }], [{ echoToolResults: true }]));
    const first = await run(client, { tools: [weather] });
    assert.notEqual(first.types.at(-1), 'RUN_ERROR', JSON.stringify(first.events.at(-1)));
    assert.deepEqual(first.types, ['RUN_STARTED', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'STEP_FINISHED', 'RUN_FINISHED']);
    const start = first.events.find((event) => event.type === 'TOOL_CALL_START') as unknown as { toolCallId: string; toolCallName: string };
    assert.equal(start.toolCallName, 'weather');
    const args = first.events.find((event) => event.type === 'TOOL_CALL_ARGS') as unknown as { delta: string };
    assert.deepEqual(JSON.parse(args.delta), { city: 'Oslo' });
    // The page runs the tool and answers it as AG-UI does: a tool message, then the next run.
    const call = client.messages.flatMap((message) => ('toolCalls' in message ? (message.toolCalls ?? []) : [])).at(-1)!;
    assert.equal(call.id, start.toolCallId);
    client.addMessage({ id: randomUUID(), role: 'tool', toolCallId: call.id, content: JSON.stringify({ forecast: 'snow' }) });
    const second = await run(client, { tools: [weather] });
    assert.deepEqual(second.types, ['RUN_STARTED', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'STEP_FINISHED', 'RUN_FINISHED']);
    const text = second.events.find((event) => event.type === 'TEXT_MESSAGE_CONTENT') as unknown as { delta: string };
    assert.deepEqual(JSON.parse(text.delta), [{ forecast: 'snow' }]);
    // The same answer again is refused: the tool call was answered once.
    const replay = await fetch(`${host.url}/ag-ui`, {
      method: 'POST',
      headers: host.headers({ accept: 'text/event-stream' }),
      body: JSON.stringify({ threadId: 't', runId: randomUUID(), messages: [{ id: 'm', role: 'tool', toolCallId: call.id, content: '{}' }], tools: [], context: [] }),
    });
    assert.equal(replay.status, 404);
    assert.equal(((await replay.json()) as { error: { code: string } }).error.code, 'TOOL_EXECUTION_NOT_FOUND');
  });

  for (const approved of [true, false]) {
    it(`turns an approval into an interrupt, resumed ${approved ? 'approving: the tool runs' : 'denying: the tool does not run'}`, async () => {
      effects.length = 0;
      const client = agent(script([{ toolCall: { name: 'guarded', arguments: { to: 'ada@example.com' } } }], [{ echoToolResults: true }]));
      const forwardedProps = { tools: ['guarded'] };
      const first = await run(client, { forwardedProps });
      assert.deepEqual(first.types, ['RUN_STARTED', 'STEP_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'STEP_FINISHED', 'RUN_FINISHED']);
      const finished = first.events.at(-1) as unknown as { outcome: { type: string; interrupts: { id: string; reason: string; toolCallId: string }[] } };
      assert.equal(finished.outcome.type, 'interrupt');
      const [interrupt] = finished.outcome.interrupts;
      assert.equal(interrupt!.reason, 'approval');
      const start = first.events.find((event) => event.type === 'TOOL_CALL_START') as unknown as { toolCallId: string };
      assert.equal(interrupt!.toolCallId, start.toolCallId);
      assert.deepEqual(effects, [], 'nothing runs before the decision');
      const resume = [{ interruptId: interrupt!.id, status: 'resolved' as const, payload: { approved } }];
      if (approved) {
        const second = await run(client, { forwardedProps, resume });
        assert.deepEqual(second.types, ['RUN_STARTED', 'TOOL_CALL_RESULT', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'STEP_FINISHED', 'RUN_FINISHED']);
        assert.deepEqual(effects, [{ to: 'ada@example.com' }]);
      } else {
        const { events } = await run(client, { forwardedProps, resume });
        assert.equal(events.at(-1)?.type, 'RUN_ERROR');
        assert.equal((events.at(-1) as unknown as { code: string }).code, 'APPROVAL_DENIED');
        assert.deepEqual(effects, []);
      }
    });
  }

  it('ends a failed run with RUN_ERROR carrying our code', async () => {
    const client = agent(script([{ error: { code: 'PROVIDER_ERROR', message: 'The model fell over.' } }]));
    const { events } = await run(client);
    assert.deepEqual(events.map((event) => event.type), ['RUN_STARTED', 'STEP_STARTED', 'STEP_FINISHED', 'RUN_ERROR']);
    const failed = events.find((event) => event.type === 'RUN_ERROR') as unknown as { code: string; message: string };
    assert.equal(failed.code, 'PROVIDER_ERROR');
    assert.equal(failed.message, 'The model fell over.');
  });

  it('refuses before any event: no token, no grant, a provider not granted, a malformed input', async () => {
    const input = { threadId: 't', runId: 'r', messages: [{ id: 'm', role: 'user', content: 'hi' }], tools: [], context: [] };
    const post = (headers: Record<string, string>, body: unknown) => fetch(`${host.url}/ag-ui`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers }, body: JSON.stringify(body) });
    const expect = async (response: Response, status: number, code: string) => {
      assert.equal(response.status, status);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, code);
    };
    await expect(await post({}, input), 401, 'UNAUTHORIZED');
    await expect(await post({ authorization: `Bearer ${RESTRICTED_TOKEN}` }, input), 403, 'FORBIDDEN');
    // The agUi grant alone is not enough: an AG-UI run is a background run of the token's.
    await expect(await post({ authorization: `Bearer ${OTHER_TOKEN}` }, input), 403, 'FORBIDDEN');
    await expect(await post({ authorization: `Bearer ${TOKEN}` }, { ...input, forwardedProps: { provider: 'second', model: 'demo' } }), 403, 'FORBIDDEN');
    await expect(await post({ authorization: `Bearer ${TOKEN}` }, { ...input, messages: 'hi' }), 400, 'INVALID_REQUEST');
    await expect(await post({ authorization: `Bearer ${TOKEN}` }, { ...input, messages: [{ id: 'm', role: 'assistant', content: 'hi' }] }), 400, 'INVALID_REQUEST');
    await expect(await post({ authorization: `Bearer ${TOKEN}` }, { ...input, tools: [{ ...weather, name: 'unlisted' }] }), 403, 'FORBIDDEN');
    await expect(await post({ authorization: `Bearer ${TOKEN}` }, { ...input, messages: [{ id: 'm', role: 'tool', toolCallId: `agd:${randomUUID()}:3`, content: '{}' }] }), 404, 'JOB_NOT_FOUND');
  });
});
