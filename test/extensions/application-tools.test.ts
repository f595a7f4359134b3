import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OTHER_TOKEN, RESTRICTED_TOKEN, script, sseEvents, startTestHost, TOKEN, type TestHost } from '../support/host.js';

type Event = Record<string, unknown> & { type: string };

const lookup = {
  name: 'lookup',
  description: 'Looks something up in the application.',
  inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
  outputSchema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] },
};
const config = {
  applicationTools: { enabled: true, requireApproval: false, maxPending: 1 },
  approvals: { interactive: true },
  tokens: [
    { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['echo'], approveTools: ['lookup'], applicationTools: [{ name: 'lookup', requiresApproval: false }, { name: 'echo', requiresApproval: false }] },
    { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'], applicationTools: [{ name: 'lookup', requiresApproval: false }] },
    { id: 'other', subject: 'test-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], tools: ['lookup'] },
  ],
};
const run = (extra: Record<string, unknown> = {}) => ({
  provider: 'mock',
  model: 'demo',
  input: script([{ toolCall: { name: 'lookup', arguments: { query: 'x' } } }], [{ echoToolResults: true }]),
  tools: ['lookup'],
  applicationTools: [lookup],
  ...extra,
});

async function post(host: TestHost, path: string, body: unknown, token = TOKEN) {
  const response = await fetch(`${host.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string } } };
}

async function stream(host: TestHost, body: unknown, onExecution?: (execution: Record<string, unknown>) => Promise<void>, onApproval?: (approval: Record<string, unknown>) => Promise<void>): Promise<Event[]> {
  const response = await host.post('/v1/runs', body, { accept: 'text/event-stream' });
  if (response.status !== 200) assert.fail(await response.text());
  const events: Event[] = [];
  for await (const event of sseEvents(response)) {
    events.push(event as Event);
    if (event.type === 'tool.execution.requested' && onExecution) await onExecution(event.execution as Record<string, unknown>);
    if (event.type === 'approval.requested' && onApproval) await onApproval(event.approval as Record<string, unknown>);
  }
  return events;
}

const identity = (execution: Record<string, unknown>) => ({ executionId: execution.executionId, runId: execution.runId, callId: (execution.call as { id: string }).id });

describe('application tools over HTTP', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost(config);
  });
  after(() => host.close());

  it('dispatches a ticket, takes progress and exactly one result, and feeds it to the model', async () => {
    const answers: [number, string | undefined][] = [];
    const idleTimeoutMs = 1000;
    const started = Date.now();
    const events = await stream(host, run({ idleTimeoutMs }), async (execution) => {
      const id = identity(execution);
      assert.deepEqual((execution.call as { arguments: unknown }).arguments, { query: 'x' });
      const first = await post(host, '/v1/tool-executions/progress', id);
      assert.deepEqual(first.body, { ...id, status: 'progress' });
      const firstAt = Date.now();
      for (const [body, token] of [
        [{ ...id, runId: 'another' }, TOKEN],
        [{ ...id, callId: 'another' }, TOKEN],
        [id, RESTRICTED_TOKEN],
        [id, OTHER_TOKEN],
        [{ ...id, output: { answer: 1 }, error: 'APPLICATION_TOOL_FAILED' }, TOKEN],
        [{ ...id, error: 'it broke' }, TOKEN],
      ] as const) {
        const path = 'output' in body || 'error' in body ? '/v1/tool-executions/results' : '/v1/tool-executions/progress';
        const answer = await post(host, path, body, token);
        answers.push([answer.status, answer.body.error?.code]);
      }
      // Rejected submissions are not progress; only real reports keep the run alive.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 600 - (Date.now() - firstAt))));
      const progress = await post(host, '/v1/tool-executions/progress', id);
      assert.deepEqual(progress.body, { ...id, status: 'progress' });
      await new Promise((resolve) => setTimeout(resolve, 600));
      const done = await post(host, '/v1/tool-executions/results', { ...id, output: { answer: 42 } });
      assert.deepEqual(done.body, { ...id, status: 'accepted' });
      const again = await post(host, '/v1/tool-executions/results', { ...id, output: { answer: 43 } });
      answers.push([again.status, again.body.error?.code]);
    });
    assert.deepEqual(answers, [
      [409, 'TOOL_EXECUTION_MISMATCH'],
      [409, 'TOOL_EXECUTION_MISMATCH'],
      [404, 'TOOL_EXECUTION_NOT_FOUND'],
      [403, 'FORBIDDEN'],
      [400, 'INVALID_TOOL_EXECUTION'],
      [400, 'INVALID_TOOL_EXECUTION'],
      [404, 'TOOL_EXECUTION_NOT_FOUND'],
    ]);
    assert.ok(Date.now() - started > idleTimeoutMs, 'the application worked longer than the idle interval');
    const types = events.map((e) => e.type).filter((type, i, all) => type !== 'run.progress' || all[i - 1] !== 'run.progress');
    assert.deepEqual(types.slice(types.indexOf('tool.called'), types.indexOf('tool.completed') + 1), ['tool.called', 'tool.execution.requested', 'run.progress', 'tool.completed']);
    assert.deepEqual((events.find((e) => e.type === 'tool.completed') as unknown as { output: unknown }).output, { answer: 42 });
    assert.equal((events.at(-1) as unknown as { result: { text: string } }).result.text, '[{"answer":42}]');
  });

  it('fails the run uncertain on a reported failure or an output its schema rejects', async () => {
    const failed = await stream(host, run(), async (execution) => {
      const answer = await post(host, '/v1/tool-executions/results', { ...identity(execution), error: 'APPLICATION_TOOL_FAILED' });
      assert.equal(answer.status, 200);
    });
    assert.deepEqual(failed.at(-1)!.error, { code: 'APPLICATION_TOOL_FAILED', message: 'Application tool lookup reported a failure.', retryable: false, outcome: 'uncertain' });
    const rejected = await stream(host, run(), async (execution) => {
      const answer = await post(host, '/v1/tool-executions/results', { ...identity(execution), output: { answer: 'many' } });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error?.code, 'INVALID_TOOL_OUTPUT');
    });
    assert.equal((rejected.at(-1)!.error as { code: string; outcome: string }).code, 'INVALID_TOOL_OUTPUT');
    assert.equal((rejected.at(-1)!.error as { outcome: string }).outcome, 'uncertain');
    assert.ok(!rejected.some((e) => e.type === 'tool.completed'));
  });

  it('an idle timeout while the application works invalidates the ticket and marks the outcome uncertain', async () => {
    let late = { status: 0, body: {} as Record<string, unknown> & { error?: { code: string } } };
    let ticket: Record<string, unknown> | undefined;
    const events = await stream(host, run({ idleTimeoutMs: 50 }), async (execution) => {
      ticket = execution;
    });
    late = await post(host, '/v1/tool-executions/results', { ...identity(ticket!), output: { answer: 1 } });
    assert.equal(late.body.error?.code, 'TOOL_EXECUTION_NOT_FOUND');
    assert.deepEqual(events.at(-1)!.error, { code: 'IDLE_TIMEOUT', message: 'The run made no progress for 50 ms.', retryable: false, outcome: 'uncertain' });
  });

  it('validates definitions and grants before running', async () => {
    const code = async (body: unknown, token = TOKEN) => {
      const response = await fetch(`${host.url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
      return [response.status, ((await response.json()) as { error: { code: string } }).error.code];
    };
    assert.deepEqual(await code(run({ tools: [] })), [400, 'INVALID_REQUEST']);
    assert.deepEqual(await code(run({ applicationTools: [lookup, lookup] })), [409, 'TOOL_DEFINITION_CONFLICT']);
    assert.deepEqual(await code(run({ applicationTools: [{ ...lookup, name: 'echo' }], tools: ['echo'] })), [409, 'TOOL_DEFINITION_CONFLICT']);
    assert.deepEqual(await code(run({ applicationTools: [{ ...lookup, inputSchema: { $ref: 'https://example.com/s.json' } }] })), [400, 'INVALID_SCHEMA']);
    assert.deepEqual(await code(run({ applicationTools: [{ ...lookup, description: 'x'.repeat(10_000), inputSchema: { type: 'object', description: 'y'.repeat(130_000) } }] })), [400, 'TOOL_DEFINITION_LIMIT']);
    assert.deepEqual(await code(run({ applicationTools: [{ ...lookup, command: 'rm -rf /' }] })), [400, 'INVALID_REQUEST']);
    assert.deepEqual(await code(run(), OTHER_TOKEN), [403, 'FORBIDDEN']);
    const json = await host.post('/v1/runs', run());
    assert.equal(((await json.json()) as { error: { code: string } }).error.code, 'TOOL_STREAM_REQUIRED');
  });

  it('requires review when the definition asks for it, then executes once after approval', async () => {
    const executions: unknown[] = [];
    const events = await stream(
      host,
      run({ applicationTools: [{ ...lookup, requiresApproval: true }], approvals: { mode: 'interactive', idlePolicy: 'pause' } }),
      async (execution) => {
        executions.push(execution);
        await post(host, '/v1/tool-executions/results', { ...identity(execution), output: { answer: 7 } });
      },
      async (approval) => {
        const answer = await post(host, '/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
        assert.equal(answer.body.outcome, 'approved');
      },
    );
    const types = events.map((e) => e.type);
    assert.ok(types.indexOf('approval.resolved') < types.indexOf('tool.execution.requested'));
    assert.equal(executions.length, 1);
    assert.equal(events.at(-1)!.type, 'run.completed');
    const unreviewed = await stream(host, run({ applicationTools: [{ ...lookup, requiresApproval: true }] }));
    assert.equal((unreviewed.at(-1)!.error as { code: string }).code, 'APPROVAL_REQUIRED');
    assert.ok(!unreviewed.some((e) => e.type === 'tool.execution.requested'));
  });

  it('enforces executor capacity and frees it when a run ends', async () => {
    const holding = await host.post('/v1/runs', run(), { accept: 'text/event-stream' });
    const reader = sseEvents(holding);
    for (;;) {
      const { value } = await reader.next();
      if (value?.type === 'tool.execution.requested') break;
    }
    const second = await stream(host, run());
    assert.deepEqual(second.at(-1)!.error, { code: 'TOOL_EXECUTOR_CAPACITY', message: 'Too many application tool executions are pending on this host.', retryable: true });
    await reader.return(undefined);
    for (let i = 0; i < 50 && host.toolExecutions!.size > 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(host.toolExecutions!.size, 0);
  });
});
