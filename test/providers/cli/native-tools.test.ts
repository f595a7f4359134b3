/**
 * Claude Code's own tools under a named profile, in a real host: what the profile allows runs
 * unasked inside the run's directory, what Claude asks permission for is relayed as
 * `approval.requested` (call `native_<tool>`) and decided over HTTP, and nothing reaches files
 * outside the run's directory.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseHostConfig } from '../../../src/host/config.js';
import { startAnthropicMessagesServer, type VendorServer } from '../../vendors/index.js';
import { startTestHost, type TestHost } from '../../support/host.js';
import { exists, INTERACTIVE, runDeciding, expectDenied, expectRefusedUnasked } from './native-harness.js';
import { API_KEY, binary, claudeAccount, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 90_000 };
/** Claude asks before writing its own settings, even in the working directory under `workspace-write`. */
const WRITE_SETTINGS = { id: 'toolu_settings', name: 'Write', arguments: { file_path: '.claude/settings.json', content: '{}' } };

describe('claude-code native tool profiles through the host', () => {
  let host: TestHost;
  let server: VendorServer;
  let proxy: RefusingProxy;
  let scratch: { path: string; remove(): Promise<void> };

  before(async () => {
    server = await startAnthropicMessagesServer({ apiKey: API_KEY });
    proxy = await startRefusingProxy();
    scratch = await scratchDirectory('native');
    const environment = { ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_API_KEY: API_KEY, HTTPS_PROXY: proxy.url, https_proxy: proxy.url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' };
    const entry = async (id: string, nativeTools?: string) => ({
      kind: 'claude-code',
      id,
      models: ['claude-test'],
      binary: binary('claude'),
      accountDirectory: await claudeAccount(await mkdtemp(join(scratch.path, `${id}-`))),
      environment,
      ...(nativeTools ? { nativeTools } : {}),
    });
    host = await startTestHost({
      providers: [await entry('claude-write', 'workspace-write'), await entry('claude-read', 'read-only'), await entry('claude-off')],
      approvals: { interactive: true, maxPending: 2 },
      tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['claude-write', 'claude-read', 'claude-off'], approveTools: ['native_Write'] }],
    });
  });
  after(async () => {
    assert.equal(server.pending, 0, 'every scripted turn was used');
    await host.close();
    await server.close();
    await proxy.close();
    await scratch.remove();
    assert.deepEqual(proxy.attempts, [], 'no CLI traffic may leave for anywhere but the loopback model server');
  });

  const run = (body: Record<string, unknown>, decision?: 'approve' | 'deny') => runDeciding(host, { model: 'claude-test', ...body }, decision);

  const toolResults = (since: number) => server.generations.slice(since).map((request) => request.rawBody).join('\n');

  test('workspace-write: a write in the run directory runs unasked; one Claude asks about is relayed, approved over HTTP and done', TIMEOUT, async () => {
    const since = server.generations.length;
    server.push({ turn: { toolCalls: [{ id: 'toolu_notes', name: 'Write', arguments: { file_path: 'notes.txt', content: 'hello-notes' } }] } });
    server.push({ turn: { toolCalls: [WRITE_SETTINGS] } });
    server.push({ turn: { text: 'both written' } });
    const events = await run({ provider: 'claude-write', input: 'write two files', approvals: INTERACTIVE }, 'approve');
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    assert.equal(events.at(-1)!.result.text, 'both written');
    const requested = events.filter((event) => event.type === 'approval.requested');
    assert.equal(requested.length, 1, 'only the settings write is asked about');
    assert.equal(requested[0]!.approval.call.name, 'native_Write');
    assert.equal(requested[0]!.approval.call.id, 'toolu_settings');
    assert.match(requested[0]!.approval.call.arguments.file_path, /\/work\/\.claude\/settings\.json$/);
    assert.equal(events.find((event) => event.type === 'approval.resolved')!.resolution.outcome, 'approved');
    assert.match(toolResults(since), /File created successfully at: notes\.txt[\s\S]*File created successfully at: \.claude\/settings\.json/);
  });

  test('without interactive approvals the asked-for action is refused: CLI_POLICY_VIOLATION, nothing relayed', TIMEOUT, async () => {
    const since = server.generations.length;
    server.push({ turn: { toolCalls: [WRITE_SETTINGS] } });
    const events = await run({ provider: 'claude-write', input: 'write settings' });
    expectRefusedUnasked(events, server.generations.length - since);
  });

  test('denied: the run fails APPROVAL_DENIED and the CLI does not go on', TIMEOUT, async () => {
    const since = server.generations.length;
    server.push({ turn: { toolCalls: [WRITE_SETTINGS] } });
    const events = await run({ provider: 'claude-write', input: 'write settings', approvals: INTERACTIVE }, 'deny');
    expectDenied(events, server.generations.length - since);
  });

  test('a write outside the run directory is refused by the profile and nothing is written there', TIMEOUT, async () => {
    const outside = join(scratch.path, 'outside.txt');
    server.push({ turn: { toolCalls: [{ id: 'toolu_out', name: 'Write', arguments: { file_path: outside, content: 'leak' } }] } });
    server.push({ turn: { text: 'tried' } });
    const events = await run({ provider: 'claude-write', input: 'write outside', approvals: INTERACTIVE }, 'approve');
    assert.equal(events.at(-1)!.type, 'run.failed');
    assert.equal(events.at(-1)!.error.code, 'CLI_POLICY_VIOLATION');
    assert.equal(await exists(outside), false);
  });

  test('read-only: searching the run directory runs unasked; a write tool is not there and using it is a violation', TIMEOUT, async () => {
    server.push({ turn: { toolCalls: [{ id: 'toolu_glob', name: 'Glob', arguments: { pattern: '*' } }] } });
    server.push({ turn: { text: 'nothing there' } });
    const searched = await run({ provider: 'claude-read', input: 'list files' });
    assert.equal(searched.at(-1)!.type, 'run.completed', JSON.stringify(searched.at(-1)));
    const sent = JSON.parse(server.generations.at(-2)!.rawBody) as { tools: { name: string }[] };
    assert.deepEqual(sent.tools.map((tool) => tool.name).filter((name) => ['Read', 'Glob', 'Grep', 'Write', 'Edit', 'Bash'].includes(name)).sort(), ['Glob', 'Grep', 'Read']);

    server.push({ turn: { toolCalls: [{ id: 'toolu_w', name: 'Write', arguments: { file_path: 'x.txt', content: 'x' } }] } });
    const wrote = await run({ provider: 'claude-read', input: 'write', approvals: INTERACTIVE }, 'approve');
    assert.equal(wrote.at(-1)!.error.code, 'CLI_POLICY_VIOLATION');
  });

  test('off (the default): no built-in tool is offered, and a native tool use is a violation', TIMEOUT, async () => {
    server.push({ turn: { toolCalls: [{ id: 'toolu_r', name: 'Read', arguments: { file_path: 'x.txt' } }] } });
    const events = await run({ provider: 'claude-off', input: 'read', approvals: INTERACTIVE }, 'approve');
    assert.equal(events.at(-1)!.error.code, 'CLI_POLICY_VIOLATION');
    const sent = JSON.parse(server.generations.at(-1)!.rawBody) as { tools?: { name: string }[] };
    assert.deepEqual((sent.tools ?? []).filter((tool) => ['Read', 'Glob', 'Grep', 'Write', 'Edit', 'Bash'].includes(tool.name)), []);
  });
});

describe('nativeTools in the host config', () => {
  const entry = (kind: string, nativeTools: unknown) => ({ version: 1, providers: [{ kind, id: 'p', models: [], nativeTools }], tokens: [{ id: 't', subject: 's', tokenRef: { env: 'AD_TOKEN' }, providers: ['p'] }] });

  test('each kind accepts exactly its named profiles; unknown profiles are rejected', () => {
    for (const kind of ['claude-code', 'gemini-cli']) {
      for (const profile of ['off', 'read-only', 'workspace-write']) parseHostConfig(entry(kind, profile), '/etc/agenticdriver.json');
      assert.throws(() => parseHostConfig(entry(kind, 'everything'), '/etc/agenticdriver.json'), { code: 'INVALID_CONFIG' });
    }
    for (const profile of ['off', 'workspace-write']) parseHostConfig(entry('codex', profile), '/etc/agenticdriver.json');
    assert.throws(() => parseHostConfig(entry('codex', 'read-only'), '/etc/agenticdriver.json'), { code: 'INVALID_CONFIG' });
  });
});
