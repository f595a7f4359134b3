/**
 * The end-to-end checks every CLI kind passes with its real, pinned CLI against a loopback
 * vendor server, while HTTPS_PROXY points at a refusing recorder that must stay untouched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderAdapter } from '../../../src/providers/spec/v1.js';
import type { IdleTimer } from '../../../src/providers/cli/warm-pool.js';
import type { VendorServer, VendorServerOptions } from '../../vendors/index.js';
import { API_KEY, childGroups, drain, groupMembers, request, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

export interface AdapterSetup {
  server: { url: string; origin: string };
  key: string;
  directory: string;
  proxy: RefusingProxy;
  outputLimitBytes?: number;
  /** For warm adapters: how long an idle process is kept. */
  idleMs?: number;
  /** For warm adapters: the idle countdown (a test that must not race the clock holds it). */
  idleTimer?: IdleTimer;
}

export interface CliSpec {
  name: string;
  model: string;
  textStreaming: boolean;
  startServer(options: VendorServerOptions): Promise<VendorServer>;
  adapter(setup: AdapterSetup): Promise<ProviderAdapter>;
  /** The adapter keeps one started spare process besides the one serving the run. */
  keepsSpare?: boolean;
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
      assert.ok(groups.length >= 1 && groups.length <= (spec.keepsSpare ? 2 : 1), 'the CLI runs in its own process group');
      const reason = new Error('cancelled by test');
      const started = Date.now();
      controller.abort(reason);
      const outcome = await running;
      assert.ok(Date.now() - started < 5_000, 'cancellation is prompt');
      assert.ok('thrown' in outcome && outcome.thrown === reason, 'the stream throws the abort reason');
      const alive = childGroups().filter((pgid) => !groupsBefore.has(pgid) && groupMembers(pgid).length > 0);
      assert.ok(alive.length <= (spec.keepsSpare ? 1 : 0), 'no process of the run survives (only a waiting spare may)');
      await server.requests.at(-1)!.abortedPromise;
    });
  });
}

/**
 * The warm pool's promises for a kind with a long-lived mode (`spec.adapter` must configure
 * `warm: { processes: 1 }`): a warm run after a cold one reuses the process in a fresh
 * thread/session, a vendor failure keeps it, a crashed one is replaced, idle ones are reaped.
 */
export function describeWarmPool(spec: CliSpec): void {
  describe(`${spec.name} warm pool`, () => {
    let server: VendorServer;
    let proxy: RefusingProxy;
    let scratch: { path: string; remove(): Promise<void> };
    const make = (idleMs?: number) => spec.adapter({ server, key: API_KEY, directory: scratch.path, proxy, ...(idleMs === undefined ? {} : { idleMs }) });
    const say = (text: string) => server.push({ turn: { text: [text], usage: { input: 1, output: 1 } } });
    const newGroups = (before: Set<number>) => childGroups().filter((group) => !before.has(group));

    before(async () => {
      server = await spec.startServer({ apiKey: API_KEY });
      proxy = await startRefusingProxy();
      scratch = await scratchDirectory(`${spec.name}-warm`);
    });
    after(async () => {
      await server.close();
      await proxy.close();
      await scratch.remove();
      assert.deepEqual(proxy.attempts, []);
    });

    test('a warm run after a cold one reuses the process, in a fresh thread/session', TIMEOUT, async () => {
      const groupsBefore = new Set(childGroups());
      const adapter = await make();
      say('first');
      assert.equal((await drain(adapter, request('remember the word PELICAN', spec.model))).text, 'first');
      const [warmGroup] = newGroups(groupsBefore);
      assert.ok(warmGroup !== undefined && groupMembers(warmGroup).length > 0, 'the process stays up between runs');
      say('second');
      assert.equal((await drain(adapter, request('which word?', spec.model))).text, 'second');
      assert.deepEqual(newGroups(groupsBefore), [warmGroup], 'the second run used the same process');
      assert.ok(!server.generations.at(-1)!.rawBody.includes('PELICAN'), 'the second run does not see the first one');
      await adapter.close!();
      assert.deepEqual(groupMembers(warmGroup), [], 'close stops the warm process');
    });

    test('a vendor failure keeps the process; a crashed process is replaced, never reused', TIMEOUT, async () => {
      const groupsBefore = new Set(childGroups());
      const adapter = await make();
      server.push({ error: { status: 429, message: 'slow down' } });
      assert.equal((await drain(adapter, request('hi', spec.model))).error?.code, 'RATE_LIMITED');
      const [first] = newGroups(groupsBefore);
      say('after 429');
      assert.equal((await drain(adapter, request('hi', spec.model))).text, 'after 429');
      assert.deepEqual(newGroups(groupsBefore), [first], 'reused after a clean vendor failure');
      process.kill(-first!, 'SIGKILL');
      while (groupMembers(first!).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      say('replaced');
      assert.equal((await drain(adapter, request('hi', spec.model))).text, 'replaced');
      const now = newGroups(groupsBefore);
      assert.equal(now.length, 1);
      assert.notEqual(now[0], first, 'a new process replaced the crashed one');
      await adapter.close!();
    });

    test('idle processes are reaped', TIMEOUT, async () => {
      const groupsBefore = new Set(childGroups());
      const adapter = await make(300);
      say('soon idle');
      assert.equal((await drain(adapter, request('hi', spec.model))).text, 'soon idle');
      const [group] = newGroups(groupsBefore);
      for (const deadline = Date.now() + 5_000; groupMembers(group!).length > 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(groupMembers(group!), [], 'the idle process was reaped');
      await adapter.close!();
    });
  });
}

/**
 * The pool's promises for a single-use warm mode (Claude's stream-json input): after a cold
 * run a started spare waits; the next run is served by that spare (which is then gone, so no
 * run ever shares a process), a crashed spare is replaced, and an idle spare is reaped.
 */
export function describeSpareProcess(spec: CliSpec): void {
  describe(`${spec.name} warm spare`, () => {
    let server: VendorServer;
    let proxy: RefusingProxy;
    let scratch: { path: string; remove(): Promise<void> };
    const make = (idleTimer?: IdleTimer) => spec.adapter({ server, key: API_KEY, directory: scratch.path, proxy, ...(idleTimer === undefined ? {} : { idleTimer }) });
    const say = (text: string) => server.push({ turn: { text: [text], usage: { input: 1, output: 1 } } });
    /** The one live process group started since `before` (the waiting spare). */
    const spare = async (before: Set<number>): Promise<number> => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
        const groups = childGroups().filter((group) => !before.has(group) && groupMembers(group).length > 0);
        if (groups.length === 1) return groups[0]!;
      }
      throw new Error('no spare process was started');
    };

    before(async () => {
      server = await spec.startServer({ apiKey: API_KEY });
      proxy = await startRefusingProxy();
      scratch = await scratchDirectory(`${spec.name}-spare`);
    });
    after(async () => {
      await server.close();
      await proxy.close();
      await scratch.remove();
      assert.deepEqual(proxy.attempts, []);
    });

    test('after a cold run a spare waits; the next run uses it up, and a new spare replaces it', TIMEOUT, async () => {
      const groupsBefore = new Set(childGroups());
      const adapter = await make();
      say('first');
      assert.equal((await drain(adapter, request('remember the word PELICAN', spec.model))).text, 'first');
      const waiting = await spare(groupsBefore);
      say('second');
      assert.equal((await drain(adapter, request('which word?', spec.model))).text, 'second');
      assert.deepEqual(groupMembers(waiting), [], 'the spare served the run and is gone');
      assert.ok(!server.generations.at(-1)!.rawBody.includes('PELICAN'), 'the second run does not see the first one');
      const next = await spare(groupsBefore);
      assert.notEqual(next, waiting);
      await adapter.close!();
      assert.deepEqual(groupMembers(next), [], 'close stops the spare');
    });

    test('a crashed spare is replaced, never used', TIMEOUT, async () => {
      const groupsBefore = new Set(childGroups());
      const adapter = await make();
      say('cold');
      assert.equal((await drain(adapter, request('hi', spec.model))).text, 'cold');
      const crashed = await spare(groupsBefore);
      process.kill(-crashed, 'SIGKILL');
      while (groupMembers(crashed).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      say('replaced');
      const replaced = await drain(adapter, request('hi', spec.model));
      assert.equal(replaced.text, 'replaced', JSON.stringify(replaced.error));
      await adapter.close!();
    });

    test('an idle spare is reaped', TIMEOUT, async () => {
      // The spare can be ready long before the cold run ends on a loaded machine; its idle
      // countdown is held here and run out once the spare is seen, so nothing races the clock.
      const countdowns: (() => void)[] = [];
      const groupsBefore = new Set(childGroups());
      const adapter = await make((reap) => {
        countdowns.push(reap);
        return () => undefined;
      });
      say('soon idle');
      assert.equal((await drain(adapter, request('hi', spec.model))).text, 'soon idle');
      const waiting = await spare(groupsBefore);
      // The process exists before it is ready; its countdown starts when it joins the pool.
      for (const deadline = Date.now() + 10_000; countdowns.length === 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(countdowns.length, 1, 'the ready spare waits with an idle countdown');
      countdowns.pop()!();
      for (const deadline = Date.now() + 8_000; groupMembers(waiting).length > 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(groupMembers(waiting), [], 'the idle spare was reaped');
      await adapter.close!();
    });
  });
}
