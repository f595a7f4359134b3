/**
 * The three CLI kinds configured in a real host (config parsed like an operator's file)
 * and driven over loopback HTTP: JSON and SSE runs, a typed failure, discovery health with
 * the CLI's version, and `doctor` on the same configuration.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { doctor } from '../../../src/cli/doctor.js';
import { startAnthropicMessagesServer, startGeminiServer, startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { parseSse, sseEvents, startTestHost, TOKEN, type TestHost } from '../../support/host.js';
import { API_KEY, binary, claudeAccount, codexAccount, geminiAccount, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 90_000 };

const sent: unknown[] = [];
const guarded = {
  name: 'guarded',
  description: 'Sends something; a person must agree first.',
  inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'], additionalProperties: false },
  requiresApproval: true,
  execute: (input: Record<string, unknown>) => {
    sent.push(input);
    return { sent: true };
  },
};

interface Kind {
  id: string;
  model: string;
  version: string;
  server?: VendorServer;
  entry(server: VendorServer, directory: string, proxy: RefusingProxy): Promise<Record<string, unknown>>;
  start(options: { apiKey: string }): Promise<VendorServer>;
}

/** The proxy reaches the CLI as configured environment, as an operator would set it. */
const proxied = (proxy: RefusingProxy) => ({ HTTPS_PROXY: proxy.url, https_proxy: proxy.url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' });

const KINDS: Kind[] = [
  {
    id: 'codex',
    model: 'gpt-5.5',
    version: '0.171.0',
    start: startOpenAIResponsesServer,
    entry: async (server, directory, proxy) => ({
      kind: 'codex',
      id: 'codex',
      models: ['gpt-5.5'],
      binary: binary('codex'),
      accountDirectory: await codexAccount(directory, server.url),
      environment: { LOOPBACK_OPENAI_KEY: API_KEY, ...proxied(proxy) },
    }),
  },
  {
    id: 'claude',
    model: 'claude-test',
    version: '2.1.332',
    start: startAnthropicMessagesServer,
    entry: async (server, directory, proxy) => ({
      kind: 'claude-code',
      id: 'claude',
      models: ['claude-test'],
      binary: binary('claude'),
      accountDirectory: await claudeAccount(directory),
      environment: { ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_API_KEY: API_KEY, ...proxied(proxy) },
    }),
  },
  {
    id: 'gemini',
    model: 'gemini-2.5-flash',
    version: '0.61.0',
    start: startGeminiServer,
    entry: async (server, directory, proxy) => ({
      kind: 'gemini-cli',
      id: 'gemini',
      models: ['gemini-2.5-flash'],
      binary: binary('gemini'),
      accountDirectory: await geminiAccount(directory),
      environment: { GOOGLE_GEMINI_BASE_URL: server.origin, GEMINI_API_KEY: API_KEY, ...proxied(proxy) },
    }),
  },
];

describe('CLI providers through the host', () => {
  let host: TestHost;
  let proxy: RefusingProxy;
  let scratch: { path: string; remove(): Promise<void> };
  const entries: Record<string, unknown>[] = [];

  before(async () => {
    proxy = await startRefusingProxy();
    scratch = await scratchDirectory('host');
    for (const kind of KINDS) {
      kind.server = await kind.start({ apiKey: API_KEY });
      entries.push(await kind.entry(kind.server, await mkdtemp(join(scratch.path, `${kind.id}-`)), proxy));
    }
    const ids = KINDS.map((kind) => kind.id);
    host = await startTestHost(
      {
        providers: entries,
        approvals: { interactive: true, maxPending: 2 },
        applicationTools: { enabled: true, requireApproval: false, maxPending: 1 },
        tokens: [
          {
            id: 'main',
            subject: 'test-user',
            tokenRef: { env: 'AD_TEST_TOKEN' },
            providers: ids,
            tools: ['guarded'],
            approveTools: ['guarded'],
            applicationTools: [{ name: 'catalog', requiresApproval: false }],
          },
        ],
      },
      { tools: [guarded] },
    );
  });
  after(async () => {
    await host.close();
    for (const kind of KINDS) await kind.server?.close();
    await proxy.close();
    await scratch.remove();
    assert.deepEqual(proxy.attempts, [], 'no CLI traffic may leave for anywhere but the loopback model servers');
  });

  for (const kind of KINDS) {
    describe(kind.id, () => {
      test('JSON run: the CLI answer as the run result, with usage', TIMEOUT, async () => {
        kind.server!.push({ turn: { text: ['json ', 'answer'], usage: { input: 7, output: 2 } } });
        const response = await host.post('/v1/runs', { provider: kind.id, model: kind.model, input: 'answer in JSON mode' });
        const result = (await response.json()) as { text: string; usage: { inputTokens?: number; outputTokens?: number } };
        assert.equal(response.status, 200, JSON.stringify(result));
        assert.equal(result.text, 'json answer');
        assert.equal(result.usage.outputTokens, 2);
      });

      test('SSE run: deltas and one terminal run.completed', TIMEOUT, async () => {
        kind.server!.push({ turn: { text: ['streamed ', 'answer'], usage: { input: 7, output: 2 } } });
        const response = await host.post('/v1/runs', { provider: kind.id, model: kind.model, input: 'answer in SSE mode' }, { accept: 'text/event-stream' });
        assert.equal(response.status, 200);
        const events = parseSse(await response.text());
        assert.equal(events[0]!.type, 'run.started');
        assert.equal(events.at(-1)!.type, 'run.completed');
        const text = events.filter((event) => event.type === 'text.delta').map((event) => event.text).join('');
        assert.equal(text, 'streamed answer');
        assert.equal((events.at(-1)!.result as { text: string }).text, 'streamed answer');
      });

      test('a vendor 429 ends the run RATE_LIMITED: HTTP 429 on JSON, run.failed on SSE', TIMEOUT, async () => {
        kind.server!.push({ error: { status: 429, message: 'slow down' } });
        const json = await host.post('/v1/runs', { provider: kind.id, model: kind.model, input: 'hi' });
        assert.equal(json.status, 429);
        assert.equal(((await json.json()) as { error: { code: string } }).error.code, 'RATE_LIMITED');
        kind.server!.push({ error: { status: 429, message: 'slow down' } });
        const events = parseSse(await (await host.post('/v1/runs', { provider: kind.id, model: kind.model, input: 'hi' }, { accept: 'text/event-stream' })).text());
        assert.equal(events.at(-1)!.type, 'run.failed');
        assert.equal((events.at(-1)!.error as { code: string }).code, 'RATE_LIMITED');
      });
    });
  }

  test('claude-code: a host tool called through the MCP bridge waits for an interactive approval', TIMEOUT, async () => {
    const claude = KINDS.find((kind) => kind.id === 'claude')!.server!;
    claude.push({ turn: { toolCalls: [{ id: 'call_send', name: 'mcp__agenticdriver__guarded', arguments: { to: 'ada' } }] } });
    claude.push({ turn: { text: 'sent after approval' } });
    const response = await host.post(
      '/v1/runs',
      { provider: 'claude', model: 'claude-test', input: 'send it', tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } },
      { accept: 'text/event-stream' },
    );
    const events: Record<string, any>[] = [];
    for await (const event of sseEvents(response)) {
      events.push(event);
      if (event.type !== 'approval.requested') continue;
      assert.deepEqual(sent, [], 'nothing runs before the decision');
      const approval = event.approval as Record<string, unknown>;
      const decision = await fetch(`${host.url}/v1/approvals/decisions`, {
        method: 'POST',
        headers: host.headers(),
        body: JSON.stringify({ approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' }),
      });
      assert.equal(decision.status, 200);
    }
    const types = events.map((event) => event.type);
    assert.deepEqual(types.slice(types.indexOf('tool.called'), types.indexOf('tool.completed') + 1), ['tool.called', 'approval.requested', 'approval.resolved', 'tool.completed']);
    assert.equal(events.at(-1)!.type, 'run.completed');
    assert.equal(events.at(-1)!.result.text, 'sent after approval');
    assert.deepEqual(sent, [{ to: 'ada' }]);
  });

  test('gemini-cli: an application tool called through the MCP bridge is executed by the client through its ticket', TIMEOUT, async () => {
    const gemini = KINDS.find((kind) => kind.id === 'gemini')!.server!;
    gemini.push({ turn: { toolCalls: [{ id: 'call_catalog', name: 'mcp_agenticdriver_catalog', arguments: { sku: 'A-1' } }] } });
    gemini.push({ turn: { text: 'A-1 costs 7' } });
    const catalog = {
      name: 'catalog',
      description: 'Prices an article in the application.',
      inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'], additionalProperties: false },
      outputSchema: { type: 'object', properties: { price: { type: 'integer' } }, required: ['price'] },
    };
    const response = await host.post('/v1/runs', { provider: 'gemini', model: 'gemini-2.5-flash', input: 'price A-1', tools: ['catalog'], applicationTools: [catalog] }, { accept: 'text/event-stream' });
    const events: Record<string, any>[] = [];
    for await (const event of sseEvents(response)) {
      events.push(event);
      if (event.type !== 'tool.execution.requested') continue;
      const execution = event.execution as { executionId: string; runId: string; call: { id: string; arguments: unknown } };
      assert.deepEqual(execution.call.arguments, { sku: 'A-1' });
      const result = await fetch(`${host.url}/v1/tool-executions/results`, {
        method: 'POST',
        headers: host.headers(),
        body: JSON.stringify({ executionId: execution.executionId, runId: execution.runId, callId: execution.call.id, output: { price: 7 } }),
      });
      assert.equal(result.status, 200, await result.clone().text());
    }
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    assert.equal(events.at(-1)!.result.text, 'A-1 costs 7');
    assert.deepEqual(events.find((event) => event.type === 'tool.completed')?.output, { price: 7 });
    assert.ok(gemini.generations.at(-1)!.rawBody.includes('price'), 'the CLI handed the application result to its model');
  });

  test('GET /v1/providers: each CLI reports its version and sign-in state', TIMEOUT, async () => {
    const response = await fetch(`${host.url}/v1/providers?refresh=true`, { headers: host.headers() });
    const { providers } = (await response.json()) as { providers: { id: string; authMode: string; health: { status: string; code: string; message: string } }[] };
    for (const kind of KINDS) {
      const provider = providers.find((candidate) => candidate.id === kind.id);
      assert.equal(provider?.authMode, 'cli-session');
      assert.match(provider.health.message, new RegExp(kind.version.replaceAll('.', '\\.')), JSON.stringify(provider.health));
    }
    // Codex's test account uses a gateway key, not a sign-in; Claude and Gemini have their keys.
    assert.equal(providers.find((provider) => provider.id === 'codex')!.health.code, 'CLI_AUTH_REQUIRED');
    assert.equal(providers.find((provider) => provider.id === 'claude')!.health.status, 'ready');
    assert.equal(providers.find((provider) => provider.id === 'gemini')!.health.status, 'ready');
  });

  test('doctor reports each CLI with its version', TIMEOUT, async () => {
    const tokenFile = join(scratch.path, 'token');
    await writeFile(tokenFile, TOKEN, { mode: 0o600 });
    const configPath = join(scratch.path, 'agenticdriver.json');
    await writeFile(configPath, JSON.stringify({ version: 1, listen: { host: '127.0.0.1', port: 0 }, providers: entries, tokens: [{ id: 'main', subject: 'ops', tokenRef: { file: tokenFile }, providers: KINDS.map((kind) => kind.id) }] }));
    const report = await doctor(configPath);
    assert.deepEqual(
      report.providers.map((provider) => [provider.id, provider.version]),
      KINDS.map((kind) => [kind.id, kind.version]),
    );
  });
});
