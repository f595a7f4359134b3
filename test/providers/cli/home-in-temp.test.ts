/**
 * Every CLI kind keeps its lockdown when HOME lies inside the system temp directory (as in
 * many containers and CI runners): the model is offered only the run's bridge tools, a
 * failed model request is not retried, and nothing tries to leave for the internet.
 * Gemini CLI silently ignored its locked-down settings there before the run directories
 * moved to a private folder (see src/providers/cli/workspace.ts); it now reads them as the
 * run's workspace settings, which it honours for any user (see src/providers/cli/gemini-cli.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { claudeCode } from '../../../src/providers/cli/claude-code.js';
import { codex } from '../../../src/providers/cli/codex.js';
import { geminiCli } from '../../../src/providers/cli/gemini-cli.js';
import { AgenticDriver } from '../../../src/runtime/driver.js';
import type { ProviderAdapter } from '../../../src/providers/contract/v1.js';
import type { HostTool } from '../../../src/runtime/tools.js';
import { tempDir } from '../../support/temp.js';
import { startAnthropicMessagesServer, startGeminiServer, startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { API_KEY, binary, claudeAccount, codexAccount, drain, geminiAccount, hostEnvironment, request, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 90_000 };
const savedHome = process.env.HOME;
const savedRuntime = process.env.XDG_RUNTIME_DIR;
const tempHome = tempDir('ad-home-in-temp-');

before(() => {
  process.env.HOME = tempHome;
  delete process.env.XDG_RUNTIME_DIR;
});
after(() => {
  if (savedHome === undefined) delete process.env.HOME;
  else process.env.HOME = savedHome;
  if (savedRuntime !== undefined) process.env.XDG_RUNTIME_DIR = savedRuntime;
});

const lookup: HostTool = {
  name: 'lookup',
  description: 'Looks a key up.',
  inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'], additionalProperties: false },
  execute: (input) => ({ value: `value-of-${String(input.key)}` }),
};

/** Names of the tools a model request offers, in each vendor's request shape. */
function offeredTools(rawBody: string): string[] {
  const body = JSON.parse(rawBody) as { tools?: Record<string, any>[] };
  return (body.tools ?? []).flatMap((tool): string[] => {
    if (Array.isArray(tool.functionDeclarations)) return tool.functionDeclarations.map((declaration: { name: string }) => declaration.name);
    if (Array.isArray(tool.tools)) return tool.tools.map((inner: { name: string }) => `${tool.name}/${inner.name}`);
    return [String(tool.name ?? tool.type)];
  }).sort();
}

interface KindSpec {
  name: string;
  model: string;
  /** What the model may be offered on a run with the `lookup` tool. */
  offered: string[];
  start(options: { apiKey: string }): Promise<VendorServer>;
  adapter(server: VendorServer, directory: string, proxy: RefusingProxy): Promise<ProviderAdapter>;
}

function describeHomeInTemp(spec: KindSpec): void {
  describe(`${spec.name} with HOME inside the temp dir`, () => {
    let server: VendorServer;
    let proxy: RefusingProxy;
    let scratch: { path: string; remove(): Promise<void> };
    let adapter: ProviderAdapter;

    before(async () => {
      server = await spec.start({ apiKey: API_KEY });
      proxy = await startRefusingProxy();
      scratch = await scratchDirectory(`${spec.name}-home`);
      adapter = await spec.adapter(server, scratch.path, proxy);
    });
    after(async () => {
      await adapter?.close?.();
      await server?.close();
      await proxy?.close();
      await scratch?.remove();
    });

    test('the model is offered only the run tools', TIMEOUT, async () => {
      const driver = new AgenticDriver({ providers: [adapter], tools: [lookup] });
      server.push({ turn: { text: 'nothing to look up' } });
      const before = server.generations.length;
      let last: Record<string, any> | undefined;
      for await (const event of driver.stream({ provider: spec.name, model: spec.model, input: 'hello', tools: ['lookup'] })) last = event as Record<string, any>;
      assert.equal(last?.type, 'run.completed', JSON.stringify(last));
      const sent = server.generations.slice(before);
      assert.equal(sent.length, 1);
      assert.deepEqual(offeredTools(sent[0]!.rawBody), spec.offered);
    });

    test('a failed model request is not retried', TIMEOUT, async () => {
      server.push({ error: { status: 500, message: 'boom' } });
      const before = server.generations.length;
      const { error } = await drain(adapter, request('hi', spec.model));
      assert.equal(error?.code, 'CLI_FAILED');
      assert.equal(server.generations.length, before + 1, 'exactly one model request');
    });

    test('nothing tried to leave for the internet', () => {
      assert.deepEqual(proxy.attempts, []);
    });
  });
}

describeHomeInTemp({
  name: 'codex',
  model: 'loopback-model',
  // Codex's own helpers for reading MCP resources reach only the configured MCP servers: the bridge.
  offered: ['list_mcp_resource_templates', 'list_mcp_resources', 'mcp__agenticdriver/lookup', 'read_mcp_resource'],
  start: startOpenAIResponsesServer,
  adapter: async (server, directory, proxy) =>
    codex({
      id: 'codex',
      binary: binary('codex'),
      models: ['loopback-model'],
      accountDirectory: await codexAccount(directory, server.url),
      environment: async () => ({ LOOPBACK_OPENAI_KEY: API_KEY }),
      hostEnvironment: hostEnvironment(proxy),
    }),
});

describeHomeInTemp({
  name: 'claude-code',
  model: 'claude-test',
  // A placeholder Claude Code always sends while tool loading is deferred; it is never callable.
  offered: ['DeferredToolPlaceholder', 'mcp__agenticdriver__lookup'],
  start: startAnthropicMessagesServer,
  adapter: async (server, directory, proxy) =>
    claudeCode({
      id: 'claude-code',
      binary: binary('claude'),
      models: ['claude-test'],
      accountDirectory: await claudeAccount(directory),
      environment: async () => ({ ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_API_KEY: API_KEY }),
      hostEnvironment: hostEnvironment(proxy),
    }),
});

describeHomeInTemp({
  name: 'gemini-cli',
  model: 'gemini-2.5-flash',
  offered: ['mcp_agenticdriver_lookup'],
  start: startGeminiServer,
  adapter: async (server, directory, proxy) =>
    geminiCli({
      id: 'gemini-cli',
      binary: binary('gemini'),
      models: ['gemini-2.5-flash'],
      accountDirectory: await geminiAccount(directory),
      environment: async () => ({ GOOGLE_GEMINI_BASE_URL: server.origin, GEMINI_API_KEY: API_KEY }),
      hostEnvironment: hostEnvironment(proxy),
    }),
});
