/**
 * Run tools reaching a real CLI agent through the MCP bridge, driven by the runtime: the
 * CLI calls them mid-turn, the runtime validates, approves and executes each one (with its
 * usual events), and the CLI carries on with the results until its final answer.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { claudeCode } from '../../../src/providers/cli/claude-code.js';
import { codex } from '../../../src/providers/cli/codex.js';
import { geminiCli } from '../../../src/providers/cli/gemini-cli.js';
import { AgenticDriver } from '../../../src/runtime/driver.js';
import type { ProviderAdapter } from '../../../src/providers/contract/v1.js';
import type { HostTool } from '../../../src/runtime/tools.js';
import { startAnthropicMessagesServer, startGeminiServer, startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { API_KEY, binary, childGroups, claudeAccount, codexAccount, groupMembers, geminiAccount, hostEnvironment, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 90_000 };

const executed: unknown[] = [];
const lookup: HostTool = {
  name: 'lookup',
  description: 'Looks a key up.',
  inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'], additionalProperties: false },
  execute: (input) => {
    executed.push(input);
    return { value: `value-of-${String(input.key)}` };
  },
};
const guarded: HostTool = { ...lookup, name: 'guarded', description: 'Needs approval.', requiresApproval: true };
/** Never finishes on its own; reports when the run's cancellation reached it. */
let slowStarted: () => void = () => {};
const slow: HostTool = {
  ...lookup,
  name: 'slow',
  description: 'Takes until the run is cancelled.',
  execute: (_input, context) => {
    slowStarted();
    return new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true }));
  },
};

interface BridgeSpec {
  name: string;
  model: string;
  /** How the model names a bridge tool in its call, in the vendor fake's terms. */
  toolCall(tool: string): { name: string; namespace?: string };
  /** The CLI checks arguments against the tool schema itself and returns the error to the model. */
  cliValidatesArguments?: boolean;
  start(options: { apiKey: string }): Promise<VendorServer>;
  adapter(server: VendorServer, directory: string, proxy: RefusingProxy): Promise<ProviderAdapter>;
}

async function outcome(driver: AgenticDriver, request: unknown, signal?: AbortSignal): Promise<{ events: Record<string, any>[]; last: Record<string, any> }> {
  const events: Record<string, any>[] = [];
  for await (const event of driver.stream(request, signal ? { signal } : {})) events.push(event as Record<string, any>);
  return { events, last: events.at(-1)! };
}

function describeToolBridge(spec: BridgeSpec): void {
  describe(`${spec.name}: run tools through the MCP bridge`, () => {
    let server: VendorServer;
    let proxy: RefusingProxy;
    let scratch: { path: string; remove(): Promise<void> };
    let driver: AgenticDriver;
    const approvals: unknown[] = [];

    before(async () => {
      server = await spec.start({ apiKey: API_KEY });
      proxy = await startRefusingProxy();
      scratch = await scratchDirectory(`${spec.name}-tools`);
      const adapter = await spec.adapter(server, await mkdtemp(join(scratch.path, 'account-')), proxy);
      driver = new AgenticDriver({
        providers: [adapter],
        tools: [lookup, guarded, slow],
        approve: (call) => {
          approvals.push(call.arguments);
          return (call.arguments as { key: string }).key !== 'forbidden';
        },
      });
    });
    after(async () => {
      await server.close();
      await proxy.close();
      await scratch.remove();
      assert.deepEqual(proxy.attempts, []);
    });

    test('multi-step: two calls in sequence, each executed by the runtime, then the final answer', TIMEOUT, async () => {
      executed.length = 0;
      server.push({ turn: { toolCalls: [{ id: 'call_alpha', ...spec.toolCall('lookup'), arguments: { key: 'alpha' } }] } });
      server.push({ turn: { toolCalls: [{ id: 'call_beta', ...spec.toolCall('lookup'), arguments: { key: 'beta' } }] } });
      server.push({ turn: { text: 'alpha and beta looked up', usage: { input: 5, output: 4 } } });
      const before = server.generations.length;
      const { events, last } = await outcome(driver, { provider: spec.name, model: spec.model, input: 'look up alpha then beta', tools: ['lookup'] });
      assert.equal(last.type, 'run.completed', JSON.stringify(last));
      assert.equal(last.result.text, 'alpha and beta looked up');
      assert.deepEqual(executed, [{ key: 'alpha' }, { key: 'beta' }]);
      assert.deepEqual(events.filter((event) => event.type === 'tool.called').map((event) => event.call.arguments), [{ key: 'alpha' }, { key: 'beta' }]);
      assert.deepEqual(events.filter((event) => event.type === 'tool.completed').map((event) => event.output), [{ value: 'value-of-alpha' }, { value: 'value-of-beta' }]);
      const requests = server.generations.slice(before);
      assert.equal(requests.length, 3);
      assert.ok(requests[1]!.rawBody.includes('value-of-alpha') && requests[2]!.rawBody.includes('value-of-beta'), 'the CLI fed each result back to the model');
    });

    test('arguments that break the schema never execute the tool', TIMEOUT, async () => {
      executed.length = 0;
      server.push({ turn: { toolCalls: [{ ...spec.toolCall('lookup'), arguments: { key: 42 } }] } });
      if (spec.cliValidatesArguments) server.push({ turn: { text: 'gave up' } });
      const { last } = await outcome(driver, { provider: spec.name, model: spec.model, input: 'bad call', tools: ['lookup'] });
      if (spec.cliValidatesArguments) {
        // Refused by the CLI before the bridge is reached; the model sees the error and answers.
        assert.equal(last.type, 'run.completed');
      } else {
        assert.equal(last.type, 'run.failed');
        assert.equal(last.error.code, 'INVALID_TOOL_ARGUMENTS');
      }
      assert.deepEqual(executed, []);
    });

    test('cancelling while the CLI waits on a tool call stops the tool and the CLI, leaving no process', TIMEOUT, async () => {
      const groupsBefore = new Set(childGroups());
      server.push({ turn: { toolCalls: [{ ...spec.toolCall('slow'), arguments: { key: 'x' } }] } });
      const started = new Promise<void>((resolve) => (slowStarted = resolve));
      const controller = new AbortController();
      const running = outcome(driver, { provider: spec.name, model: spec.model, input: 'slow call', tools: ['slow'] }, controller.signal);
      await started;
      controller.abort();
      const { last } = await running;
      assert.equal(last.type, 'run.cancelled', JSON.stringify(last));
      // The runtime ends the run at once; the CLI's group is stopped meanwhile (TERM, KILL after 2 s).
      const alive = () => childGroups().filter((group) => !groupsBefore.has(group) && groupMembers(group).length > 0);
      for (const deadline = Date.now() + 5_000; alive().length > 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(alive(), [], 'no CLI process survives');
    });

    test('approval: an approved call runs, a refused one fails the run APPROVAL_REQUIRED', TIMEOUT, async () => {
      executed.length = 0;
      server.push({ turn: { toolCalls: [{ ...spec.toolCall('guarded'), arguments: { key: 'fine' } }] } });
      server.push({ turn: { text: 'approved and done' } });
      const approved = await outcome(driver, { provider: spec.name, model: spec.model, input: 'guarded call', tools: ['guarded'] });
      assert.equal(approved.last.type, 'run.completed', JSON.stringify(approved.last));
      assert.deepEqual(executed, [{ key: 'fine' }]);
      server.push({ turn: { toolCalls: [{ ...spec.toolCall('guarded'), arguments: { key: 'forbidden' } }] } });
      const refused = await outcome(driver, { provider: spec.name, model: spec.model, input: 'guarded call', tools: ['guarded'] });
      assert.equal(refused.last.type, 'run.failed');
      assert.equal(refused.last.error.code, 'APPROVAL_REQUIRED');
      assert.deepEqual(executed, [{ key: 'fine' }]);
    });
  });
}

describeToolBridge({
  name: 'claude-code',
  model: 'claude-test',
  toolCall: (tool) => ({ name: `mcp__agenticdriver__${tool}` }),
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

describeToolBridge({
  name: 'gemini-cli',
  model: 'gemini-2.5-flash',
  toolCall: (tool) => ({ name: `mcp_agenticdriver_${tool}` }),
  cliValidatesArguments: true,
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

describeToolBridge({
  name: 'codex',
  // A model outside Codex's bundled catalog: catalogued ones hide MCP tools behind Codex's own
  // `tool_search` step, which the loopback fake cannot play; the bridge is the same either way.
  model: 'loopback-model',
  toolCall: (tool) => ({ namespace: 'mcp__agenticdriver', name: tool }),
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
