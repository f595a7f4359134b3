/** OpenTelemetry spans, captured by an in-memory exporter: names, parents and GenAI attributes; no content unless opted in. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { echoTool, script, sseEvents, startTestHost, TOKEN } from '../support/host.js';

const PROMPT = 'planted-span-prompt-c0ffee';
const SECRET_ARG = 'planted-tool-argument-51ab';
const run = { provider: 'mock', model: 'demo' };
const guarded = { ...echoTool, name: 'guarded', requiresApproval: true };

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('OpenTelemetry spans', () => {
  it('a run span with child spans per model step, tool call and approval wait, with GenAI attributes and no content', async () => {
    const exporter = new InMemorySpanExporter();
    let spans: ReadableSpan[] = [];
    const tokens = [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['echo', 'guarded'], approveTools: ['guarded'] }];
    const host = await startTestHost({ tracing: { enabled: true }, approvals: { interactive: true }, tokens }, { tools: [echoTool, guarded], spanExporter: exporter });
    try {
      // Two model steps around one host tool call, with usage on both steps.
      const body = script(
        [{ toolCall: { name: 'echo', arguments: { text: SECRET_ARG } } }, { usage: { inputTokens: 5, outputTokens: 2 } }],
        [{ text: PROMPT }, { usage: { inputTokens: 8, outputTokens: 3 } }],
      );
      assert.equal((await host.post('/v1/runs', { ...run, input: body, tools: ['echo'] })).status, 200);
      // An approval wait: a streamed run, decided over HTTP.
      const approvalRun = script([{ toolCall: { name: 'guarded', arguments: { text: SECRET_ARG } } }], [{ text: 'ok' }]);
      const response = await host.post('/v1/runs', { ...run, input: approvalRun, tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } }, { accept: 'text/event-stream' });
      const events = sseEvents(response);
      let approval: Record<string, unknown> | undefined;
      for (let next = await events.next(); !next.done; next = await events.next()) {
        if (next.value.type === 'approval.requested') {
          approval = next.value.approval as Record<string, unknown>;
          await new Promise((resolve) => setTimeout(resolve, 30));
          const decided = await host.post('/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
          assert.equal(decided.status, 200);
        }
      }
      // A failed run.
      assert.equal((await host.post('/v1/runs', { ...run, input: script([{ error: { code: 'PROVIDER_ERROR', message: PROMPT } }]) })).status, 502);
      spans = exporter.getFinishedSpans();
    } finally {
      await host.close();
    }
    const runs = spans.filter((span) => span.name === 'invoke_agent');
    assert.equal(runs.length, 3);
    const [first, second, failed] = runs.sort((a, b) => Number(a.startTime[0] - b.startTime[0]) || a.startTime[1] - b.startTime[1]) as [ReadableSpan, ReadableSpan, ReadableSpan];
    const childrenOf = (parent: ReadableSpan) => spans.filter((span) => parentOf(span) === parent.spanContext().spanId);

    assert.equal(first.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(first.attributes['gen_ai.request.model'], 'demo');
    assert.equal(first.attributes['gen_ai.provider.name'], 'mock');
    assert.equal(first.attributes['gen_ai.usage.input_tokens'], 13);
    assert.equal(first.attributes['gen_ai.usage.output_tokens'], 5);
    assert.deepEqual(first.attributes['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(first.status.code, 1);
    assert.deepEqual(
      childrenOf(first).map((span) => span.name).sort(),
      ['chat demo', 'chat demo', 'execute_tool echo'],
    );
    const steps = childrenOf(first).filter((span) => span.name === 'chat demo');
    assert.deepEqual(steps.map((span) => [span.attributes['agenticdriver.step'], span.attributes['gen_ai.usage.input_tokens'], span.attributes['gen_ai.operation.name']]).sort(), [[1, 5, 'chat'], [2, 8, 'chat']]);
    const tool = childrenOf(first).find((span) => span.name === 'execute_tool echo')!;
    assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(tool.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(tool.attributes['gen_ai.tool.call.id'], 'call_1_1');

    const guardedTool = childrenOf(second).find((span) => span.name === 'execute_tool guarded')!;
    const wait = childrenOf(guardedTool);
    assert.deepEqual(wait.map((span) => span.name), ['agenticdriver.approval.wait']);
    assert.equal(wait[0]!.attributes['agenticdriver.approval.outcome'], 'approved');

    assert.equal(failed.status.code, 2);
    assert.equal(failed.attributes['error.type'], 'PROVIDER_ERROR');
    assert.equal(childrenOf(failed)[0]!.attributes['error.type'], 'PROVIDER_ERROR');

    const text = JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, status: span.status, events: span.events })));
    for (const planted of [PROMPT, SECRET_ARG, TOKEN, 'test-user']) assert.equal(text.includes(planted), false, `${planted} in a span`);
  });

  it('captureContent adds the input, tool arguments and results, and the output', async () => {
    const exporter = new InMemorySpanExporter();
    let spans: ReadableSpan[] = [];
    const host = await startTestHost({ tracing: { enabled: true, captureContent: true } }, { spanExporter: exporter });
    try {
      const body = script([{ toolCall: { name: 'echo', arguments: { text: SECRET_ARG } } }], [{ text: PROMPT }]);
      assert.equal((await host.post('/v1/runs', { ...run, input: body, tools: ['echo'] })).status, 200);
      spans = exporter.getFinishedSpans();
    } finally {
      // Shutting the host down shuts the exporter down, which empties it.
      await host.close();
    }
    const agent = spans.find((span) => span.name === 'invoke_agent')!;
    assert.match(String(agent.attributes['gen_ai.output.messages']), new RegExp(PROMPT));
    assert.match(String(agent.attributes['gen_ai.input.messages']), /mockScript/);
    const tool = spans.find((span) => span.name === 'execute_tool echo')!;
    assert.match(String(tool.attributes['gen_ai.tool.call.arguments']), new RegExp(SECRET_ARG));
    assert.match(String(tool.attributes['gen_ai.tool.call.result']), new RegExp(SECRET_ARG));
  });

  it('a grounded run gets a retrieval span for its search, ended before the first model step', async () => {
    const exporter = new InMemorySpanExporter();
    let spans: ReadableSpan[] = [];
    const host = await startTestHost(
      {
        tracing: { enabled: true },
        retrieval: { corpora: [{ id: 'notes' }] },
        tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], retrieval: { search: ['notes'], index: ['notes'] } }],
      },
      { spanExporter: exporter },
    );
    try {
      const indexed = await host.post('/v1/retrieval/index', {
        corpus: 'notes',
        source: { id: 'handbook', revision: 'r1' },
        chunks: [{ id: 'c1', text: 'Expense reports are due on the first Monday of each month.' }],
      });
      assert.equal(indexed.status, 200, await indexed.text());
      const answered = await host.post('/v1/runs', { ...run, input: 'When are expense reports due?', retrieval: { corpus: 'notes' } });
      assert.equal(answered.status, 200, await answered.text());
      spans = exporter.getFinishedSpans();
    } finally {
      await host.close();
    }
    const agent = spans.find((span) => span.name === 'invoke_agent')!;
    const search = spans.find((span) => span.name === 'retrieval notes');
    assert.ok(search, spans.map((span) => span.name).join());
    assert.equal(parentOf(search), agent.spanContext().spanId);
    assert.equal(search.attributes['gen_ai.operation.name'], 'retrieval');
    assert.equal(search.attributes['gen_ai.data_source.id'], 'notes');
    const step = spans.find((span) => span.name === 'chat demo')!;
    const toMs = (time: [number, number]) => time[0] * 1000 + time[1] / 1e6;
    assert.ok(toMs(search.endTime) <= toMs(step.startTime), 'the search ends before the model step starts');
  });

  it('a durable job gets the same run span, with its fixed run id', async () => {
    const exporter = new InMemorySpanExporter();
    let spans: ReadableSpan[] = [];
    const host = await startTestHost(
      { tracing: { enabled: true }, jobs: { retentionMs: 60_000, pollIntervalMs: 20 }, tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], jobs: ['submit', 'read'] }] },
      { spanExporter: exporter },
    );
    let runId = '';
    try {
      const job = (await (await host.post('/v1/jobs/submit', { key: 'traced', request: { provider: 'mock', model: 'demo', input: 'traced job' } })).json()) as { id: string; runId: string };
      runId = job.runId;
      for (let state = ''; state !== 'completed'; ) state = ((await (await host.post('/v1/jobs/read', { id: job.id })).json()) as { state: string }).state;
      spans = exporter.getFinishedSpans();
    } finally {
      await host.close();
    }
    const agent = spans.find((span) => span.name === 'invoke_agent');
    assert.ok(agent, spans.map((span) => span.name).join());
    assert.ok(Object.values(agent.attributes).includes(runId), JSON.stringify(agent.attributes));
  });

  it('exports over OTLP/HTTP to a collector (a loopback server here) when the host shuts down', async () => {
    const bodies: string[] = [];
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bodies.push(`${request.method} ${request.url} ${request.headers['content-type']}\n${Buffer.concat(chunks).toString('utf8')}`);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const port = (collector.address() as AddressInfo).port;
    try {
      const host = await startTestHost({ tracing: { enabled: true, endpoint: `http://127.0.0.1:${port}/v1/traces`, serviceName: 'obs-test' } });
      try {
        assert.equal((await host.post('/v1/runs', { ...run, input: PROMPT })).status, 200);
      } finally {
        await host.close();
      }
      assert.equal(bodies.length >= 1, true);
      assert.match(bodies[0]!, /^POST \/v1\/traces application\/json/);
      assert.match(bodies.join('\n'), /invoke_agent/);
      assert.match(bodies.join('\n'), /obs-test/);
      assert.equal(bodies.join('\n').includes(PROMPT), false);
    } finally {
      collector.closeAllConnections();
      await new Promise((resolve) => collector.close(resolve));
    }
  });

  it('refuses a plain-HTTP OTLP endpoint off loopback', async () => {
    await assert.rejects(startTestHost({ tracing: { enabled: true, endpoint: 'http://collector.example.com:4318/v1/traces' } }), (error: { code?: string }) => error.code === 'INVALID_CONFIG');
  });
});
