/**
 * Codex with warm reuse (`codex app-server`): the shared real-CLI checks on the long-lived
 * path, then the pool's own promises: a warm run after a cold one reuses the process in a
 * fresh thread, a crashed process is replaced, idle processes are reaped, close stops all.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { codex } from '../../../src/providers/cli/codex.js';
import { startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { API_KEY, binary, childGroups, codexAccount, drain, groupMembers, hostEnvironment, request, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';
import { describeRealCli } from './suite.js';

const MODEL = 'gpt-5.5';

describeRealCli({
  name: 'codex (warm app-server)',
  model: MODEL,
  textStreaming: true,
  startServer: startOpenAIResponsesServer,
  adapter: async ({ server, key, directory, proxy, outputLimitBytes }) =>
    codex({
      binary: binary('codex'),
      models: [MODEL],
      accountDirectory: await codexAccount(await mkdtemp(join(directory, 'account-')), server.url),
      environment: async () => ({ LOOPBACK_OPENAI_KEY: key }),
      hostEnvironment: hostEnvironment(proxy),
      warm: { processes: 1, idleMs: 60_000 },
      ...(outputLimitBytes === undefined ? {} : { outputLimitBytes }),
    }),
});

describe('codex warm pool', () => {
  let server: VendorServer;
  let proxy: RefusingProxy;
  let scratch: { path: string; remove(): Promise<void> };
  const TIMEOUT = { timeout: 60_000 };
  const make = async (idleMs = 60_000) =>
    codex({
      binary: binary('codex'),
      models: [MODEL],
      accountDirectory: await codexAccount(await mkdtemp(join(scratch.path, 'account-')), server.url),
      environment: async () => ({ LOOPBACK_OPENAI_KEY: API_KEY }),
      hostEnvironment: hostEnvironment(proxy),
      warm: { processes: 1, idleMs },
    });
  const say = (text: string) => server.push({ turn: { text: [text], usage: { input: 1, output: 1 } } });
  const newGroups = (before: Set<number>) => childGroups().filter((group) => !before.has(group));

  before(async () => {
    server = await startOpenAIResponsesServer({ apiKey: API_KEY });
    proxy = await startRefusingProxy();
    scratch = await scratchDirectory('codex-warm');
  });
  after(async () => {
    await server.close();
    await proxy.close();
    await scratch.remove();
    assert.deepEqual(proxy.attempts, []);
  });

  test('a warm run after a cold one reuses the process, in a fresh thread', TIMEOUT, async () => {
    const groupsBefore = new Set(childGroups());
    const adapter = await make();
    say('first');
    assert.equal((await drain(adapter, request('remember the word PELICAN', MODEL))).text, 'first');
    const [warmGroup] = newGroups(groupsBefore);
    assert.ok(warmGroup !== undefined && groupMembers(warmGroup).length > 0, 'the process stays up between runs');
    say('second');
    const second = await drain(adapter, request('which word?', MODEL));
    assert.equal(second.text, 'second');
    assert.deepEqual(newGroups(groupsBefore), [warmGroup], 'the second run used the same process');
    assert.ok(!server.generations.at(-1)!.rawBody.includes('PELICAN'), 'the second run does not see the first one');
    await adapter.close!();
    assert.deepEqual(groupMembers(warmGroup), [], 'close stops the warm process');
  });

  test('a vendor failure keeps the process; a crashed process is replaced, never reused', TIMEOUT, async () => {
    const groupsBefore = new Set(childGroups());
    const adapter = await make();
    server.push({ error: { status: 429, message: 'slow down' } });
    assert.equal((await drain(adapter, request('hi', MODEL))).error?.code, 'RATE_LIMITED');
    const [first] = newGroups(groupsBefore);
    say('after 429');
    assert.equal((await drain(adapter, request('hi', MODEL))).text, 'after 429');
    assert.deepEqual(newGroups(groupsBefore), [first], 'reused after a clean vendor failure');
    process.kill(-first!, 'SIGKILL');
    while (groupMembers(first!).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    say('replaced');
    assert.equal((await drain(adapter, request('hi', MODEL))).text, 'replaced');
    const now = newGroups(groupsBefore);
    assert.equal(now.length, 1);
    assert.notEqual(now[0], first, 'a new process replaced the crashed one');
    await adapter.close!();
  });

  test('idle processes are reaped', TIMEOUT, async () => {
    const groupsBefore = new Set(childGroups());
    const adapter = await make(300);
    say('soon idle');
    assert.equal((await drain(adapter, request('hi', MODEL))).text, 'soon idle');
    const [group] = newGroups(groupsBefore);
    for (const deadline = Date.now() + 5_000; groupMembers(group!).length > 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(groupMembers(group!), [], 'the idle process was reaped');
    await adapter.close!();
  });
});
