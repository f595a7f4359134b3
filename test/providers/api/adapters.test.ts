/**
 * Every API kind through the runtime (`new AgenticDriver({providers:[adapter]})`) against
 * its loopback vendor fake: text, tool loops, structured output, usage, limits, refusals,
 * the error map, retries, malformed and oversized streams, cancellation and discovery.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HONESTY_TURNS } from '../../vendors/honesty-turns.js';
import { framesThroughText, KEY, KINDS, outcome, runRequest, setup } from './harness.js';
import { AgenticDriver } from '../../../src/runtime/driver.js';
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from '../../../src/providers/api/anthropic.js';

const HANGING_TURN = { text: ['first', 'never'] };

for (const kase of KINDS) {
  const { kind } = kase;
  const withServer = async (script: any[], body: (s: Awaited<ReturnType<typeof setup>>) => Promise<void>, options = {}) => {
    const s = await setup(kase, { script, apiKey: KEY, ...options });
    try {
      await body(s);
    } finally {
      await s.close();
    }
  };

  describe(`${kind} adapter`, () => {
    it('streams text with usage, sending the key only in its header', () =>
      withServer([{ turn: HONESTY_TURNS.text }], async ({ driver, server }) => {
        const { result, events } = await outcome(driver, runRequest(kind, { instructions: 'Be brief.' }));
        assert.equal(result.text, 'Hello wörld');
        // Deltas that arrive in one upstream read leave as one event; together they are the text, in order.
        const deltas = events.filter((e) => e.type === 'text.delta').map((e) => e.text);
        assert.equal(deltas.join(''), 'Hello wörld');
        assert.ok(deltas.every((text) => text !== ''));
        assert.deepEqual(result.usage, kase.textUsage);
        assert.equal(result.finishReason, 'stop');
        const [request] = server.generations;
        assert.equal(kase.keyOf(request!.headers), KEY);
        assert.ok(!request!.path.includes(KEY) && !request!.search.includes(KEY), 'the key never travels in the URL');
        assert.ok(request!.rawBody.includes('Be brief.') && request!.rawBody.includes('Hi there'));
        if (kind === 'openai') assert.equal(request!.body.store, false);
      }));

    it('runs a multi-step tool loop with parallel, fragmented tool calls and replays the step', () =>
      withServer([{ turn: HONESTY_TURNS.tools }, { turn: { text: 'Done.', usage: { input: 40, output: 2, cached: 0, reasoning: 0 } } }], async ({ driver, server }) => {
        const { result, events } = await outcome(driver, runRequest(kind, { tools: ['lookup', 'clock'] }));
        assert.equal(result?.text, 'Done.');
        assert.equal(result.steps, 2);
        const called = events.filter((e) => e.type === 'tool.called').map((e) => [e.call.id, e.call.name, e.call.arguments]);
        assert.deepEqual(called, [['call_a', 'lookup', { city: 'Zürich', days: 3 }], ['call_b', 'clock', {}]]);
        const second = server.generations[1]!.body;
        assert.deepEqual(kase.toolResults(second), [['call_a', '{"found":"Zürich"}'], ['call_b', '{"now":"noon"}']]);
        assert.deepEqual(kase.replayedCalls(second), ['call_a', 'call_b']);
        assert.equal(result.usage.outputTokens, 11, 'usage totals cover every step');
      }));

    it('sends the output schema natively and validates the answer locally', () =>
      withServer([{ turn: { text: '{"answer":42}' } }, { turn: { text: '{"answer":"no"}' } }], async ({ driver, server }) => {
        const outputSchema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] };
        const good = await outcome(driver, runRequest(kind, { outputSchema }));
        assert.deepEqual(good.result.output, { answer: 42 });
        assert.deepEqual(kase.schemaOf(server.generations[0]!.body), outputSchema);
        const bad = await outcome(driver, runRequest(kind, { outputSchema }));
        assert.equal(bad.error.code, 'INVALID_OUTPUT');
      }));

    it('sends an output-token limit only when the run or the host sets one (anthropic, which requires one, its documented 4096)', () =>
      withServer([{ turn: { text: 'a' } }, { turn: { text: 'b' } }, { turn: { text: 'c' } }, { turn: { text: 'd' } }], async ({ driver, adapter, server }) => {
        assert.equal((await outcome(driver, runRequest(kind))).result.text, 'a');
        assert.equal((await outcome(driver, runRequest(kind, { maxOutputTokens: 700 }))).result.text, 'b');
        const capped = new AgenticDriver({ providers: [adapter], limits: { maxOutputTokens: 300 } });
        assert.equal((await outcome(capped, runRequest(kind))).result.text, 'c');
        assert.equal((await outcome(capped, runRequest(kind, { maxOutputTokens: 700 }))).result.text, 'd');
        const sent = server.generations.map((request) => kase.maxTokensOf(request.body));
        assert.deepEqual(sent, [kind === 'anthropic' ? ANTHROPIC_DEFAULT_MAX_TOKENS : undefined, 700, 300, 300]);
        if (kind === 'gemini') assert.equal(server.generations[0]!.body.generationConfig, undefined, 'no empty generationConfig');
      }));

    it('reports the output limit as finishReason length, and inside a tool call as TRUNCATED_TOOL_CALL', () =>
      withServer([{ turn: HONESTY_TURNS.length }, { turn: { toolCalls: [{ name: 'lookup', arguments: '{"ci' }], finish: 'length' } }], async ({ driver }) => {
        const cut = await outcome(driver, runRequest(kind));
        assert.equal(cut.result.finishReason, 'length');
        assert.equal(cut.result.text, 'cut sho');
        const truncated = await outcome(driver, runRequest(kind, { tools: ['lookup'] }));
        assert.equal(truncated.error.code, 'TRUNCATED_TOOL_CALL');
      }));

    it('maps a refusal to PROVIDER_REFUSAL', () =>
      withServer([{ turn: { refusal: 'I cannot help with that.' } }], async ({ driver }) => {
        assert.equal((await outcome(driver, runRequest(kind))).error.code, 'PROVIDER_REFUSAL');
      }));

    it('fails with AUTH_REQUIRED without a key and sends nothing; re-reads the key every turn', () =>
      withServer([{ turn: { text: 'one' } }, { turn: { text: 'two' } }], async ({ driver, server, env }) => {
        env.PROVIDER_KEY = '';
        const missing = await outcome(driver, runRequest(kind));
        assert.equal(missing.error.code, 'AUTH_REQUIRED');
        assert.equal(server.generations.length, 0);
        env.PROVIDER_KEY = KEY;
        assert.equal((await outcome(driver, runRequest(kind))).result.text, 'one');
        env.PROVIDER_KEY = 'sk-rotated';
        const rejected = await outcome(driver, runRequest(kind));
        assert.equal(rejected.error.code, 'PROVIDER_AUTH');
        assert.equal(rejected.error.retryable, false);
        assert.equal(kase.keyOf(server.generations[1]!.headers), 'sk-rotated');
        assert.ok(!JSON.stringify(rejected).includes('sk-rotated') && !JSON.stringify(missing).includes(KEY), 'keys never reach errors or events');
      }));

    it('retries a 429 before output when asked, honouring Retry-After, with the same body and key', () =>
      withServer([{ error: { status: 429, retryAfter: '0.03' } }, { turn: { text: 'after wait' } }], async ({ driver, server }) => {
        const started = Date.now();
        const { result } = await outcome(driver, runRequest(kind, { retry: { maxAttempts: 2, baseDelayMs: 1 } }));
        assert.equal(result.text, 'after wait');
        assert.ok(Date.now() - started >= 30, 'waited for Retry-After');
        const [first, second] = server.generations;
        assert.equal(first!.rawBody, second!.rawBody);
        assert.equal(kase.keyOf(first!.headers), kase.keyOf(second!.headers));
      }));

    it('does not retry a 429 without a policy, past maxDelayMs, or any 5xx', () =>
      withServer(
        [{ error: { status: 429 } }, { error: { status: 429, retryAfter: '120' } }, { error: { status: 503 } }, { turn: { text: 'never' } }],
        async ({ driver, server }) => {
          const plain = await outcome(driver, runRequest(kind));
          assert.deepEqual([plain.error.code, plain.error.retryable], ['RATE_LIMITED', true]);
          const tooLong = await outcome(driver, runRequest(kind, { retry: { maxAttempts: 3, maxDelayMs: 100 } }));
          assert.equal(tooLong.error.code, 'RATE_LIMITED');
          const serverError = await outcome(driver, runRequest(kind, { retry: { maxAttempts: 3, baseDelayMs: 1 } }));
          assert.deepEqual([serverError.error.code, serverError.error.retryable], ['PROVIDER_ERROR', true]);
          assert.equal(server.generations.length, 3);
          assert.ok(!serverError.error.message.includes('Scripted'), 'vendor error bodies are not echoed');
        },
      ));

    it('reports a cut or reset stream as INCOMPLETE_STREAM', () =>
      withServer([{ turn: { text: ['a', 'b', 'c'] }, cutAfter: 2 }, { turn: { text: ['a', 'b', 'c'] }, cutAfter: 2, then: 'reset' }], async ({ driver }) => {
        assert.equal((await outcome(driver, runRequest(kind))).error.code, 'INCOMPLETE_STREAM');
        assert.equal((await outcome(driver, runRequest(kind))).error.code, 'INCOMPLETE_STREAM');
      }));

    it('rejects garbage and oversized frames', () =>
      withServer(
        [{ frames: [{ raw: 'data: {not json\n\n' }] }, { frames: [{ raw: `data: "${'x'.repeat(10_000_001)}"\n\n` }] }, { http: { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>' } }],
        async ({ driver }) => {
          assert.equal((await outcome(driver, runRequest(kind))).error.code, 'INVALID_PROVIDER_RESPONSE');
          assert.equal((await outcome(driver, runRequest(kind))).error.code, 'RESPONSE_TOO_LARGE');
          assert.equal((await outcome(driver, runRequest(kind))).error.code, 'INVALID_PROVIDER_RESPONSE');
        },
      ));

    it('reassembles a stream split into tiny writes across UTF-8 sequences', () =>
      withServer([{ turn: { text: ['žluťoučký ', 'kůň 🐎'] }, chunkBytes: 3, frameDelayMs: 0 }], async ({ driver }) => {
        assert.equal((await outcome(driver, runRequest(kind))).result.text, 'žluťoučký kůň 🐎');
      }));

    it('aborts the HTTP request on cancellation, before and during the stream', () =>
      withServer([{ hang: true }, { turn: HANGING_TURN, cutAfter: framesThroughText(kase, HANGING_TURN, 'first'), then: 'hang' }], async ({ driver, server }) => {
        const controller = new AbortController();
        const hung = driver.run(runRequest(kind), { signal: controller.signal });
        while (server.generations.length < 1) await new Promise((r) => setTimeout(r, 5));
        controller.abort();
        await assert.rejects(hung, { code: 'CANCELLED' });
        await server.generations[0]!.abortedPromise;

        const second = new AbortController();
        for await (const event of driver.stream(runRequest(kind), { signal: second.signal })) {
          if (event.type === 'text.delta') second.abort();
          if (event.type === 'run.cancelled') break;
        }
        await server.generations[1]!.abortedPromise;
        assert.equal(server.generations[1]!.aborted, true);
      }));

    it('discovers models through the listing endpoint, never generating', async () => {
      const models = Array.from({ length: 150 }, (_, i) => `m-${i}`);
      const s = await setup(kase, { apiKey: KEY, models });
      try {
        const found = await s.adapter.inspect!(AbortSignal.timeout(5000));
        assert.equal(found.health.code, 'CATALOG_AVAILABLE');
        assert.equal(found.health.status, 'ready');
        assert.deepEqual(found.modelCatalog, { source: 'provider', models, complete: true });
        s.env.PROVIDER_KEY = 'wrong';
        assert.equal((await s.adapter.inspect!(AbortSignal.timeout(5000))).health.code, 'AUTH_REJECTED');
        s.env.PROVIDER_KEY = undefined;
        const before = s.server.requests.length;
        assert.equal((await s.adapter.inspect!(AbortSignal.timeout(5000))).health.status, 'unauthenticated');
        assert.equal(s.server.requests.length, before);
        assert.equal(s.server.generations.length, 0);
      } finally {
        await s.close();
      }
    });
  });
}
