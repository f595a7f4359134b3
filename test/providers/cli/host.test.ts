/**
 * The three CLI kinds configured in a real host (config parsed like an operator's file)
 * and driven over loopback HTTP: JSON and SSE runs, a typed failure, discovery health with
 * the CLI's version, and `doctor` on the same configuration.
 */
import assert from 'node:assert/strict';
import { lstat, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { doctor } from '../../../src/cli/doctor.js';
import { chooseRunBase } from '../../../src/providers/cli/workspace.js';
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
  product: string;
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
    product: 'Codex CLI',
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
    product: 'Claude Code',
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
    product: 'Gemini CLI',
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
        sessions: { retentionMs: 600_000 },
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
            sessions: ['create', 'read', 'continue', 'delete'],
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

      test('native session: advertised, the second turn resumes the CLI conversation, nothing native shows, delete removes the folder', TIMEOUT, async () => {
        const listed = (await (await fetch(`${host.url}/v1/providers`, { headers: host.headers() })).json()) as { providers: { id: string; capabilities: Record<string, boolean> }[] };
        assert.equal(listed.providers.find((provider) => provider.id === kind.id)?.capabilities.nativeContinuation, true);
        const created = await host.post('/v1/sessions/create', { provider: kind.id, model: kind.model, mode: 'native' });
        const { session } = (await created.json()) as { session: { id: string; revision: number; mode: string } };
        assert.equal(created.status, 200);
        assert.equal(session.mode, 'native');
        const folder = join(await chooseRunBase({ product: kind.product }), `session-${session.id}`);

        kind.server!.push({ turn: { text: 'Noted: plum.', usage: { input: 4, output: 3 } } });
        const first = await host.post('/v1/runs', { provider: kind.id, model: kind.model, input: 'Remember the word plum.', session: { id: session.id, revision: 0 } });
        const firstBody = (await first.json()) as { text: string; session: Record<string, unknown> };
        assert.equal(first.status, 200, JSON.stringify(firstBody));
        assert.deepEqual(Object.keys(firstBody.session).sort(), ['createdAt', 'expiresAt', 'id', 'mode', 'model', 'provider', 'revision', 'state', 'updatedAt']);

        kind.server!.push({ turn: { text: 'It was plum.', usage: { input: 8, output: 3 } } });
        const second = await host.post('/v1/runs', { provider: kind.id, model: kind.model, input: 'Which word?', session: { id: session.id, revision: 1 } }, { accept: 'text/event-stream' });
        const events = parseSse(await second.text());
        assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
        const sent = kind.server!.generations.at(-1)!.rawBody;
        // The CLI's own record of turn one, not our replayed transcript (whose sections are labelled).
        assert.ok(sent.includes('Remember the word plum.') && sent.includes('Noted: plum.') && !sent.includes('assistant:\\n'), sent.slice(0, 2000));
        assert.ok(!JSON.stringify(events).includes(folder), 'no native detail in the events');

        const read = (await (await host.post('/v1/sessions/read', { id: session.id })).json()) as { session: Record<string, unknown>; history: unknown[] };
        assert.equal(read.history.length, 4);
        assert.equal(read.session.revision, 2);
        assert.ok(!JSON.stringify(read).match(/provider_?state/i));
        assert.ok(await lstat(folder).then(() => true, () => false), 'the CLI conversation is kept between turns');

        assert.equal((await host.post('/v1/sessions/delete', { id: session.id })).status, 200);
        assert.equal(await lstat(folder).then(() => true, () => false), false, 'deleting the session removes its folder');
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
