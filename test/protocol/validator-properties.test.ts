/**
 * Property tests of the request validators with fast-check: the run-request, approval
 * decision and tool-result checks the TypeScript client runs before sending, and the
 * runtime's `prepare()` (the host's request validation). Generated valid requests are
 * accepted; each generated defect is refused with the typed error; arbitrary JSON never
 * makes a validator throw anything but a DriverError with a 4xx code.
 *
 * Bounded for CI: AGENTICDRIVER_PROPERTY_RUNS (default 200 per property) raises the count.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AgenticClient, DriverError } from '../../src/client/index.js';
import { statusForCode } from '../../src/protocol/errors.js';
import { ApprovalDecision, RunRequest, ToolExecutionResult } from '../../src/protocol/schemas.js';
import { validatorFor } from '../../src/protocol/validate.js';
import { AgenticDriver } from '../../src/runtime/driver.js';
import { MockProvider } from '../../src/providers/mock.js';

const RUNS = Number(process.env.AGENTICDRIVER_PROPERTY_RUNS ?? 200);
type Json = Record<string, unknown>;

const validRunRequest = validatorFor(RunRequest);
const validDecision = validatorFor(ApprovalDecision);
const validToolResult = validatorFor(ToolExecutionResult);

const providerId = fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,20}$/);
const modelId = fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9._:/[\]-]{0,30}$/);
const toolName = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,20}$/);
const capability = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9._-]{0,20}$/);
const opaqueKey = fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,30}$/);
// JSON the host takes as plain: fast-check also generates "__proto__" keys, which the
// clients refuse before sending (a separate property below covers those).
const plainJsonValue = (maxDepth: number) => fc.jsonValue({ maxDepth }).filter((value) => !JSON.stringify(value).includes('"__proto__"'));
const jsonObject = fc.dictionary(fc.string({ maxLength: 8 }), plainJsonValue(3), { maxKeys: 4 }) as fc.Arbitrary<Json>;

/** Valid run requests: the required fields and any subset of the simple optional ones. */
const runRequest: fc.Arbitrary<Json> = fc.record(
  {
    provider: providerId,
    model: modelId,
    input: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
    instructions: fc.string({ maxLength: 40 }),
    idempotencyKey: opaqueKey,
    history: fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content: fc.string({ maxLength: 20 }) }), { maxLength: 3 }),
    tools: fc.array(toolName, { maxLength: 4 }),
    requiredCapabilities: fc.uniqueArray(capability, { maxLength: 4 }),
    maxSteps: fc.integer({ min: 1, max: 64 }),
    maxOutputTokens: fc.integer({ min: 1, max: 65_536 }),
    idleTimeoutMs: fc.integer({ min: 0, max: 2_147_483_647 }),
    outputSchema: jsonObject,
    metadata: fc.dictionary(fc.string({ maxLength: 80 }), fc.string({ maxLength: 40 }), { maxKeys: 4 }),
  },
  { requiredKeys: ['provider', 'model', 'input'] },
);

/** One defect each; every one must be refused. */
const defects: [string, (request: Json) => Json][] = [
  ['no provider', ({ provider: _, ...rest }) => rest],
  ['no model', ({ model: _, ...rest }) => rest],
  ['no input', ({ input: _, ...rest }) => rest],
  ['empty input', (request) => ({ ...request, input: '' })],
  ['input not a string', (request) => ({ ...request, input: 42 })],
  ['unknown field', (request) => ({ ...request, surprise: true })],
  ['provider with a space', (request) => ({ ...request, provider: `a b` })],
  ['provider starting with a dot', (request) => ({ ...request, provider: `.${String(request.provider)}` })],
  ['provider too long', (request) => ({ ...request, provider: 'p'.repeat(81) })],
  ['model empty', (request) => ({ ...request, model: '' })],
  ['maxSteps zero', (request) => ({ ...request, maxSteps: 0 })],
  ['maxSteps too large', (request) => ({ ...request, maxSteps: 65 })],
  ['maxSteps fractional', (request) => ({ ...request, maxSteps: 1.5 })],
  ['maxSteps a string', (request) => ({ ...request, maxSteps: '3' })],
  ['negative idle timeout', (request) => ({ ...request, idleTimeoutMs: -1 })],
  ['tool name with a dash', (request) => ({ ...request, tools: ['bad-name'] })],
  ['too many tools', (request) => ({ ...request, tools: Array.from({ length: 33 }, (_, index) => `t${index}`) })],
  ['repeated capability', (request) => ({ ...request, requiredCapabilities: ['tools', 'tools'] })],
  ['outputSchema an array', (request) => ({ ...request, outputSchema: [] })],
  ['history role system', (request) => ({ ...request, history: [{ role: 'system', content: 'x' }] })],
  ['metadata value too long', (request) => ({ ...request, metadata: { key: 'v'.repeat(501) } })],
  ['request is an array', (request) => [request] as unknown as Json],
];

function client(sent: unknown[]): AgenticClient {
  const fetch = (async (_url: unknown, init?: { body?: unknown }) => {
    sent.push(JSON.parse(String(init?.body)));
    return new Response('{"error":{"code":"BUSY","message":"busy","retryable":true}}', {
      status: 429,
      headers: { 'content-type': 'application/json', 'agenticdriver-version': '1.0' },
    });
  }) as typeof globalThis.fetch;
  return new AgenticClient({ url: 'http://127.0.0.1:9', token: 'property-token', fetch });
}

/** Runs `action`; returns the DriverError it threw, or undefined. Anything else fails the property. */
async function typedFailure(action: () => unknown): Promise<DriverError | undefined> {
  try {
    await action();
    return undefined;
  } catch (error) {
    if (error instanceof DriverError) return error;
    throw new Error(`threw a non-DriverError: ${String(error)}`, { cause: error });
  }
}

/** The value as JSON would carry it (generated objects may have a null prototype). */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

const driver = new AgenticDriver({ providers: [new MockProvider()] });

describe('request validator properties (fast-check)', () => {
  it('accepts generated valid run requests, in the validator and in the client, which sends them unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(runRequest, async (request) => {
        assert.ok(validRunRequest(request), validRunRequest.explain(request));
        const sent: unknown[] = [];
        const failure = await typedFailure(() => client(sent).run(request as never));
        // Passed validation: the request reached the (scripted, busy) host exactly as given.
        assert.equal(failure?.code, 'BUSY');
        assert.deepEqual(sent, [plain(request)]);
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses every generated defect with INVALID_REQUEST before sending anything', async () => {
    await fc.assert(
      fc.asyncProperty(runRequest, fc.constantFrom(...defects), async (request, [name, defect]) => {
        const broken = defect(request);
        assert.equal(validRunRequest(broken), false, name);
        const sent: unknown[] = [];
        const clientFailure = await typedFailure(async () => {
          for await (const _ of client(sent).stream(broken as never)) break;
        });
        assert.equal(clientFailure?.code, 'INVALID_REQUEST', name);
        assert.deepEqual(sent, []);
        const hostFailure = await typedFailure(() => driver.prepare(broken));
        assert.equal(hostFailure?.code, 'INVALID_REQUEST', name);
      }),
      { numRuns: RUNS },
    );
  });

  it('never throws on arbitrary values: the validators answer true or false', () => {
    const anything = fc.oneof(fc.anything({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 4 }), runRequest.chain((request) => fc.jsonValue({ maxDepth: 2 }).map((value) => ({ ...request, [Object.keys(request)[0]!]: value }))));
    fc.assert(
      fc.property(anything, (value) => {
        for (const validate of [validRunRequest, validDecision, validToolResult]) {
          const answer = validate(value);
          assert.equal(typeof answer, 'boolean');
          assert.equal(validate.explain(value) === undefined, answer);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('runtime prepare() refuses arbitrary requests only with a 4xx DriverError, quickly', async () => {
    const schemaNode: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.record(
          {
            type: fc.constantFrom('string', 'object', 'array', 'integer', 'number', 'boolean', 'null', 'nope', 7),
            pattern: fc.constantFrom('^(a+)+$', '(a|a)*b', '^\\d+$', '(?=a)', '\\1(a)', '[', 'a{2,}', '\\p{L}+', '(?<x>a)\\k<x>'),
            properties: fc.dictionary(fc.string({ maxLength: 4 }), tie('node'), { maxKeys: 3 }),
            items: tie('node'),
            minLength: fc.oneof(fc.nat(5), fc.constant(-1), fc.constant('2')),
            format: fc.constantFrom('email', 'date-time', 'uri', 'made-up'),
            $ref: fc.constantFrom('#', '#/definitions/x', 'https://example.invalid/s.json', '#/properties/a'),
            $schema: fc.constantFrom('https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft-07/schema#', 'https://example.invalid/dialect', 5),
            required: fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
            enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
          },
          { requiredKeys: [] },
        ),
        fc.boolean(),
        fc.jsonValue({ maxDepth: 1 }),
      ),
    })).node;
    const request = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      runRequest.map((base) => ({ ...base, provider: 'mock', model: 'demo' })),
      fc.tuple(runRequest, schemaNode).map(([base, outputSchema]) => ({ ...base, provider: 'mock', model: 'demo', outputSchema })),
    );
    const aaa = `"${'a'.repeat(40)}!"`;
    await fc.assert(
      fc.asyncProperty(request, async (value) => {
        const started = performance.now();
        const failure = await typedFailure(() => driver.prepare(value));
        if (failure) assert.ok(statusForCode(failure.code) >= 400 && statusForCode(failure.code) < 500, `${failure.code} (${failure.message})`);
        // A prepared output schema must also check a hostile value quickly (linear-time patterns).
        if (!failure && (value as Json).outputSchema) driver.prepare(value).outputSchema?.check(aaa);
        assert.ok(performance.now() - started < 2_000, 'validation took more than 2 s');
      }),
      { numRuns: RUNS },
    );
  });

  it('approval decisions and tool results: generated valid ones pass, each defect is refused before sending', async () => {
    const id = fc.string({ minLength: 1, maxLength: 40 });
    const decision = fc.record({
      approvalId: id,
      runId: id,
      call: fc.record({ id, name: toolName, arguments: jsonObject }),
      decision: fc.constantFrom('approve', 'deny', 'cancel'),
    });
    const result = fc.oneof(
      fc.record({ executionId: id, runId: id, callId: id, output: plainJsonValue(3) }),
      fc.record({ executionId: id, runId: id, callId: id, error: fc.constant('APPLICATION_TOOL_FAILED') }),
    );
    const breakObject = fc.constantFrom<[string, (value: Json) => unknown]>(
      ['unknown field', (value) => ({ ...value, extra: 1 })],
      ['empty runId', (value) => ({ ...value, runId: '' })],
      ['runId too long', (value) => ({ ...value, runId: 'r'.repeat(257) })],
      ['no runId', ({ runId: _, ...rest }) => rest],
      ['null', () => null],
    );
    await fc.assert(
      fc.asyncProperty(decision, result, breakObject, async (goodDecision, goodResult, [name, defect]) => {
        assert.ok(validDecision(goodDecision), validDecision.explain(goodDecision));
        assert.ok(validToolResult(goodResult), validToolResult.explain(goodResult));
        const sent: unknown[] = [];
        const peer = client(sent);
        assert.equal((await typedFailure(() => peer.decideApproval(goodDecision as never)))?.code, 'BUSY');
        assert.equal((await typedFailure(() => peer.completeTool(goodResult as never)))?.code, 'BUSY');
        assert.deepEqual(sent, [plain(goodDecision), plain(goodResult)]);
        assert.equal((await typedFailure(() => peer.decideApproval(defect(goodDecision) as never)))?.code, 'INVALID_APPROVAL', name);
        assert.equal((await typedFailure(() => peer.completeTool(defect(goodResult) as never)))?.code, 'INVALID_TOOL_EXECUTION', name);
        if (name !== 'null') {
          const both = { ...goodResult, output: 1, error: 'APPLICATION_TOOL_FAILED' };
          assert.equal((await typedFailure(() => peer.completeTool(both as never)))?.code, 'INVALID_TOOL_EXECUTION', 'output and error');
        }
        assert.equal(sent.length, 2);
      }),
      { numRuns: RUNS },
    );
  });
  it('refuses decisions and results that are not plain JSON (own __proto__ key, nesting past 64) before sending', async () => {
    const nested = (levels: number): unknown => Array.from({ length: levels }).reduce<unknown>((inner) => [inner], []);
    /** Levels of the deepest value below `value` (0 for a scalar or an empty container). */
    const depth = (value: unknown): number =>
      value !== null && typeof value === 'object' ? Math.max(0, ...Object.values(value).map((child) => 1 + depth(child))) : 0;
    /** An own "__proto__" key anywhere below `value` (fast-check's JSON values make them too). */
    const protoKey = (value: unknown): boolean =>
      value !== null && typeof value === 'object' && (Object.hasOwn(value, '__proto__') || Object.values(value).some(protoKey));
    const payload = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).map((value) => ({ value, plain: !protoKey(value) })),
      // An own "__proto__" key, as JSON.parse makes it.
      fc.jsonValue({ maxDepth: 2 }).map((value) => ({ value: JSON.parse(`{"q":${JSON.stringify(value)},"__proto__":1}`) as unknown, plain: false })),
      fc.integer({ min: 60, max: 70 }).map((levels) => ({ value: nested(levels), plain: levels <= 64 })),
    );
    await fc.assert(
      fc.asyncProperty(payload, async ({ value, plain }) => {
        assert.equal(plain, depth(value) <= 64 && !protoKey(value));
        const sent: unknown[] = [];
        const peer = client(sent);
        const argumentsPlain = plain && depth(value) + 1 <= 64;
        const decision = { approvalId: 'a', runId: 'r', call: { id: 'c', name: 'lookup', arguments: { value } }, decision: 'approve' };
        const decided = await typedFailure(() => peer.decideApproval(decision as never));
        assert.equal(decided?.code, argumentsPlain ? 'BUSY' : 'INVALID_APPROVAL');
        const completed = await typedFailure(() => peer.completeTool({ executionId: 'e', runId: 'r', callId: 'c', output: value } as never));
        assert.equal(completed?.code, plain ? 'BUSY' : 'INVALID_TOOL_EXECUTION');
        assert.equal(sent.length, Number(argumentsPlain) + Number(plain));
      }),
      { numRuns: RUNS },
    );
  });
  it('never runs caller schema patterns in the client (they are opaque; the host runs them in linear time)', async () => {
    const hostile = { type: 'string', pattern: '^(a+)+$' };
    const output = `${'a'.repeat(64)}!`;
    const at = '2026-09-20T12:00:00.000Z';
    const events = [
      { type: 'run.started', runId: 'r1', sequence: 1, timestamp: at, provider: 'mock', model: 'demo' },
      { type: 'tool.execution.requested', runId: 'r1', sequence: 2, timestamp: at, execution: { executionId: 'e1', runId: 'r1', call: { id: 'c1', name: 'lookup', arguments: { q: output } } } },
      { type: 'run.completed', runId: 'r1', sequence: 3, timestamp: at, result: { runId: 'r1', provider: 'mock', model: 'demo', text: JSON.stringify(output), output, usage: {}, steps: 1, finishReason: 'stop' } },
    ];
    const fetch = (async () =>
      new Response(events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''), {
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'agenticdriver-version': '1.0' },
      })) as typeof globalThis.fetch;
    const peer = new AgenticClient({ url: 'http://127.0.0.1:9', token: 'property-token', fetch });
    const request = {
      provider: 'mock',
      model: 'demo',
      input: 'Hello',
      outputSchema: hostile,
      tools: ['lookup'],
      applicationTools: [{ name: 'lookup', description: 'd', inputSchema: { type: 'object', properties: { q: hostile } }, outputSchema: hostile }],
    };
    const started = performance.now();
    const types: string[] = [];
    for await (const event of peer.stream(request)) types.push(event.type);
    assert.deepEqual(types, ['run.started', 'tool.execution.requested', 'run.completed']);
    assert.ok(performance.now() - started < 1_000);
  });
});
