/**
 * The console page over real HTTP: served without a token under the strict CSP, its own
 * origin passes the CORS check (a DNS-rebound name does not), loopback peers only unless
 * configured, and a clear answer when the console is not built.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { buildConsole } from '../../scripts/build-console.js';
import { CONSOLE_CSP, ConsoleAssets, isConsoleOrigin } from '../../src/extensions/console/assets.js';
import { parseHostConfig } from '../../src/host/config.js';
import { OTHER_TOKEN, startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { tempDir } from '../support/temp.js';

const tokens = [
  { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'] },
  { id: 'ops', subject: 'operator-1', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], operator: true },
];

describe('console page', () => {
  let built: string;
  let host: TestHost;
  let plain: TestHost;
  before(async () => {
    built = tempDir('agenticdriver-console-');
    await buildConsole(built);
    host = await startTestHost({ tokens, console: { enabled: true } }, { consoleDirectory: built });
    plain = await startTestHost({ tokens }, { consoleDirectory: built });
  });
  after(async () => {
    await host?.close();
    await plain?.close();
    rmSync(built, { recursive: true, force: true });
  });

  it('serves the page, script and stylesheet without a token, under the strict CSP', async () => {
    assert.equal(host.consoleUrl, `${host.url}/console`);
    for (const [path, type] of [
      ['/console', 'text/html'],
      ['/console/', 'text/html'],
      ['/console/app.js', 'text/javascript'],
      ['/console/app.css', 'text/css'],
    ] as const) {
      const response = await fetch(`${host.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-type') ?? '', new RegExp(`^${type}`), path);
      assert.equal(response.headers.get('content-security-policy'), CONSOLE_CSP, path);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(response.headers.get('cache-control'), 'no-store', path);
      assert.equal(response.headers.get('x-frame-options'), 'DENY', path);
    }
    const page = await (await fetch(`${host.url}/console`)).text();
    assert.match(page, /<script type="module" src="\/console\/app.js"><\/script>/);
    // No inline script: every <script> has a src and no body.
    assert.equal([...page.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].filter((match) => match[1]!.trim() !== '' || !/src=/.test(match[0])).length, 0);
    assert.match(CONSOLE_CSP, /script-src 'self'/);
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/);
  });

  it('is off unless configured', async () => {
    assert.equal(plain.consoleUrl, undefined);
    const response = await fetch(`${plain.url}/console`);
    assert.equal(response.status, 401);
  });

  it("lets the page's own origin call the API, but not another origin or a DNS-rebound name", async () => {
    const own = new URL(host.url).host;
    const post = (target: TestHost, origin: string, hostHeader?: string) =>
      fetch(`${target.url}/v1/operator/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OTHER_TOKEN}`, 'content-type': 'application/json', origin, ...(hostHeader ? { host: hostHeader } : {}) },
        body: '{}',
      });
    assert.equal((await post(host, `http://${own}`)).status, 200);
    const other = await post(host, 'http://evil.example');
    assert.equal(other.status, 403);
    assert.equal(((await other.json()) as { error: { code: string } }).error.code, 'ORIGIN_DENIED');
    assert.equal((await post(plain, `http://${new URL(plain.url).host}`)).status, 403, 'without the console the host origin is not special');
    assert.equal(isConsoleOrigin('http://127.0.0.1:7433', '127.0.0.1:7433', false, '127.0.0.1'), true);
    assert.equal(isConsoleOrigin('http://localhost:7433', 'localhost:7433', false, '127.0.0.1'), true);
    assert.equal(isConsoleOrigin('http://[::1]:7433', '[::1]:7433', false, '::1'), true);
    assert.equal(isConsoleOrigin('http://evil.example:7433', 'evil.example:7433', false, '127.0.0.1'), false);
    assert.equal(isConsoleOrigin('https://127.0.0.1:7433', '127.0.0.1:7433', false, '127.0.0.1'), false);
    assert.equal(isConsoleOrigin('http://127.0.0.1:7433', undefined, false, '127.0.0.1'), false);
    // An application token still gets FORBIDDEN from the page's origin.
    const application = await fetch(`${host.url}/v1/operator/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', origin: `http://${own}` }, body: '{}' });
    assert.equal(application.status, 403);
  });

  it('takes console and the operator grant in the config, strictly', () => {
    const base = { version: 1, providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }], tokens: [{ id: 'ops', subject: 'ops', tokenRef: { env: 'X' }, providers: ['mock'], operator: true }] };
    assert.deepEqual(parseHostConfig({ ...base, console: { enabled: true, allowRemote: true } }, '/tmp/c.json').console, { enabled: true, allowRemote: true });
    assert.equal(parseHostConfig({ ...base, console: { enabled: false } }, '/tmp/c.json').console, undefined);
    assert.throws(() => parseHostConfig({ ...base, console: { enabled: true, port: 1 } }, '/tmp/c.json'), { code: 'INVALID_CONFIG' });
    assert.throws(() => parseHostConfig({ ...base, tokens: [{ ...base.tokens[0], operator: 'yes' }] }, '/tmp/c.json'), { code: 'INVALID_CONFIG' });
  });

  it('serves loopback peers only unless allowRemote, and says when the console is not built', async () => {
    const local = await ConsoleAssets.load(built, false);
    assert.ok(local.file('/console', '127.0.0.1').body.length > 0);
    assert.ok(local.file('/console', '::ffff:127.0.0.1').body.length > 0);
    assert.throws(() => local.file('/console', '10.1.2.3'), { code: 'NOT_FOUND' });
    assert.throws(() => local.file('/console', undefined), { code: 'NOT_FOUND' });
    const remote = await ConsoleAssets.load(built, true);
    assert.ok(remote.file('/console/app.js', '10.1.2.3').body.length > 0);
    const empty = tempDir('agenticdriver-console-empty-');
    try {
      const missing = await ConsoleAssets.load(empty, false);
      assert.throws(() => missing.file('/console', '127.0.0.1'), /not built/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
