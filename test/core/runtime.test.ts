import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DriverError } from '../../src/protocol/errors.js';
import { AgenticDriver, type DriverOptions } from '../../src/runtime/driver.js';
import type { ProviderAdapter, ProviderPart, ProviderRequest } from '../../src/providers/contract/v1.js';
import type { RunEvent, RunRequest } from '../../src/protocol/schemas.js';
import { MockProvider } from '../../src/providers/mock.js';
import { FakeClock, settle } from '../support/fake-clock.js';
import { script } from '../support/host.js';

/** Wraps the mock to count model calls and record the requests it saw. */
class CountingProvider implements ProviderAdapter {
  readonly calls: ProviderRequest[] = [];
  constructor(readonly inner: ProviderAdapter) {}
  get info() {
    return this.inner.info;
  }
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderPart> {
    this.calls.push(request);
    return this.inner.stream(request, signal);
  }
}

function driverWith(options: Partial<DriverOptions> & { clock?: FakeClock } = {}) {
  const provider = new CountingProvider(new MockProvider({ ...(options.clock ? { clock: options.clock } : {}) }));
  const driver = new AgenticDriver({
    providers: [provider],
    tools: [
      { name: 'echo', description: 'echo', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false }, execute: (input) => input },
      { name: 'guarded', description: 'needs approval', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => 'done' },
      {
        name: 'slow',
        description: 'reports progress then waits',
        inputSchema: { type: 'object' },
        execute: (_input, context) =>
          new Promise((resolve, reject) => {
            context.reportProgress();
            context.signal.addEventListener('abort', () => reject(context.signal.reason));
          }),
      },
    ],
    ...options,
  });
  return { driver, provider };
}

const base: RunRequest = { provider: 'mock', model: 'demo', input: 'Hello' };

async function collect(iterable: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

async function failure(promise: Promise<unknown>): Promise<DriverError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DriverError, `expected a DriverError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the run to fail');
}

describe('runtime validation', () => {
  it('rejects missing, false and unknown required capabilities before any model call or event', async () => {
    const { driver, provider } = driverWith();
    for (const capabilities of [['safeRetries'], ['teleport'], ['tools', 'nope']]) {
      const iterator = driver.stream({ ...base, requiredCapabilities: capabilities });
      const error = await failure(iterator.next());
      assert.equal(error.code, 'UNSUPPORTED_CAPABILITY');
    }
    assert.equal((await driver.run({ ...base, requiredCapabilities: ['tools', 'textStreaming'] })).text, 'Hello');
    assert.equal(provider.calls.length, 1);
  });

  it('follows the documented validation order', async () => {
    const { driver, provider } = driverWith();
    const code = async (request: unknown) => (await failure(driver.run(request))).code;
    assert.equal(await code({ ...base, extra: 1 }), 'INVALID_REQUEST');
    assert.equal(await code({ ...base, provider: 'nope' }), 'UNKNOWN_PROVIDER');
    assert.equal(await code({ ...base, model: 'other' }), 'UNSUPPORTED_MODEL');
    assert.equal(await code({ ...base, retry: { maxAttempts: 2 } }), 'UNSUPPORTED_CAPABILITY');
    assert.equal(await code({ ...base, tools: ['echo', 'echo'] }), 'INVALID_REQUEST');
    assert.equal(await code({ ...base, tools: ['missing'] }), 'UNKNOWN_TOOL');
    assert.equal(await code({ ...base, idempotencyKey: 'k1' }), 'IDEMPOTENCY_UNAVAILABLE');
    assert.equal(await code({ ...base, approvals: { mode: 'interactive', idlePolicy: 'pause' } }), 'APPROVAL_STREAM_REQUIRED');
    assert.equal(await code({ ...base, outputSchema: { $ref: 'https://example.com/schema.json' } }), 'INVALID_SCHEMA');
    assert.equal(await code({ ...base, outputSchema: { $schema: 'https://example.com/custom-dialect' } }), 'INVALID_SCHEMA');
    assert.equal(await code({ ...base, outputSchema: { $async: true, type: 'object' } }), 'INVALID_SCHEMA');
    assert.equal(provider.calls.length, 0);
  });
});

describe('structured output', () => {
  const { driver } = driverWith();
  const output = (input: unknown, outputSchema: Record<string, unknown>) => driver.run({ ...base, input: JSON.stringify(input), outputSchema });
  const draft2020 = 'https://json-schema.org/draft/2020-12/schema';

  it('uses draft-07 when $schema is absent: prefixItems is not a keyword there', async () => {
    const result = await output(['a', 1], { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string' }] });
    assert.deepEqual(result.output, ['a', 1]);
  });

  it('enforces 2020-12 prefixItems and tuple constraints when declared', async () => {
    const schema = { $schema: draft2020, type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false };
    assert.deepEqual((await output(['a', 1], schema)).output, ['a', 1]);
    assert.equal((await failure(output(['a', 'b'], schema))).code, 'INVALID_OUTPUT');
    assert.equal((await failure(output(['a', 1, 2], schema))).code, 'INVALID_OUTPUT');
  });

  it('enforces unevaluatedProperties through allOf in 2020-12', async () => {
    const schema = { $schema: draft2020, type: 'object', allOf: [{ properties: { a: { type: 'string' } } }], unevaluatedProperties: false };
    assert.deepEqual((await output({ a: 'x' }, schema)).output, { a: 'x' });
    assert.equal((await failure(output({ a: 'x', b: 1 }, schema))).code, 'INVALID_OUTPUT');
  });

  it('resolves local $ref and $defs', async () => {
    const schema = { $schema: draft2020, $defs: { n: { type: 'integer', minimum: 1 } }, type: 'object', properties: { n: { $ref: '#/$defs/n' } } };
    assert.equal((await failure(output({ n: 0 }, schema))).code, 'INVALID_OUTPUT');
    const draft7 = { definitions: { n: { type: 'integer' } }, properties: { n: { $ref: '#/definitions/n' } } };
    assert.equal((await failure(output({ n: 'x' }, draft7))).code, 'INVALID_OUTPUT');
  });

  it('fails non-JSON output with INVALID_OUTPUT and never emits run.completed', async () => {
    const events = await collect(driver.stream({ ...base, input: 'not json', outputSchema: { type: 'object' } }));
    assert.equal(events.at(-1)!.type, 'run.failed');
    assert.ok(!events.some((e) => e.type === 'run.completed'));
  });
});

describe('the tool loop', () => {
  it('validates a whole batch before running any call', async () => {
    const { driver } = driverWith();
    const input = script([{ toolCall: { name: 'echo', arguments: { n: 1 } } }, { toolCall: { name: 'echo', arguments: { n: 'bad' } } }]);
    const events = await collect(driver.stream({ ...base, input, tools: ['echo'] }));
    assert.ok(!events.some((e) => e.type === 'tool.called'), 'no call may run when one of the batch is invalid');
    assert.equal(events.at(-1)!.type, 'run.failed');
    assert.equal((events.at(-1) as { error: { code: string } }).error.code, 'INVALID_TOOL_ARGUMENTS');
  });

  it('refuses calls to tools the run did not select', async () => {
    const { driver } = driverWith();
    const error = await failure(driver.run({ ...base, input: script([{ toolCall: { name: 'guarded', arguments: {} } }]), tools: ['echo'] }));
    assert.equal(error.code, 'TOOL_NOT_ALLOWED');
  });

  it('stops at maxSteps with STEP_LIMIT and at 33 calls with TOOL_LIMIT', async () => {
    const { driver } = driverWith();
    const call = { toolCall: { name: 'echo', arguments: {} } };
    assert.equal((await failure(driver.run({ ...base, input: script([call], [call], [call]), tools: ['echo'], maxSteps: 2 }))).code, 'STEP_LIMIT');
    assert.equal((await failure(driver.run({ ...base, input: script(Array.from({ length: 33 }, () => call)), tools: ['echo'] }))).code, 'TOOL_LIMIT');
  });

  it('caps maxSteps by the host limit', async () => {
    const { driver } = driverWith({ limits: { maxSteps: 1 } });
    const call = { toolCall: { name: 'echo', arguments: {} } };
    assert.equal((await failure(driver.run({ ...base, input: script([call], [{ text: 'x' }]), tools: ['echo'], maxSteps: 8 }))).code, 'STEP_LIMIT');
  });

  it('fails closed on tools that require approval, unless the approve callback says yes', async () => {
    const input = script([{ toolCall: { name: 'guarded', arguments: {} } }], [{ echoToolResults: true }]);
    const closed = driverWith();
    assert.equal((await failure(closed.driver.run({ ...base, input, tools: ['guarded'] }))).code, 'APPROVAL_REQUIRED');
    const seen: string[] = [];
    const open = driverWith({ approve: (call) => (seen.push(call.name), true) });
    assert.equal((await open.driver.run({ ...base, input, tools: ['guarded'] })).text, '["done"]');
    assert.deepEqual(seen, ['guarded']);
  });

  it('reports per-step usage and totals only what every step reported', async () => {
    const { driver } = driverWith();
    const input = script(
      [{ usage: { inputTokens: 10, outputTokens: 2, costUsd: 0.5 } }, { toolCall: { name: 'echo', arguments: {} } }],
      [{ usage: { inputTokens: 20, outputTokens: 3 } }, { text: 'ok' }],
    );
    const events = await collect(driver.stream({ ...base, input, tools: ['echo'] }));
    assert.deepEqual(events.filter((e) => e.type === 'usage.reported').map((e) => (e as { step: number }).step), [1, 2]);
    const result = (events.at(-1) as Extract<RunEvent, { type: 'run.completed' }>).result;
    assert.deepEqual(result.usage, { inputTokens: 30, outputTokens: 5 });
    assert.equal(result.text, 'ok', 'result.text is the final step only');
  });

  it('surfaces a scripted provider error with its code', async () => {
    const { driver } = driverWith();
    const error = await failure(driver.run({ ...base, input: script([{ error: { code: 'RATE_LIMITED', retryable: true } }]) }));
    assert.equal(error.code, 'RATE_LIMITED');
    assert.equal(error.retryable, true);
  });
});

describe('idle timer and cancellation on a fake clock', () => {
  const week = 7 * 24 * 60 * 60 * 1000;

  it('never cancels a week of silence when no idle timeout is set', async () => {
    const clock = new FakeClock();
    const { driver } = driverWith({ clock });
    const result = driver.run({ ...base, input: script([{ stallMs: week }, { text: 'still here' }]) });
    await clock.advance(week);
    assert.equal((await result).text, 'still here');
  });

  it('cancels with IDLE_TIMEOUT when nothing happens for the interval', async () => {
    const clock = new FakeClock();
    const { driver } = driverWith({ clock });
    const events = collect(driver.stream({ ...base, input: script([{ stallMs: 1000 }, { text: 'late' }]), idleTimeoutMs: 500 }));
    await clock.advance(499);
    assert.equal(clock.pendingTimers, 2);
    await clock.advance(1);
    const done = await events;
    const terminal = done.at(-1) as Extract<RunEvent, { type: 'run.cancelled' }>;
    assert.equal(terminal.type, 'run.cancelled');
    assert.equal(terminal.error.code, 'IDLE_TIMEOUT');
    assert.equal(terminal.error.retryable, true);
  });

  it('resets on real progress, so progress can outlive the interval', async () => {
    const clock = new FakeClock();
    const { driver } = driverWith({ clock });
    const result = driver.run({ ...base, input: script([{ progress: 10, everyMs: 400 }, { text: 'done' }]), idleTimeoutMs: 500 });
    for (let i = 0; i < 10; i += 1) await clock.advance(400);
    assert.equal((await result).text, 'done');
  });

  it('the host limit wins over a longer or disabled request value', async () => {
    const clock = new FakeClock();
    const { driver } = driverWith({ clock, limits: { idleTimeoutMs: 100 } });
    const result = failure(driver.run({ ...base, input: script([{ stallMs: 1000 }, { text: 'x' }]), idleTimeoutMs: 0 }));
    await clock.advance(100);
    assert.equal((await result).code, 'IDLE_TIMEOUT');
  });

  it('marks the outcome uncertain when a tool is in flight at cancellation', async () => {
    const clock = new FakeClock();
    const { driver } = driverWith({ clock });
    const controller = new AbortController();
    const events = collect(driver.stream({ ...base, input: script([{ toolCall: { name: 'slow', arguments: {} } }]), tools: ['slow'] }, { signal: controller.signal }));
    await settle();
    controller.abort();
    const done = await events;
    assert.ok(done.some((e) => e.type === 'run.progress' && e.phase === 'tool'));
    const terminal = done.at(-1) as Extract<RunEvent, { type: 'run.cancelled' }>;
    assert.equal(terminal.type, 'run.cancelled');
    assert.deepEqual(terminal.error, { code: 'CANCELLED', message: 'The run was cancelled.', retryable: false, outcome: 'uncertain' });
  });

  it('closing the event iterator aborts the provider', async () => {
    const clock = new FakeClock();
    const { driver } = driverWith({ clock });
    const usage: string[] = [];
    const tracked = new AgenticDriver({ ...driver.options, onUsage: (record) => void usage.push(record.status) });
    for await (const event of tracked.stream({ ...base, input: script([{ text: 'a' }, { hang: true }]) })) {
      if (event.type === 'text.delta') break;
    }
    await settle();
    assert.deepEqual(usage, ['cancelled']);
  });

  it('asks the provider while its start record commits, and lets no event out before that commit', async () => {
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const starts: string[] = [];
    const { driver, provider } = driverWith({ onRunStarted: (record) => (starts.push(record.runId), committed) });
    const iterator = driver.stream(base)[Symbol.asyncIterator]();
    let arrived = false;
    const first = iterator.next().then((next) => ((arrived = true), next));
    await settle();
    assert.equal(starts.length, 1);
    assert.equal(provider.calls.length, 1, 'the provider is asked meanwhile');
    assert.equal(arrived, false, 'no event before the start record is committed');
    commit();
    const events = [(await first).value as RunEvent];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) events.push(next.value);
    assert.deepEqual(events.map((e) => e.type), ['run.started', 'step.started', 'text.delta', 'usage.reported', 'run.completed']);
  });

  it('runs no tool before its start record is committed', async () => {
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const ran: unknown[] = [];
    const { driver, provider } = driverWith({
      onRunStarted: () => committed,
      tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object' }, execute: (input) => (ran.push(input), input) }],
    });
    const events = collect(driver.stream({ ...base, input: script([{ toolCall: { name: 'echo', arguments: { n: 1 } } }], [{ text: 'done' }]), tools: ['echo'] }));
    await settle();
    assert.equal(provider.calls.length, 1, 'the first step asked the provider meanwhile');
    assert.deepEqual(ran, [], 'the tool waits for the start record');
    commit();
    assert.equal((await events).at(-1)!.type, 'run.completed');
    assert.deepEqual(ran, [{ n: 1 }]);
  });

  it('hands its usage record over only after its start record, even when it ends before that is queued', async () => {
    const calls: string[] = [];
    const { driver } = driverWith({ onRunStarted: () => void calls.push('start'), onUsage: (record) => void calls.push(`usage ${record.status}`) });
    const events = await collect(driver.stream(base));
    assert.equal(events.at(-1)!.type, 'run.completed');
    assert.deepEqual(calls, ['start', 'usage completed']);
  });

  it('a pre-aborted signal yields run.started then run.cancelled without a model call', async () => {
    const { driver, provider } = driverWith();
    const events = await collect(driver.stream(base, { signal: AbortSignal.abort() }));
    assert.deepEqual(events.map((e) => e.type), ['run.started', 'run.cancelled']);
    assert.equal(provider.calls.length, 0);
  });
});

describe('provider retry policy', () => {
  it('caps the request retry attempts by the host limit and refuses retries without safeRetries', async () => {
    const inner = new MockProvider();
    const provider = new CountingProvider(inner);
    Object.defineProperty(provider, 'info', { value: { ...inner.info, capabilities: { ...inner.info.capabilities, safeRetries: true } } });
    const driver = new AgenticDriver({ providers: [provider], limits: { maxAttempts: 2 } });
    await driver.run({ ...base, retry: { maxAttempts: 5, baseDelayMs: 10 } });
    assert.deepEqual(provider.calls[0]!.retry, { maxAttempts: 2, baseDelayMs: 10 });
  });
});

describe('batched provider parts', () => {
  /** An adapter handing over its parts in batches, each released by the test (an explicit fence between them). */
  function batchingProvider(batches: ProviderPart[][]) {
    const fences: (() => void)[] = [];
    const released = batches.map((_, index) => (index === 0 ? Promise.resolve() : new Promise<void>((resolve) => fences.push(resolve))));
    const adapter: ProviderAdapter = {
      info: { ...new MockProvider().info, id: 'batches' },
      async *stream() {
        throw new Error('the runtime prefers streamBatches');
      },
      async *streamBatches() {
        for (const [index, batch] of batches.entries()) {
          await released[index];
          yield batch;
        }
      },
    };
    return { adapter, release: () => fences.shift()?.() };
  }

  it('takes a batch whole: its adjacent text deltas leave as one event, later batches as their own', async () => {
    const { adapter, release } = batchingProvider([
      [{ type: 'text-delta', text: 'Hel' }, { type: 'text-delta', text: 'lo' }, { type: 'text-delta', text: ' ' }],
      [{ type: 'text-delta', text: 'wörld' }, { type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } }, { type: 'finish', finishReason: 'stop' }],
    ]);
    const driver = new AgenticDriver({ providers: [adapter] });
    const events: RunEvent[] = [];
    for await (const event of driver.stream({ provider: 'batches', model: 'demo', input: 'Hi' })) {
      events.push(event);
      if (event.type === 'text.delta') release();
    }
    assert.deepEqual(events.filter((e) => e.type === 'text.delta').map((e) => (e as { text: string }).text), ['Hello ', 'wörld']);
    const last = events.at(-1)!;
    assert.equal(last.type, 'run.completed');
    assert.equal((last as { result: { text: string } }).result.text, 'Hello wörld');
    assert.deepEqual(events.map((e) => e.sequence), events.map((_, index) => index + 1));
  });

  it('fails a batch that goes on after its finish part', async () => {
    const { adapter } = batchingProvider([[{ type: 'text-delta', text: 'a' }, { type: 'finish', finishReason: 'stop' }, { type: 'text-delta', text: 'late' }]]);
    const driver = new AgenticDriver({ providers: [adapter] });
    const error = await failure(driver.run({ provider: 'batches', model: 'demo', input: 'Hi' }));
    assert.equal(error.code, 'INVALID_PROVIDER_RESPONSE');
  });
});
