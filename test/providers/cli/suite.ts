/**
 * The end-to-end checks every CLI kind passes with its real, pinned CLI against a loopback
 * vendor server, while HTTPS_PROXY points at a refusing recorder that must stay untouched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderAdapter } from '../../../src/runtime/provider.js';
import type { VendorServer, VendorServerOptions } from '../../vendors/index.js';
import { API_KEY, childGroups, drain, groupMembers, request, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

export interface AdapterSetup {
  server: { url: string; origin: string };
  key: string;
  directory: string;
  proxy: RefusingProxy;
  outputLimitBytes?: number;
}

export interface CliSpec {
  name: string;
  model: string;
  textStreaming: boolean;
  startServer(options: VendorServerOptions): Promise<VendorServer>;
  adapter(setup: AdapterSetup): Promise<ProviderAdapter>;
}

const TIMEOUT = { timeout: 90_000 };
/** About 50 KB of varied text (Gemini CLI treats one long repeated run as a broken stream). */
const LONG_TEXT = Array.from({ length: 80 }, (_, i) => `Paragraph ${i} tells a different story about item ${(i * 7919) % 1000}. `.repeat(8));

export function describeRealCli(spec: CliSpec): void {
  describe(`${spec.name} (real CLI, loopback model server)`, () => {
    let server: VendorServer;
    let proxy: RefusingProxy;
    let scratch: { path: string; remove(): Promise<void> };
    const created: ProviderAdapter[] = [];
    const adapter = async (overrides: Partial<AdapterSetup> = {}) => {
      const made = await spec.adapter({ server, key: API_KEY, directory: scratch.path, proxy, ...overrides });
      created.push(made);
      return made;
    };

    before(async () => {
      server = await spec.startServer({ apiKey: API_KEY });
      proxy = await startRefusingProxy();
      scratch = await scratchDirectory(spec.name);
    });
    after(async () => {
      await Promise.all(created.map((made) => made.close?.()));
      await server.close();
      await proxy.close();
      await scratch.remove();
      assert.deepEqual(proxy.attempts, [], 'no CLI traffic may leave for anywhere but the loopback model server');
    });

    test('plain text: deltas, usage and finish, one model request, no host secret forwarded', TIMEOUT, async () => {
      const before = server.generations.length;
      server.push({ turn: { text: ['hello ', 'from ', 'loopback'], usage: { input: 12, output: 3 } } });
      const { parts, text, error } = await drain(await adapter(), request('say hello', spec.model));
      assert.equal(error, undefined);
      assert.equal(text, 'hello from loopback');
      assert.equal(parts.filter((part) => part.type === 'text-delta').length > 1, spec.textStreaming);
      const usage = parts.find((part) => part.type === 'usage');
      assert.ok(usage?.type === 'usage' && usage.usage.inputTokens === 12 && usage.usage.outputTokens === 3, JSON.stringify(usage));
      assert.deepEqual(parts.at(-1), { type: 'finish', finishReason: 'stop' });
      assert.equal(server.generations.length, before + 1);
      const sent = server.generations.at(-1)!;
      assert.ok(sent.rawBody.includes('say hello'));
      assert.ok(!JSON.stringify(sent.headers).includes('host-secret') && !sent.rawBody.includes('host-secret'));
    });

    test('401 → CLI_AUTH_REQUIRED', TIMEOUT, async () => {
      const { error } = await drain(await adapter({ key: 'wrong-key' }), request('hi', spec.model));
      assert.equal(error?.code, 'CLI_AUTH_REQUIRED');
      assert.ok(!error.message.includes('127.0.0.1'), 'native details stay private');
    });

    test('429 → RATE_LIMITED (retryable)', TIMEOUT, async () => {
      server.push({ error: { status: 429, message: 'slow down' } });
      const { error } = await drain(await adapter(), request('hi', spec.model));
      assert.equal(error?.code, 'RATE_LIMITED');
      assert.equal(error.retryable, true);
    });

    test('500 → CLI_FAILED', TIMEOUT, async () => {
      server.push({ error: { status: 500, message: 'boom' } });
      const { error } = await drain(await adapter(), request('hi', spec.model));
      assert.equal(error?.code, 'CLI_FAILED');
    });

    test('server down → PROVIDER_UNREACHABLE', TIMEOUT, async () => {
      const down = await spec.startServer({});
      await down.close();
      const { error } = await drain(await adapter({ server: down }), request('hi', spec.model));
      assert.equal(error?.code, 'PROVIDER_UNREACHABLE');
    });

    test('output over the limit → CLI_OUTPUT_LIMIT', TIMEOUT, async () => {
      server.push({ turn: { text: LONG_TEXT, usage: { input: 1, output: 1 } } });
      const { error } = await drain(await adapter({ outputLimitBytes: 16_384 }), request('hi', spec.model));
      assert.equal(error?.code, 'CLI_OUTPUT_LIMIT');
    });

    test('cancel mid-request stops promptly and leaves no process of the group behind', TIMEOUT, async () => {
      const groupsBefore = new Set(childGroups());
      server.push({ hang: true });
      const controller = new AbortController();
      const requests = server.requests.length;
      const ready = await adapter();
      const running = drain(ready, request('hang please', spec.model), controller.signal).catch((error: unknown) => ({ thrown: error }));
      while (server.requests.length === requests) await new Promise((resolve) => setTimeout(resolve, 25));
      const groups = childGroups().filter((pgid) => !groupsBefore.has(pgid));
      assert.equal(groups.length, 1, 'the CLI runs in its own process group');
      const reason = new Error('cancelled by test');
      const started = Date.now();
      controller.abort(reason);
      const outcome = await running;
      assert.ok(Date.now() - started < 5_000, 'cancellation is prompt');
      assert.ok('thrown' in outcome && outcome.thrown === reason, 'the stream throws the abort reason');
      assert.deepEqual(groupMembers(groups[0]!), [], 'no process of the group survives');
      await server.requests.at(-1)!.abortedPromise;
    });
  });
}
