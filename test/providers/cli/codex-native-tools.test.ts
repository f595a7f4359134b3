/**
 * Codex CLI's own file edits under `workspace-write`, in a real host: every change Codex asks
 * about (app-server `item/fileChange/requestApproval`) is relayed as `approval.requested`
 * (call `native_apply_patch`) and decided over HTTP, and a change outside the run's directory
 * is refused without asking anyone.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { startTestHost, type TestHost } from '../../support/host.js';
import { exists, INTERACTIVE, lookupTool, runDeciding, expectDenied, expectRefusedUnasked } from './native-harness.js';
import { API_KEY, binary, codexAccount, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 90_000 };
/** A slug of Codex's bundled catalog: Codex offers `apply_patch` (freeform) only to models it knows. */
const MODEL = 'gpt-5.5';
const patch = (path: string, line: string) => ({ name: 'apply_patch', freeform: true, arguments: `*** Begin Patch\n*** Add File: ${path}\n+${line}\n*** End Patch\n` });

describe('codex native tool profile through the host', () => {
  let host: TestHost;
  let server: VendorServer;
  let proxy: RefusingProxy;
  let scratch: { path: string; remove(): Promise<void> };

  before(async () => {
    server = await startOpenAIResponsesServer({ apiKey: API_KEY });
    proxy = await startRefusingProxy();
    scratch = await scratchDirectory('codex-native');
    host = await startTestHost({
      providers: [
        {
          kind: 'codex',
          id: 'codex-write',
          models: [MODEL],
          binary: binary('codex'),
          accountDirectory: await codexAccount(await mkdtemp(join(scratch.path, 'codex-')), server.url),
          environment: { LOOPBACK_OPENAI_KEY: API_KEY, HTTPS_PROXY: proxy.url, https_proxy: proxy.url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
          nativeTools: 'workspace-write',
        },
      ],
      approvals: { interactive: true, maxPending: 2 },
      tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['codex-write'], tools: ['lookup'], approveTools: ['native_apply_patch'] }],
    }, { tools: [lookupTool] });
  });
  after(async () => {
    assert.equal(server.pending, 0, 'every scripted turn was used');
    await host.close();
    await server.close();
    await proxy.close();
    await scratch.remove();
    assert.deepEqual(proxy.attempts, [], 'no CLI traffic may leave for anywhere but the loopback model server');
  });

  const run = (body: Record<string, unknown>, decision?: 'approve' | 'deny') => runDeciding(host, { provider: 'codex-write', model: MODEL, ...body }, decision);

  test('a file change is relayed as native_apply_patch, approved over HTTP and applied in the run directory', TIMEOUT, async () => {
    server.push({ turn: { toolCalls: [patch('notes.txt', 'hello-notes')] } });
    server.push({ turn: { text: 'written' } });
    const events = await run({ input: 'write notes', approvals: INTERACTIVE }, 'approve');
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    assert.equal(events.at(-1)!.result.text, 'written');
    const requested = events.filter((event) => event.type === 'approval.requested');
    assert.equal(requested.length, 1);
    const call = requested[0]!.approval.call;
    assert.equal(call.name, 'native_apply_patch');
    assert.match(call.arguments.changes[0].path, /\/work\/notes\.txt$/);
    assert.equal(call.arguments.changes[0].kind, 'add');
    assert.equal(call.arguments.changes[0].diff, 'hello-notes\n');
    assert.equal(events.find((event) => event.type === 'approval.resolved')!.resolution.outcome, 'approved');
    assert.match(server.generations.at(-1)!.rawBody, /Success\. Updated the following files:\\nA notes\.txt/);
  });

  test('without interactive approvals the change is refused: CLI_POLICY_VIOLATION, nothing relayed', TIMEOUT, async () => {
    const since = server.generations.length;
    server.push({ turn: { toolCalls: [patch('notes.txt', 'hello-notes')] } });
    const events = await run({ input: 'write notes' });
    expectRefusedUnasked(events, server.generations.length - since);
  });

  test('denied: the run fails APPROVAL_DENIED and the CLI does not go on', TIMEOUT, async () => {
    const since = server.generations.length;
    server.push({ turn: { toolCalls: [patch('notes.txt', 'hello-notes')] } });
    const events = await run({ input: 'write notes', approvals: INTERACTIVE }, 'deny');
    expectDenied(events, server.generations.length - since);
  });

  test('a change outside the run directory is refused without asking, and nothing is written there', TIMEOUT, async () => {
    const outside = join(scratch.path, 'outside.txt');
    server.push({ turn: { toolCalls: [patch(outside, 'leak')] } });
    const events = await run({ input: 'write outside', approvals: INTERACTIVE }, 'approve');
    assert.equal(events.at(-1)!.type, 'run.failed');
    assert.equal(events.at(-1)!.error.code, 'CLI_POLICY_VIOLATION');
    assert.ok(!events.some((event) => event.type === 'approval.requested'));
    assert.equal(await exists(outside), false);
  });
  test('with run tools the profile run reaches them too: a host tool called through the bridge mid-turn', TIMEOUT, async () => {
    server.push({ turn: { toolCalls: [{ namespace: 'mcp__agenticdriver', name: 'lookup', arguments: { key: 'k1' } }] } });
    server.push({ turn: { text: 'looked up' } });
    const events = await run({ provider: 'codex-write', input: 'look k1 up', tools: ['lookup'] });
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    assert.ok(events.some((event) => event.type === 'tool.completed'));
    assert.match(server.generations.at(-1)!.rawBody, /value-of-k1/);
  });
});
