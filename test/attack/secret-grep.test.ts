/**
 * The secret grep (issue 13, "keep attacking"): a host started by the real CLI
 * (`agenticdriver serve`) with two bearer tokens (one from a file, one from the
 * environment), two provider API keys (one from the environment, one from a file) and a
 * retrieval corpus's embedding key (from a file) goes
 * through a battery of requests (successes, every kind of refusal, vendor failures that
 * echo the key) and CLI commands (`status`, `doctor`, `run`, config errors). Then every
 * captured byte (HTTP bodies and headers, stdout/stderr of every process, the SQLite state
 * files, every file in the config directory but the secret files themselves) is searched
 * for each secret, raw and base64-, base64url-, URL- and JSON-encoded: none may appear.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { encodedForms } from '../support/secrets.js';
import { startChatCompletionsServer, type VendorServer } from '../vendors/index.js';
import { startEmbeddingServer, type EmbeddingServer } from '../vendors/embeddings.js';
import { cliCommand } from '../support/processes.js';

// The CLI runs from the repository root.
const root = join(import.meta.dirname, '..', '..');

// Characters that URL- and base64-encoding change, so each encoded form is distinct.
const SECRETS = {
  fileToken: 'file-token/0123456789+abcdefghij=KLMNOP~qrs',
  envToken: 'env-token/9876543210+zyxwvutsrq=PONMLK~jih',
  envKey: 'sk-env/key+0123456789abcdef=ghijklmnop',
  fileKey: 'sk-file/key+fedcba9876543210=ponmlkjihg',
  metricsToken: 'metrics-token/0123456789+abcdefgh=IJKLMN~op',
  webhookToken: 'webhook-token/0123456789+abcdefgh=IJKLMN~op',
  embeddingKey: 'sk-embed/key+0123456789abcdef=EMBEDkeyz',
};
/** Prompt text: it may come back in a run's own answer, but never in a log, usage record, spool or metric. */
const PROMPT = 'planted-prompt-text-4d2c81-do-not-log';

interface Capture {
  what: string;
  text: string;
}

describe('secret grep: no secret in any captured output', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agenticdriver-secrets-'));
  const configDir = join(dir, 'config');
  const config = join(configDir, 'config.json');
  const home = join(dir, 'home');
  const captures: Capture[] = [];
  const inputs: string[] = [];
  /** Secret files the CLI made during the run (excluded from the file walk, searched for), and their values. */
  const secretFiles: string[] = [];
  const generated: Record<string, string> = {};
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    AGENTICDRIVER_CONFIG: '',
    AD_ENV_TOKEN: SECRETS.envToken,
    AD_ENV_KEY: SECRETS.envKey,
    AD_WEBHOOK_TOKEN: SECRETS.webhookToken,
  };
  let vendorEnv: VendorServer;
  let vendorFile: VendorServer;
  let embedder: EmbeddingServer;
  let server: ChildProcess;
  let url: string;
  const serverOutput = { stdout: '', stderr: '' };

  function writePrivate(path: string, text: string) {
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(path, text, { mode: 0o600 });
  }
  function writeConfig(path: string, value: unknown) {
    writePrivate(path, JSON.stringify(value, null, 2));
  }
  /** Runs the CLI without blocking: the loopback vendors answer from this process. */
  async function cli(what: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, cliCommand(args), { env, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // A command that should fail but serves instead must not hang the suite.
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
    clearTimeout(guard);
    captures.push({ what: `${what} stdout`, text: stdout }, { what: `${what} stderr`, text: stderr });
    return { status, stdout, stderr };
  }
  async function request(what: string, path: string, init: RequestInit = {}) {
    const response = await fetch(`${url}${path}`, init);
    const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
    const body = await response.text();
    captures.push({ what: `HTTP ${what}`, text: `${response.status}\n${headers}\n\n${body}` });
    return { status: response.status, body };
  }
  const auth = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra });

  before(async () => {
    mkdirSync(home, { recursive: true });
    vendorEnv = await startChatCompletionsServer({ apiKey: SECRETS.envKey, models: ['m'] });
    vendorFile = await startChatCompletionsServer({ apiKey: SECRETS.fileKey, models: ['m'] });
    embedder = await startEmbeddingServer('openai', { apiKey: SECRETS.embeddingKey, dimensions: 8 });
    writePrivate(join(configDir, 'credentials', 'main.token'), `${SECRETS.fileToken}\n`);
    writePrivate(join(configDir, 'secrets', 'vendor.key'), `${SECRETS.fileKey}\n`);
    writePrivate(join(configDir, 'secrets', 'metrics.token'), `${SECRETS.metricsToken}\n`);
    writePrivate(join(configDir, 'secrets', 'embedding.key'), `${SECRETS.embeddingKey}\n`);
    writeConfig(config, {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [
        { kind: 'openai-compatible', id: 'vendor-env', models: ['m'], baseUrl: vendorEnv.url, apiKeyRef: { env: 'AD_ENV_KEY' } },
        { kind: 'openai-compatible', id: 'vendor-file', models: ['m'], baseUrl: vendorFile.url, apiKeyRef: { file: 'secrets/vendor.key' } },
        { kind: 'mock', id: 'mock', models: ['demo'] },
      ],
      tokens: [
        { id: 'main', subject: 'operator', tokenRef: { file: 'credentials/main.token' }, providers: ['vendor-env', 'vendor-file', 'mock'], operator: true, mcp: true, agUi: true, a2a: true, jobs: ['submit', 'read', 'cancel'], retrieval: { search: ['hybrid'], index: ['hybrid'], delete: ['hybrid'] } },
        { id: 'env', subject: 'app', tokenRef: { env: 'AD_ENV_TOKEN' }, providers: ['mock'] },
      ],
      state: { directory: join(configDir, 'state') },
      metrics: { enabled: true, tokenRef: { file: 'secrets/metrics.token' } },
      mcp: {},
      agUi: {},
      a2a: {},
      jobs: { retentionMs: 60_000, interactive: true },
      // Budgets large enough never to refuse: the operator limits view answers with real counters.
      limits: { subjects: { '*': { budgets: [{ period: 'day', usd: 1000 }] } }, tokens: { main: { budgets: [{ period: 'month', tokens: 1_000_000_000 }] } } },
      // A corpus whose embedder needs a key (from a file); the vendor also gets a reply echoing it.
      retrieval: { corpora: [{ id: 'hybrid', embedding: { kind: 'openai', model: 'embed-small', dimensions: 8, baseUrl: embedder.url, apiKeyRef: { file: 'secrets/embedding.key' } } }] },
      // A webhook that is down (nothing listens on port 1): records wait in the spool, failures are logged.
      usage: {
        file: { path: 'usage/records.jsonl' },
        webhook: { url: 'http://127.0.0.1:1/usage', tokenRef: { env: 'AD_WEBHOOK_TOKEN' }, maxAttempts: 2, retryIntervalMs: 1000 },
      },
    });
    server = spawn(process.execPath, cliCommand(['serve', '--config', config, '--json']), { env, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stderr!.on('data', (chunk: Buffer) => (serverOutput.stderr += chunk.toString('utf8')));
    const lines = createInterface({ input: server.stdout! });
    lines.on('line', (line) => (serverOutput.stdout += `${line}\n`));
    const first = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${serverOutput.stderr}`)));
    });
    url = (JSON.parse(first) as { url: string }).url;
  });

  after(async () => {
    if (server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
    await vendorEnv.close();
    await vendorFile.close();
    await embedder.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the battery (each answer is the expected one, so the grep looks at real traffic)', async () => {
    const json = (token: string, body: unknown, extra: Record<string, string> = {}) => ({ method: 'POST', headers: auth(token, extra), body: JSON.stringify(body) });
    assert.equal((await request('health', '/health')).status, 200);
    assert.equal((await request('protocol', '/v1/protocol', { headers: auth(SECRETS.fileToken) })).status, 200);
    assert.equal((await request('providers refresh', '/v1/providers?refresh=true', { headers: auth(SECRETS.fileToken) })).status, 200);
    assert.equal((await request('env-token providers', '/v1/providers', { headers: auth(SECRETS.envToken) })).status, 200);

    vendorEnv.push({ turn: { text: 'env key works', usage: { input: 3, output: 3 } } });
    vendorFile.push({ turn: { text: 'file key works' } });
    const env = await request('run env key', '/v1/runs', json(SECRETS.fileToken, { provider: 'vendor-env', model: 'm', input: 'hi' }));
    assert.equal(env.status, 200, env.body);
    const file = await request('run file key sse', '/v1/runs', json(SECRETS.fileToken, { provider: 'vendor-file', model: 'm', input: 'hi' }, { accept: 'text/event-stream' }));
    assert.match(file.body, /run\.completed/);
    // Vendors that echo the key they were sent, in an error body, a 500 and a broken stream.
    vendorEnv.push({ error: { status: 401, message: `Incorrect API key provided: ${SECRETS.envKey}` } });
    assert.equal((await request('vendor 401 echoing the key', '/v1/runs', json(SECRETS.fileToken, { provider: 'vendor-env', model: 'm', input: 'hi' }))).status, 502);
    vendorEnv.push({ http: { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: `bad key ${SECRETS.envKey}` } }) } });
    assert.equal((await request('vendor 400 echoing the key', '/v1/runs', json(SECRETS.fileToken, { provider: 'vendor-env', model: 'm', input: 'hi' }))).status, 502);
    vendorFile.push({ frames: [{ raw: `data: {"garbage": "${SECRETS.fileKey}"\n\n` }] });
    const broken = await request('vendor stream echoing the key', '/v1/runs', json(SECRETS.fileToken, { provider: 'vendor-file', model: 'm', input: 'hi' }, { accept: 'text/event-stream' }));
    assert.match(broken.body, /run\.failed/);
    // The MCP server: initialize, a run whose vendor echoes the key, and a token without the mcp grant.
    const mcp = (token: string, message: unknown) => ({ method: 'POST', headers: auth(token, { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }), body: JSON.stringify(message) });
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'grep', version: '1' } } };
    assert.equal((await request('mcp initialize', '/mcp', mcp(SECRETS.fileToken, initialize))).status, 200);
    vendorEnv.push({ error: { status: 401, message: `Incorrect API key provided: ${SECRETS.envKey}` } });
    const mcpRun = await request('mcp run, vendor echoing the key', '/mcp', mcp(SECRETS.fileToken, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run', arguments: { provider: 'vendor-env', model: 'm', input: 'hi' }, _meta: { progressToken: 1 } } }));
    assert.match(mcpRun.body, /"isError":true/);
    assert.equal((await request('mcp without the grant', '/mcp', mcp(SECRETS.envToken, initialize))).status, 403);
    // AG-UI: a run whose vendor echoes the key (its RUN_ERROR carries our message only), and a token without the grant.
    const agUi = (token: string, provider: string) => ({ method: 'POST', headers: auth(token, { accept: 'text/event-stream' }), body: JSON.stringify({ threadId: 'grep', runId: `grep-${provider}`, messages: [{ id: 'm', role: 'user', content: 'hi' }], tools: [], context: [], forwardedProps: { provider, model: provider === 'mock' ? 'demo' : 'm' } }) });
    vendorEnv.push({ error: { status: 401, message: `Incorrect API key provided: ${SECRETS.envKey}` } });
    assert.match((await request('ag-ui run, vendor echoing the key', '/ag-ui', agUi(SECRETS.fileToken, 'vendor-env'))).body, /RUN_ERROR/);
    assert.equal((await request('ag-ui without the grant', '/ag-ui', agUi(SECRETS.envToken, 'mock'))).status, 403);
    // A2A: the public card, a task whose vendor echoes the key, and a token without the grant.
    assert.equal((await request('a2a agent card', '/.well-known/agent-card.json')).status, 200);
    const a2a = (token: string, provider: string) => ({ method: 'POST', headers: auth(token), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `grep-${provider}`, role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata: { provider, model: provider === 'mock' ? 'demo' : 'm' } } } }) });
    vendorEnv.push({ error: { status: 401, message: `Incorrect API key provided: ${SECRETS.envKey}` } });
    assert.match((await request('a2a task, vendor echoing the key', '/a2a', a2a(SECRETS.fileToken, 'vendor-env'))).body, /TASK_STATE_FAILED/);
    assert.equal((await request('a2a without the grant', '/a2a', a2a(SECRETS.envToken, 'mock'))).status, 403);

    // Refusals: wrong, truncated and misplaced tokens; grants; bad bodies; unknown paths.
    for (const [what, headers] of [
      ['wrong token', auth(`${SECRETS.fileToken}x`)],
      ['token prefix', auth(SECRETS.fileToken.slice(0, 32))],
      ['basic scheme', { authorization: `Basic ${Buffer.from(`main:${SECRETS.fileToken}`).toString('base64')}` }],
    ] as const) {
      assert.equal((await request(what, '/v1/protocol', { headers })).status, 401);
    }
    assert.equal((await request('token in the query', `/v1/protocol?token=${encodeURIComponent(SECRETS.fileToken)}`, { headers: auth(SECRETS.envToken) })).status, 404);
    assert.equal((await request('token in the path', `/v1/${encodeURIComponent(SECRETS.envToken)}`, { headers: auth(SECRETS.envToken) })).status, 404);
    assert.equal((await request('ungranted provider', '/v1/runs', json(SECRETS.envToken, { provider: 'vendor-env', model: 'm', input: 'hi' }))).status, 403);
    assert.equal((await request('bad version', '/v1/protocol', { headers: auth(SECRETS.fileToken, { 'agenticdriver-version': '9.9' }) })).status, 400);
    assert.equal((await request('bad JSON', '/v1/runs', { method: 'POST', headers: auth(SECRETS.fileToken), body: '{"provider":' })).status, 400);
    assert.equal((await request('bad schema', '/v1/runs', json(SECRETS.fileToken, { provider: 'mock', model: 'demo', input: 'x', outputSchema: { pattern: '(a)\\1', type: 'string' } }))).status, 400);
    assert.equal((await request('unknown model', '/v1/runs', json(SECRETS.fileToken, { provider: 'vendor-file', model: 'nope', input: 'hi' }))).status, 400);
    // Prompt text through every run kind; then the operator views of it.
    const prompted = await request('run with planted prompt', '/v1/runs', json(SECRETS.fileToken, { provider: 'mock', model: 'demo', input: PROMPT }));
    assert.equal(prompted.status, 200);
    await request('run with planted prompt failing', '/v1/runs', json(SECRETS.fileToken, { provider: 'mock', model: 'demo', input: JSON.stringify({ mockScript: { steps: [{ actions: [{ error: { code: 'PROVIDER_ERROR', message: PROMPT } }] }] } }) }));
    // The prompted run read back from its record: its own answer again, to its own subject.
    const promptedRunId = (JSON.parse(prompted.body) as { runId: string }).runId;
    assert.equal((await request('run read back', '/v1/runs/read', json(SECRETS.fileToken, { runId: promptedRunId }))).status, 200);
    assert.equal((await request('run events read back', '/v1/runs/events', json(SECRETS.fileToken, { runId: promptedRunId, after: 0 }))).status, 200);
    assert.equal((await request('run followed back', `/v1/runs/${promptedRunId}/stream`, { headers: auth(SECRETS.fileToken) })).status, 200);
    const metrics = await request('metrics', '/metrics', { headers: { authorization: `Bearer ${SECRETS.metricsToken}` } });
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /agenticdriver_runs_total/);
    assert.equal((await request('metrics with a host token', '/metrics', { headers: auth(SECRETS.fileToken) })).status, 401);
    assert.equal((await request('wrong content type', '/v1/runs', { method: 'POST', headers: auth(SECRETS.fileToken, { 'content-type': 'text/plain' }), body: 'hi' })).status, 400);
    // The operator endpoints: answers with every subject's runs, usage and audit, and refusals.
    for (const path of ['runs', 'approvals', 'jobs', 'usage', 'limits', 'audit']) {
      assert.equal((await request(`operator ${path}`, `/v1/operator/${path}`, json(SECRETS.fileToken, {}))).status, 200);
      assert.equal((await request(`operator ${path} with an application token`, `/v1/operator/${path}`, json(SECRETS.envToken, {}))).status, 403);
    }
    assert.equal((await request('operator usage by subject', '/v1/operator/usage', json(SECRETS.fileToken, { by: 'subject' }))).status, 200);
    const limits = await request('operator limits of a subject', '/v1/operator/limits', json(SECRETS.fileToken, { subject: 'operator' }));
    assert.equal((JSON.parse(limits.body) as { limits: { budgets: unknown[] }[] }).limits[0]!.budgets.length, 1, limits.body);
    // The failed runs (the planted prompt is one's error message) and each one's page: reasons come from codes, never messages.
    const failedRuns = await request('operator failed runs', '/v1/operator/runs', json(SECRETS.fileToken, { state: 'failed', finished: 100 }));
    const failedIds = (JSON.parse(failedRuns.body) as { finished: { runId: string }[] }).finished.map((run) => run.runId);
    assert.ok(failedIds.length >= 3, failedRuns.body);
    for (const runId of failedIds) assert.equal((await request(`operator page of failed run ${runId}`, `/v1/operator/runs/${runId}`, { headers: auth(SECRETS.fileToken) })).status, 200);
    // Retrieval with a keyed embedder: index, search, a grounded run, and a vendor error that echoes the key.
    const indexed = await request('retrieval index', '/v1/retrieval/index', json(SECRETS.fileToken, { corpus: 'hybrid', source: { id: 'handbook', revision: 'r1' }, chunks: [{ id: 'c1', text: `Expense reports are due monthly. ${PROMPT}` }] }));
    assert.equal(indexed.status, 200, indexed.body);
    assert.equal((await request('retrieval search', '/v1/retrieval/search', json(SECRETS.fileToken, { corpus: 'hybrid', query: 'expense reports' }))).status, 200);
    assert.equal((await request('grounded run', '/v1/runs', json(SECRETS.fileToken, { provider: 'mock', model: 'demo', input: 'When are expense reports due?', retrieval: { corpus: 'hybrid' } }))).status, 200);
    embedder.next.push({ status: 401, body: { error: { message: `Incorrect API key provided: ${SECRETS.embeddingKey}` } } });
    const rejected = await request('embedding vendor 401 echoing the key', '/v1/retrieval/search', json(SECRETS.fileToken, { corpus: 'hybrid', query: 'expense' }));
    assert.equal(rejected.status, 502, rejected.body);
    assert.match(rejected.body, /EMBEDDING_AUTH_REJECTED/);
    assert.equal((await request('operator watch of no run', '/v1/operator/runs/00000000-0000-4000-8000-000000000000/events', { headers: auth(SECRETS.fileToken) })).status, 404);
  });

  it('runs the CLI commands: status, doctor, audit, run, config edits with a reload, and config errors', async () => {
    const json = (token: string, body: unknown) => ({ method: 'POST', headers: auth(token), body: JSON.stringify(body) });
    assert.equal((await cli('status', ['status', '--config', config, '--url', url, '--refresh', '--json'])).status, 0);
    // The webhook is down: doctor shows the usage sink failure and exits 1.
    const doctor = await cli('doctor', ['doctor', '--config', config, '--json']);
    assert.equal(doctor.status, 1, doctor.stderr);
    assert.match(doctor.stdout, /USAGESTAT_ERROR/);
    assert.equal((await cli('audit', ['audit', '--config', config, '--json'])).status, 0);
    assert.equal((await cli('usage', ['usage', '--config', config, '--by', 'subject'])).status, 0);
    assert.equal((await cli('usage json', ['usage', '--config', config, '--by', 'model', '--json'])).status, 0);
    vendorFile.push({ turn: { text: 'from the CLI' } });
    const run = await cli('run', ['run', '--config', config, '--url', url, '--provider', 'vendor-file', '--model', 'm', '--input', 'hi']);
    assert.equal(run.stdout, 'from the CLI\n', run.stderr);
    vendorEnv.push({ error: { status: 401, message: `Incorrect API key provided: ${SECRETS.envKey}` } });
    assert.equal((await cli('run failing', ['run', '--config', config, '--url', url, '--provider', 'vendor-env', '--model', 'm', '--json', '--input', 'hi'])).status, 1);
    assert.equal((await cli('run with a wrong token id', ['run', '--config', config, '--url', url, '--token-id', 'nope', '--provider', 'mock', '--model', 'demo', '--input', 'hi'])).status, 1);

    // Config edits and a reload: listings show where secrets come from, never them; the edited
    // config, the new token's entry and the host's reload log hold none.
    for (const args of [['providers', 'list'], ['tokens', 'list']]) assert.equal((await cli(args.join(' '), [...args, '--config', config, '--json'])).status, 0);
    const added = await cli('providers add', ['providers', 'add', 'openai-compatible', '--config', config, '--id', 'vendor-added', '--model', 'm', '--base-url', vendorFile.url, '--api-key-file', 'secrets/vendor.key', '--grant', 'main']);
    assert.equal(added.status, 0, added.stderr);
    const token = await cli('tokens add', ['tokens', 'add', 'added', '--config', config, '--provider', 'mock']);
    assert.equal(token.status, 0, token.stderr);
    secretFiles.push(join(configDir, 'credentials', 'added.token'));
    generated.addedToken = readFileSync(join(configDir, 'credentials', 'added.token'), 'utf8').trim();
    assert.equal((await cli('tokens grant', ['tokens', 'grant', 'env', '--config', config, '--provider', 'vendor-added'])).status, 0);
    const reloaded = serverOutput.stderr.length;
    server.kill('SIGHUP');
    while (!serverOutput.stderr.slice(reloaded).includes('"kind":"config"')) await new Promise((resolve) => server.stderr!.once('data', resolve));
    assert.match(serverOutput.stderr.slice(reloaded), /config reloaded/);
    vendorFile.push({ turn: { text: 'through the added provider' } });
    const viaAdded = await request('run via the added provider', '/v1/runs', json(SECRETS.envToken, { provider: 'vendor-added', model: 'm', input: 'hi' }));
    assert.equal(viaAdded.status, 200, viaAdded.body);
    assert.equal((await request('run with the added token', '/v1/runs', json(generated.addedToken!, { provider: 'mock', model: 'demo', input: 'hi' }))).status, 200);

    // Config errors: a secret pasted where a reference belongs, a readable secret file, a bad key.
    const broken = (name: string, mutate: (value: any) => void) => {
      const value = JSON.parse(readFileSync(config, 'utf8'));
      mutate(value);
      const path = join(configDir, `${name}.json`);
      writeConfig(path, value);
      return path;
    };
    const pasted = broken('pasted', (value) => (value.tokens[0].tokenRef = SECRETS.fileToken));
    const pastedValue = broken('pasted-value', (value) => (value.tokens[0].tokenRef = { value: SECRETS.fileToken }));
    const pastedKey = broken('pasted-key', (value) => (value.providers[0].apiKeyRef = { env: SECRETS.envKey }));
    const pastedUrl = broken('pasted-url', (value) => (value.providers[0].baseUrl = `http://user:${encodeURIComponent(SECRETS.envKey)}@127.0.0.1:1/v1/`));
    // The broken configs hold the secret on purpose: they are inputs, not output to grep.
    inputs.push(pasted, pastedValue, pastedKey, pastedUrl);
    const refusals = await Promise.all(
      [
        ['pasted token', pasted],
        ['pasted token value', pastedValue],
        ['pasted key as env name', pastedKey],
        ['key in the base URL', pastedUrl],
      ].flatMap(([what, path]) => [
        cli(`doctor: ${what}`, ['doctor', '--config', path!, '--json']),
        cli(`serve: ${what}`, ['serve', '--config', path!, '--port', '0', '--json']),
      ]),
    );
    assert.deepEqual(refusals.map((result) => result.status), refusals.map(() => 1));
    const readable = join(configDir, 'credentials', 'main.token');
    chmodSync(readable, 0o644);
    try {
      const [serve, doctor] = await Promise.all([
        cli('serve: readable token file', ['serve', '--config', config, '--port', '0', '--json']),
        cli('doctor: readable token file', ['doctor', '--config', config, '--json']),
      ]);
      assert.deepEqual([serve.status, doctor.status], [1, 1]);
    } finally {
      chmodSync(readable, 0o600);
    }
  });

  it('finds no secret, in any encoding, in anything captured', async () => {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    captures.push({ what: 'serve stdout', text: serverOutput.stdout }, { what: 'serve stderr', text: serverOutput.stderr });
    const excluded = new Set([join(configDir, 'credentials', 'main.token'), join(configDir, 'secrets', 'vendor.key'), join(configDir, 'secrets', 'metrics.token'), join(configDir, 'secrets', 'embedding.key'), ...secretFiles]);
    const walk = (path: string): string[] => (statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => walk(join(path, name))) : [path]);
    const files = [...walk(configDir), ...walk(home)].filter((path) => !excluded.has(path) && !inputs.includes(path));
    assert.ok(files.some((path) => path.endsWith('.sqlite') || path.endsWith('.db')), `no state file among ${files.map((path) => relative(dir, path)).join(', ')}`);
    for (const path of files) captures.push({ what: `file ${relative(dir, path)}`, text: readFileSync(path).toString('latin1') });
    // The vendors saw the keys (the grep is not vacuous: the secrets really were used).
    assert.ok(vendorEnv.requests.some((request) => request.headers.authorization === `Bearer ${SECRETS.envKey}`));
    assert.ok(vendorFile.requests.some((request) => request.headers.authorization === `Bearer ${SECRETS.fileKey}`));
    assert.ok(embedder.requests.some((request) => request.headers.authorization === `Bearer ${SECRETS.embeddingKey}`));
    assert.ok(captures.length >= 50, `only ${captures.length} captures`);

    const leaks: string[] = [];
    assert.ok(generated.addedToken, 'the token the CLI made is searched for too');
    for (const [name, secret] of Object.entries({ ...SECRETS, ...generated })) {
      for (const form of encodedForms(secret)) {
        for (const capture of captures) if (capture.text.includes(form)) leaks.push(`${name} as ${JSON.stringify(form)} in ${capture.what}`);
      }
    }
    assert.deepEqual(leaks, []);

    // Prompt text (also planted in an indexed passage): in no log line, usage record (file, spool),
    // metric or CLI report; only the answers that carry it to their caller may hold it.
    const answers = new Set(['HTTP retrieval search', 'HTTP grounded run']);
    const operatorViews = captures.filter(
      (capture) => !capture.what.startsWith('HTTP run') && !answers.has(capture.what) && !capture.what.endsWith('.sqlite') && !capture.what.includes('.sqlite-') && capture.what !== 'run stdout',
    );
    assert.ok(operatorViews.some((capture) => capture.what.includes('usage/records.jsonl')), 'the usage file was written');
    assert.ok(operatorViews.some((capture) => capture.what.includes('usage-spool/pending/')), 'the webhook spool holds the records');
    assert.match(serverOutput.stderr, /USAGESTAT_ERROR/, 'the down webhook is logged');
    assert.match(serverOutput.stderr, /"kind":"request"/, 'the host logged its requests');
    assert.match(serverOutput.stderr, /"kind":"run"/, 'the host logged its runs');
    assert.deepEqual(operatorViews.filter((capture) => capture.text.includes(PROMPT)).map((capture) => capture.what), []);
  });
});
