/**
 * Gemini CLI's own tools under a named profile, in a real host: reads run unasked, every file
 * change Gemini asks about (ACP `session/request_permission`) is relayed as
 * `approval.requested` (call `native_<tool>`) and decided over HTTP, and nothing reaches files
 * outside the run's directory.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeminiServer, type VendorServer } from '../../vendors/index.js';
import { startTestHost, type TestHost } from '../../support/host.js';
import { exists, INTERACTIVE, lookupTool, runDeciding, expectDenied, expectRefusedUnasked } from './native-harness.js';
import { API_KEY, binary, geminiAccount, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 90_000 };
const MODEL = 'gemini-2.5-flash';
const WRITE_NOTES = { name: 'write_file', arguments: { file_path: 'notes.txt', content: 'hello-notes' } };

describe('gemini-cli native tool profiles through the host', () => {
  let host: TestHost;
  let server: VendorServer;
  let proxy: RefusingProxy;
  let scratch: { path: string; remove(): Promise<void> };

  before(async () => {
    server = await startGeminiServer({ apiKey: API_KEY });
    proxy = await startRefusingProxy();
    scratch = await scratchDirectory('gemini-native');
    const environment = { GOOGLE_GEMINI_BASE_URL: server.origin, GEMINI_API_KEY: API_KEY, HTTPS_PROXY: proxy.url, https_proxy: proxy.url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' };
    const entry = async (id: string, nativeTools: string) => ({
      kind: 'gemini-cli',
      id,
      models: [MODEL],
      binary: binary('gemini'),
      accountDirectory: await geminiAccount(await mkdtemp(join(scratch.path, `${id}-`))),
      environment,
      nativeTools,
    });
    host = await startTestHost({
      providers: [await entry('gemini-write', 'workspace-write'), await entry('gemini-read', 'read-only')],
      approvals: { interactive: true, maxPending: 2 },
      tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['gemini-write', 'gemini-read'], tools: ['lookup'], approveTools: ['native_write_file'] }],
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

  const run = (body: Record<string, unknown>, decision?: 'approve' | 'deny') => runDeciding(host, { model: MODEL, ...body }, decision);
  const sentSince = (since: number) => server.generations.slice(since).map((request) => request.rawBody).join('\n');

  test('workspace-write: a write is relayed as native_write_file, approved over HTTP and done; reading it back runs unasked', TIMEOUT, async () => {
    const since = server.generations.length;
    server.push({ turn: { toolCalls: [WRITE_NOTES] } });
    server.push({ turn: { toolCalls: [{ name: 'read_file', arguments: { file_path: 'notes.txt' } }] } });
    server.push({ turn: { text: 'written and read' } });
    const events = await run({ provider: 'gemini-write', input: 'write then read notes', approvals: INTERACTIVE }, 'approve');
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    assert.equal(events.at(-1)!.result.text, 'written and read');
    const requested = events.filter((event) => event.type === 'approval.requested');
    assert.equal(requested.length, 1, 'only the write is asked about');
    const call = requested[0]!.approval.call;
    assert.equal(call.name, 'native_write_file');
    assert.match(call.arguments.changes[0].path, /\/work\/notes\.txt$/);
    assert.equal(call.arguments.changes[0].newText, 'hello-notes');
    assert.equal(events.find((event) => event.type === 'approval.resolved')!.resolution.outcome, 'approved');
    assert.match(sentSince(since), /hello-notes[\s\S]*"name":"read_file"[\s\S]*hello-notes/, 'the file was written, then read back');
  });

  test('without interactive approvals the write is refused: CLI_POLICY_VIOLATION, nothing relayed', TIMEOUT, async () => {
    const since = server.generations.length;
    server.push({ turn: { toolCalls: [WRITE_NOTES] } });
    const events = await run({ provider: 'gemini-write', input: 'write notes' });
    expectRefusedUnasked(events, server.generations.length - since);
  });

  test('denied: the run fails APPROVAL_DENIED and the CLI does not go on', TIMEOUT, async () => {
    const since = server.generations.length;
    server.push({ turn: { toolCalls: [WRITE_NOTES] } });
    const events = await run({ provider: 'gemini-write', input: 'write notes', approvals: INTERACTIVE }, 'deny');
    expectDenied(events, server.generations.length - since);
  });

  test('a write outside the run directory is refused by Gemini itself, never asked about, and nothing is written', TIMEOUT, async () => {
    const outside = join(scratch.path, 'outside.txt');
    server.push({ turn: { toolCalls: [{ name: 'write_file', arguments: { file_path: outside, content: 'leak' } }] } });
    server.push({ turn: { text: 'could not' } });
    const events = await run({ provider: 'gemini-write', input: 'write outside', approvals: INTERACTIVE }, 'approve');
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    assert.ok(!events.some((event) => event.type === 'approval.requested'));
    assert.equal(await exists(outside), false);
  });

  test('read-only: listing the run directory runs unasked; only read tools are offered', TIMEOUT, async () => {
    server.push({ turn: { toolCalls: [{ name: 'list_directory', arguments: { dir_path: '.' } }] } });
    server.push({ turn: { text: 'empty' } });
    const events = await run({ provider: 'gemini-read', input: 'list files' });
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    const sent = JSON.parse(server.generations.at(-2)!.rawBody) as { tools?: { functionDeclarations?: { name: string }[] }[] };
    const offered = (sent.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []).map((declaration) => declaration.name).sort();
    assert.deepEqual(offered, ['glob', 'grep_search', 'list_directory', 'read_file']);
  });
  test('with run tools the profile run reaches them too: a host tool called through the bridge mid-turn', TIMEOUT, async () => {
    server.push({ turn: { toolCalls: [{ name: 'mcp_agenticdriver_lookup', arguments: { key: 'k1' } }] } });
    server.push({ turn: { text: 'looked up' } });
    const events = await run({ provider: 'gemini-write', input: 'look k1 up', tools: ['lookup'] });
    assert.equal(events.at(-1)!.type, 'run.completed', JSON.stringify(events.at(-1)));
    assert.ok(events.some((event) => event.type === 'tool.completed'));
    assert.match(server.generations.at(-1)!.rawBody, /value-of-k1/);
  });
});
