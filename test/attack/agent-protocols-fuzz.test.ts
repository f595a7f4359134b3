/**
 * The agent-protocol endpoints fuzzed (issue 33; they have no OpenAPI document for
 * schemathesis): arbitrary JSON, and envelopes of the right shape with arbitrary contents, to
 * `/mcp`, `/ag-ui` and `/a2a` of a real host. Every answer is a client error or a success
 * (never a 5xx), a streamed answer ends, and the host reports no internal error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startTestHost, TOKEN, type TestHost } from '../support/host.js';

const RUNS = 60;
/** Bodies that are JSON but not an object, run first on every endpoint (`null` to /a2a was a 500). */
const NOT_OBJECTS: [unknown][] = [[null], [[]], ['text'], [7]];
const json = fc.jsonValue({ maxDepth: 4 });
const text = fc.oneof(fc.string(), fc.constantFrom('', 'approve', '{"mockScript":{"steps":[{"actions":[{"text":"hi"}]}]}}'));

describe('agent-protocol endpoints under arbitrary input', () => {
  let host: TestHost;
  const internal: string[] = [];
  before(async () => {
    host = await startTestHost(
      {
        mcp: {},
        agUi: { provider: 'mock', model: 'demo' },
        a2a: { provider: 'mock', model: 'demo', pushNotifications: {} },
        sessions: { retentionMs: 60_000 },
        approvals: { interactive: true },
        applicationTools: { enabled: true, requireApproval: false },
        jobs: { retentionMs: 60_000, interactive: true, pollIntervalMs: 50 },
        tokens: [{ id: 'main', subject: 'fuzz', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], jobs: ['submit', 'read', 'cancel'], sessions: ['create', 'read', 'continue'], mcp: true, agUi: true, a2a: true }],
      },
      { logInternalError: (error, where) => internal.push(`${where}: ${String(error)}`) },
    );
  });
  after(() => host.close());

  async function post(path: string, body: unknown, accept: string): Promise<void> {
    const response = await fetch(`${host.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify(body),
    });
    const answer = await response.text(); // a stream must end
    assert.ok(response.status < 500, `${path} ${JSON.stringify(body).slice(0, 300)} → ${response.status} ${answer.slice(0, 300)}`);
    assert.deepEqual(internal, []);
  }

  it('/mcp: any JSON, and JSON-RPC messages with any method and params', async () => {
    const message = fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string({ maxLength: 60 }), fc.constant('agenticdriver-approval:x')), method: fc.constantFrom('initialize', 'tools/list', 'tools/call', 'tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/list', 'ping', 'nope'), params: json });
    const call = fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), method: fc.constant('tools/call'), params: fc.record({ name: fc.constantFrom('run', 'submit_job', 'read_job', 'follow_job', 'cancel_job'), arguments: fc.dictionary(fc.constantFrom('provider', 'model', 'input', 'id', 'key', 'tools', 'approvals', 'after', 'x'), fc.oneof(json, text)) }) });
    const answer = fc.record({ jsonrpc: fc.constant('2.0'), id: fc.string({ maxLength: 80 }).map((rest) => `agenticdriver-approval:${rest}`), result: json });
    const cancelled = fc.record({ jsonrpc: fc.constant('2.0'), method: fc.constant('notifications/cancelled'), params: fc.oneof(json, fc.record({ requestId: fc.oneof(fc.integer(), fc.string(), json), reason: fc.string() }, { requiredKeys: [] })) });
    await fc.assert(fc.asyncProperty(fc.oneof(json, message, call, answer, cancelled), (body) => post('/mcp', body, 'application/json, text/event-stream')), { numRuns: RUNS, examples: NOT_OBJECTS });
  });

  it('/ag-ui: any JSON, and run inputs with any messages, tools and answers', async () => {
    const messageOf = fc.record({ id: fc.string({ minLength: 1, maxLength: 20 }), role: fc.constantFrom('user', 'assistant', 'system', 'tool', 'developer'), content: fc.oneof(text, json), toolCallId: fc.oneof(fc.string(), fc.constant('agd:00000000-0000-4000-8000-000000000000:1')) }, { requiredKeys: ['id', 'role'] });
    const input = fc.record({
      threadId: fc.string({ minLength: 1, maxLength: 20 }),
      runId: fc.string({ minLength: 1, maxLength: 20 }),
      messages: fc.array(messageOf, { maxLength: 4 }),
      tools: fc.array(fc.record({ name: fc.string({ maxLength: 20 }), description: fc.string({ maxLength: 20 }), parameters: json }), { maxLength: 2 }),
      context: fc.array(fc.record({ description: fc.string(), value: fc.string() }), { maxLength: 2 }),
      forwardedProps: json,
      resume: fc.array(fc.record({ interruptId: fc.string({ maxLength: 60 }), status: fc.constantFrom('resolved', 'cancelled'), payload: json }), { maxLength: 2 }),
    }, { requiredKeys: ['threadId', 'runId', 'messages', 'tools', 'context'] });
    await fc.assert(fc.asyncProperty(fc.oneof(json, input), (body) => post('/ag-ui', body, 'text/event-stream')), { numRuns: RUNS, examples: NOT_OBJECTS });
  });

  it('/a2a: any JSON, and JSON-RPC messages of both bindings with any params', async () => {
    const methods = [
      ...['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'SubscribeToTask', 'ListTasks', 'message/send', 'message/stream', 'tasks/get', 'tasks/cancel', 'tasks/resubscribe', 'nope'],
      ...['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig'],
      ...['tasks/pushNotificationConfig/set', 'tasks/pushNotificationConfig/get', 'tasks/pushNotificationConfig/list', 'tasks/pushNotificationConfig/delete'],
    ];
    const url = fc.oneof(fc.string(), fc.webUrl(), fc.constantFrom('http://127.0.0.1:9/hook', 'https://user:pw@example.com/', 'http://10.0.0.1/'));
    const pushConfig = fc.record({ id: fc.string(), taskId: fc.oneof(fc.string(), fc.uuid()), url, token: fc.string(), authentication: fc.oneof(json, fc.record({ scheme: fc.string(), credentials: fc.string() })) }, { requiredKeys: [] });
    const message = fc.record({ messageId: fc.string(), taskId: fc.oneof(fc.string(), fc.uuid()), contextId: fc.oneof(fc.string(), fc.uuid()), role: fc.constantFrom('ROLE_USER', 'user', 'x'), parts: fc.array(fc.oneof(fc.record({ text }), fc.record({ data: json }), json), { maxLength: 3 }), metadata: json }, { requiredKeys: [] });
    const params = fc.record({ message, id: fc.oneof(fc.string(), fc.uuid()), taskId: fc.oneof(fc.string(), fc.uuid()), url, pushNotificationConfig: pushConfig, configuration: fc.record({ taskPushNotificationConfig: pushConfig, pushNotificationConfig: pushConfig, returnImmediately: fc.boolean() }, { requiredKeys: [] }) }, { requiredKeys: [] });
    const request = fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string()), method: fc.constantFrom(...methods), params: fc.oneof(json, params, pushConfig) });
    await fc.assert(fc.asyncProperty(fc.oneof(json, request), (body) => post('/a2a', body, 'application/json')), { numRuns: RUNS, examples: NOT_OBJECTS });
  });
});
