/**
 * A browser MCP client (the official MCP SDK's `Client` over `StreamableHTTPClientTransport`,
 * bundled for the browser) in a real browser (Chromium from npm via playwright-core, see
 * launch.ts), on another origin than the host's: on an allowed origin (`allowedOrigins`) the
 * preflight lets the MCP headers through and the page reads `Mcp-Session-Id`, so it initializes,
 * lists the tools and calls `run`; a page on another origin is refused (`ORIGIN_DENIED`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { launchChromium } from './launch.js';
import { bundleForBrowser, closeModulePages, serveModulePage, type ModulePage } from './page.js';

const root = new URL('../..', import.meta.url).pathname;


type McpModule = typeof import('@modelcontextprotocol/sdk/client/index.js') & typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');

describe('a browser MCP client on another origin (CORS)', () => {
  let allowed: ModulePage;
  let denied: ModulePage;
  let host: TestHost;
  let browser: Browser;

  before(async () => {
    const contents = "export { Client } from '@modelcontextprotocol/sdk/client/index.js'; export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';";
    const bundle = await bundleForBrowser({ stdin: { contents, resolveDir: root, loader: 'js' } });
    allowed = await serveModulePage(bundle, 'mcp');
    denied = await serveModulePage(bundle, 'mcp');
    host = await startTestHost({
      allowedOrigins: [allowed.origin],
      mcp: {},
      tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], mcp: true }],
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await host?.close();
    await closeModulePages(allowed, denied);
  });

  /** Connects from the page, lists the tools and calls `run`; what happened, or the error. */
  async function session(origin: string) {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => document.title === 'ready');
      return await page.evaluate(
        async ({ url, token }) => {
          const { Client, StreamableHTTPClientTransport } = (window as unknown as { mcp: McpModule }).mcp;
          const client = new Client({ name: 'browser', version: '1.0.0' });
          const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
          try {
            await client.connect(transport);
            const tools = (await client.listTools()).tools.map((tool) => tool.name);
            const result = (await client.callTool({ name: 'run', arguments: { provider: 'mock', model: 'demo', input: 'Hello from a browser' } })) as { content: { text: string }[] };
            return { sessionId: transport.sessionId ?? null, tools, text: result.content[0]!.text, error: null };
          } catch (error) {
            return { sessionId: null, tools: [], text: null, error: String(error) };
          } finally {
            await client.close().catch(() => undefined);
          }
        },
        { url: `${host.url}/mcp`, token: TOKEN },
      );
    } finally {
      await page.close();
    }
  }

  it('lets a page on an allowed origin initialize, read its session id and call a tool', async () => {
    const outcome = await session(allowed.origin);
    assert.equal(outcome.error, null);
    assert.ok(outcome.sessionId, 'the page read Mcp-Session-Id (exposed)');
    assert.ok(outcome.tools.includes('run'));
    assert.equal(outcome.text, 'Hello from a browser');
  });

  it('answers the preflight with the MCP headers, and refuses another origin', async () => {
    const preflight = await fetch(`${host.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: allowed.origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id' },
    });
    assert.equal(preflight.status, 204);
    const allowHeaders = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
    for (const header of ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']) assert.ok(allowHeaders.includes(header), header);
    assert.match(preflight.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/);
    const outcome = await session(denied.origin);
    assert.equal(outcome.text, null);
    assert.match(String(outcome.error), /403|ORIGIN_DENIED|Forbidden/i);
  });
});
