/**
 * Discovery of the real CLIs: version and sign-in state from their own non-generating
 * status commands, catalogs where they expose one, bounded in time, no model request, and
 * no traffic towards anything but loopback (the refusing proxy stays untouched).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { claudeCode, codex, geminiCli } from '../../../src/providers/cli/index.js';
import type { ProviderAdapter, ProviderInspection } from '../../../src/providers/contract/v1.js';
import { startAnthropicMessagesServer, startGeminiServer, startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { API_KEY, binary, claudeAccount, codexAccount, geminiAccount, hostEnvironment, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 60_000 };

let proxy: RefusingProxy;
let scratch: { path: string; remove(): Promise<void> };
const servers: VendorServer[] = [];
before(async () => {
  proxy = await startRefusingProxy();
  scratch = await scratchDirectory('inspect');
});
after(async () => {
  for (const server of servers) {
    assert.equal(server.requests.length, 0, 'discovery never sends a model request');
    await server.close();
  }
  await proxy.close();
  await scratch.remove();
  assert.deepEqual(proxy.attempts, [], 'no probe traffic may leave the machine');
});

/** One probe, unbounded here: how long a probe takes is the discovery bench's to print, not a test's to race. */
function inspect(adapter: ProviderAdapter): Promise<ProviderInspection> {
  return adapter.inspect!(new AbortController().signal);
}

const directory = (name: string) => mkdtemp(join(scratch.path, `${name}-`));

describe('codex', () => {
  const make = (account: string) => codex({ binary: binary('codex'), accountDirectory: account, environment: async () => ({ LOOPBACK_OPENAI_KEY: API_KEY }), hostEnvironment: hostEnvironment(proxy) });

  test('signed out: unauthenticated, with the version', TIMEOUT, async () => {
    const server = await startOpenAIResponsesServer({});
    servers.push(server);
    const inspection = await inspect(make(await codexAccount(await directory('codex-out'), server.url)));
    assert.equal(inspection.version, '0.171.0');
    assert.equal(inspection.health.status, 'unauthenticated');
    assert.equal(inspection.health.code, 'CLI_AUTH_REQUIRED');
    assert.match(inspection.health.message, /Codex CLI 0\.171\.0/);
  });

  test('signed in: ready, with the catalog from app-server model/list', TIMEOUT, async () => {
    const server = await startOpenAIResponsesServer({});
    servers.push(server);
    const account = await codexAccount(await directory('codex-in'), server.url);
    execFileSync(binary('codex'), ['login', '--with-api-key'], { input: 'dummy-key\n', env: { PATH: process.env.PATH, CODEX_HOME: account, HOME: account }, stdio: ['pipe', 'ignore', 'ignore'] });
    const inspection = await inspect(make(account));
    assert.equal(inspection.health.status, 'ready');
    assert.equal(inspection.health.code, 'CLI_CATALOG_AVAILABLE');
    assert.equal(inspection.modelCatalog?.source, 'provider');
    assert.ok(inspection.modelCatalog.models.length > 0 && inspection.modelCatalog.models.every((model) => typeof model === 'string' && model !== ''));
  });
});

describe('claude-code', () => {
  const make = async (key: string | undefined, server: VendorServer) =>
    claudeCode({
      binary: binary('claude'),
      models: ['claude-test'],
      accountDirectory: await claudeAccount(await directory('claude')),
      environment: async () => ({ ANTHROPIC_BASE_URL: server.origin, ...(key ? { ANTHROPIC_API_KEY: key } : {}) }),
      hostEnvironment: hostEnvironment(proxy),
    });

  test('signed in: ready, with the model picker catalog', TIMEOUT, async () => {
    const server = await startAnthropicMessagesServer({});
    servers.push(server);
    const inspection = await inspect(await make(API_KEY, server));
    assert.equal(inspection.version, '2.1.332');
    assert.equal(inspection.health.status, 'ready');
    assert.equal(inspection.modelCatalog?.source, 'provider');
    assert.ok(inspection.modelCatalog.models.some((model) => model.startsWith('claude-')));
  });

  test('no credential: unauthenticated', TIMEOUT, async () => {
    const server = await startAnthropicMessagesServer({});
    servers.push(server);
    const inspection = await inspect(await make(undefined, server));
    assert.equal(inspection.health.code, 'CLI_AUTH_REQUIRED');
  });
});

describe('gemini-cli', () => {
  const make = async (key: string | undefined) =>
    geminiCli({
      binary: binary('gemini'),
      models: ['gemini-2.5-flash'],
      accountDirectory: await geminiAccount(await directory('gemini')),
      environment: async (): Promise<Record<string, string>> => (key ? { GEMINI_API_KEY: key } : {}),
      hostEnvironment: hostEnvironment(proxy),
    });

  test('API key selected and present: ready; the configured models stand in for a catalog', TIMEOUT, async () => {
    const inspection = await inspect(await make(API_KEY));
    assert.equal(inspection.version, '0.61.0');
    assert.equal(inspection.health.status, 'ready');
    assert.equal(inspection.health.code, 'CLI_SESSION_PRESENT');
    assert.deepEqual(inspection.modelCatalog, { source: 'configured', models: ['gemini-2.5-flash'], complete: false });
  });

  test('API key selected but absent: unauthenticated', TIMEOUT, async () => {
    const inspection = await inspect(await make(undefined));
    assert.equal(inspection.health.status, 'unauthenticated');
  });
});

describe('readiness failures become health', () => {
  test('missing binary → unavailable CLI_UNAVAILABLE', async () => {
    const inspection = await inspect(codex({ binary: join(scratch.path, 'no-such-codex'), hostEnvironment: hostEnvironment(proxy) }));
    assert.deepEqual([inspection.health.status, inspection.health.code], ['unavailable', 'CLI_UNAVAILABLE']);
  });

  test('too-old binary → unsupported CLI_UPGRADE_REQUIRED naming the minimum', async () => {
    const path = join(await directory('old'), 'claude');
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, '#!/bin/sh\necho "2.0.1 (Claude Code)"\n');
    await chmod(path, 0o755);
    const inspection = await inspect(claudeCode({ binary: path, hostEnvironment: hostEnvironment(proxy) }));
    assert.deepEqual([inspection.health.status, inspection.health.code], ['unsupported', 'CLI_UPGRADE_REQUIRED']);
    assert.match(inspection.health.message, /2\.1\.332/);
  });
});
