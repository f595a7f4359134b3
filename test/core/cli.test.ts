import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { CLI_MAIN as main, cli, errorOf, stopChild } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

describe('agenticdriver CLI', () => {
  const dir = tempDir('ad-cli-');
  const config = join(dir, 'nested', 'config.json');
  let server: ChildProcess;
  let url: string;

  before(async () => {
    const init = cli(['init', '--config', config, '--json']);
    assert.equal(init.status, 0, init.stderr);
    server = spawn(process.execPath, [main, 'serve', '--config', config, '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => createInterface({ input: server.stdout! }).once('line', resolve));
    const listening = JSON.parse(line) as { event: string; url: string; consoleUrl?: string; configPath: string };
    assert.equal(listening.event, 'listening');
    assert.equal(listening.consoleUrl, `${listening.url}/console`);
    assert.equal(listening.configPath, config);
    url = listening.url;
  });
  after(() => stopChild(server));

  it('client commands read the config without loading any extension of the host', () => {
    // A loader hook records every module the command loads.
    const hooks = join(dir, 'loaded-hooks.mjs');
    writeFileSync(hooks, "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(process.env.AD_LOADED, url + '\\n'); return next(url, context); }\n");
    const register = join(dir, 'loaded-register.mjs');
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const loadedBy = (args: string[]) => {
      const record = join(dir, `loaded-${args[0]}.txt`);
      writeFileSync(record, '');
      const result = spawnSync(process.execPath, ['--import', register, main, ...args], { encoding: 'utf8', env: { ...process.env, AGENTICDRIVER_CONFIG: '', AD_LOADED: record } });
      assert.equal(result.status, 0, result.stderr);
      return readFileSync(record, 'utf8').split('\n').filter((line) => line.includes('/dist/'));
    };
    const status = loadedBy(['status', '--config', config, '--url', url, '--json']);
    assert.ok(status.some((url) => url.endsWith('/dist/host/config-file.js')), 'the config was read');
    assert.deepEqual(status.filter((url) => /\/dist\/extensions\/(index\.js|[^/]+\/(index|instance)\.js)$/.test(url)), [], 'no extension declaration or implementation');
    const providers = loadedBy(['providers', 'list', '--config', config, '--json']);
    assert.deepEqual(providers.filter((url) => url.includes('/dist/extensions/')), []);
  });

  it('init writes a valid config and a private token file, never printing the token', () => {
    const token = readFileSync(join(dir, 'nested', 'credentials', 'local.token'), 'utf8').trim();
    assert.ok(token.length >= 32);
    assert.equal(statSync(join(dir, 'nested', 'credentials', 'local.token')).mode & 0o777, 0o600);
    assert.equal(statSync(config).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'nested', 'credentials')).mode & 0o777, 0o700);
    const parsed = JSON.parse(readFileSync(config, 'utf8')) as { providers: { kind: string }[]; tokens: { id: string; operator?: boolean }[]; console?: { enabled: boolean } };
    assert.equal(parsed.providers[0]!.kind, 'mock');
    // The console is on, with a separate operator token; the application token has no operator grant.
    assert.deepEqual(parsed.console, { enabled: true });
    assert.deepEqual(parsed.tokens.map((entry) => [entry.id, entry.operator === true]), [['local', false], ['operator', true]]);
    const operatorToken = readFileSync(join(dir, 'nested', 'credentials', 'operator.token'), 'utf8').trim();
    assert.ok(operatorToken.length >= 32 && operatorToken !== token);
    assert.equal(statSync(join(dir, 'nested', 'credentials', 'operator.token')).mode & 0o777, 0o600);
    const again = cli(['init', '--config', config]);
    assert.equal(again.status, 1);
    assert.equal(errorOf(again.stderr).code, 'CONFIG_EXISTS');
    assert.ok(!again.stdout.includes(token) && !again.stderr.includes(token));
    assert.equal(readFileSync(join(dir, 'nested', 'credentials', 'local.token'), 'utf8').trim(), token, 'the token was not replaced');
  });

  it('init writes a working entry for each provider family and refuses flags of another family', () => {
    const entry = (args: string[]) => {
      const path = join(tempDir('ad-init-'), 'config.json');
      const result = cli(['init', '--config', path, ...args]);
      if (result.status !== 0) return errorOf(result.stderr).code;
      return (JSON.parse(readFileSync(path, 'utf8')) as { providers: Record<string, unknown>[] }).providers[0];
    };
    assert.deepEqual(entry(['--provider', 'openai', '--model', 'gpt-test']), { kind: 'openai', id: 'openai', models: ['gpt-test'], apiKeyRef: { env: 'OPENAI_API_KEY' } });
    assert.deepEqual(entry(['--provider', 'openai-compatible', '--model', 'llama', '--base-url', 'http://127.0.0.1:8000/v1', '--api-key-env', 'LOCAL_KEY']), {
      kind: 'openai-compatible',
      id: 'openai-compatible',
      models: ['llama'],
      apiKeyRef: { env: 'LOCAL_KEY' },
      baseUrl: 'http://127.0.0.1:8000/v1',
    });
    assert.deepEqual(entry(['--provider', 'claude-code', '--model', 'sonnet', '--binary', '/usr/local/bin/claude']), { kind: 'claude-code', id: 'claude-code', models: ['sonnet'], binary: '/usr/local/bin/claude' });
    assert.equal(entry(['--provider', 'openai-compatible', '--model', 'llama']), 'INVALID_ARGUMENT');
    assert.equal(entry(['--provider', 'anthropic']), 'INVALID_ARGUMENT');
    assert.equal(entry(['--provider', 'gemini', '--model', 'g', '--binary', 'gemini']), 'INVALID_ARGUMENT');
    assert.equal(entry(['--provider', 'codex', '--model', 'm', '--base-url', 'https://x.example']), 'INVALID_ARGUMENT');
    assert.equal(entry(['--provider', 'teleporter', '--model', 'm']), 'INVALID_ARGUMENT');
  });

  it('run streams text, and --json prints JSONL events', () => {
    const text = cli(['run', '--config', config, '--url', url, '--provider', 'mock', '--model', 'demo', '--input', 'Hello CLI']);
    assert.equal(text.status, 0, text.stderr);
    assert.equal(text.stdout, 'Hello CLI\n');
    const events = cli(['run', '--config', config, '--url', url, '--provider', 'mock', '--model', 'demo', '--json'], { input: 'from stdin' });
    assert.equal(events.status, 0, events.stderr);
    const types = events.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { type: string }).type);
    assert.equal(types[0], 'run.started');
    assert.equal(types.at(-1), 'run.completed');
  });

  it('run exits 1 with the run error JSON on stderr', () => {
    const input = JSON.stringify({ mockScript: { steps: [{ actions: [{ error: { code: 'RATE_LIMITED', retryable: true } }] }] } });
    const result = cli(['run', '--config', config, '--url', url, '--provider', 'mock', '--model', 'demo', '--input', input]);
    assert.equal(result.status, 1);
    assert.equal(errorOf(result.stderr).code, 'RATE_LIMITED');
    assert.equal(errorOf(result.stderr).retryable, true);
  });

  it('status and doctor report the host and its providers', () => {
    const status = cli(['status', '--config', config, '--url', url, '--json']);
    assert.equal(status.status, 0, status.stderr);
    const report = JSON.parse(status.stdout) as { protocol: { version: string }; providers: { id: string }[] };
    assert.equal(report.protocol.version, '1.0');
    assert.deepEqual(report.providers.map((p) => p.id), ['mock']);
    const doctor = cli(['doctor', '--config', config, '--json']);
    assert.equal(doctor.status, 0, doctor.stderr);
    assert.equal((JSON.parse(doctor.stdout) as { ok: boolean }).ok, true);
  });

  it('audit prints the approval audit log from the state store', async () => {
    const { openSqliteStore } = await import('../../src/store/sqlite/sqlite-store.js');
    const store = await openSqliteStore(join(dir, 'nested', 'state'));
    await store.audit.append({ kind: 'approval.resolved', at: '2026-11-30T00:00:00.000Z', subject: 'local', tokenId: 'local', approvalId: 'a1', runId: 'r1', provider: 'mock', tool: 'send_email', outcome: 'approved' });
    await store.close();
    const result = cli(['audit', '--config', config, '--json', '--limit', '5']);
    assert.equal(result.status, 0, result.stderr);
    const records = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { kind: string; outcome: string; tool: string });
    assert.deepEqual(records.map((r) => [r.kind, r.tool, r.outcome]), [['approval.resolved', 'send_email', 'approved']]);
  });

  it('reports config and argument errors as one JSON line with exit 1', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ version: 1, providers: [], tokens: [] }));
    assert.equal(errorOf(cli(['serve', '--config', bad]).stderr).code, 'INVALID_CONFIG');
    assert.equal(errorOf(cli(['serve', '--config', config, '--host', '0.0.0.0']).stderr).code, 'TLS_REQUIRED');
    assert.equal(errorOf(cli(['serve', '--config', join(dir, 'missing.json')]).stderr).code, 'CONFIG_NOT_FOUND');
    assert.equal(errorOf(cli(['serve', '--config', config, '--port', 'eighty']).stderr).code, 'INVALID_ARGUMENT');
    assert.equal(errorOf(cli(['nonsense']).stderr).code, 'INVALID_ARGUMENT');
    const unreachable = cli(['status', '--config', config, '--url', 'http://127.0.0.1:1']);
    assert.equal(unreachable.status, 1);
    assert.equal(errorOf(unreachable.stderr).code, 'HOST_UNREACHABLE');
  });
});
