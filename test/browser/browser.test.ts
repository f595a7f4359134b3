/**
 * The client bundle in a real browser (Chromium from npm via playwright-core, see
 * launch.ts): a page on an allowed origin streams a run from the real host and reads the
 * version header through CORS; a page on another origin is refused with ORIGIN_DENIED.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { launchChromium } from './launch.js';
import { bundleForBrowser, closeModulePages, serveModulePage, type ModulePage } from './page.js';

const root = new URL('../..', import.meta.url).pathname;


describe('client in a real browser', () => {
  let bundle: string;
  let allowed: ModulePage;
  let denied: ModulePage;
  let host: TestHost;
  let browser: Browser;

  before(async () => {
    bundle = await bundleForBrowser({ entryPoints: [`${root}src/client/index.ts`] });
    allowed = await serveModulePage(bundle, 'agentic');
    denied = await serveModulePage(bundle, 'agentic');
    host = await startTestHost({ allowedOrigins: [allowed.origin] });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await host?.close();
    await closeModulePages(allowed, denied);
  });

  it('bundles for the browser without Node built-ins', () => {
    assert.doesNotMatch(bundle, /from\s*["']node:/);
    assert.match(bundle, /AgenticClient/);
  });

  it('streams a run from an allowed origin and reads the version header through CORS', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${allowed.origin}/`);
      await page.waitForFunction(() => document.title === 'ready');
      const outcome = await page.evaluate(
        async ({ url, token }) => {
          const { AgenticClient } = (window as unknown as { agentic: typeof import('../../src/client/index.js') }).agentic;
          const client = new AgenticClient({ url, token });
          const types: string[] = [];
          let text = '';
          for await (const event of client.stream({ provider: 'mock', model: 'demo', input: 'Hello from the browser' })) {
            types.push(event.type);
            if (event.type === 'run.completed') text = event.result.text;
          }
          const response = await fetch(`${url}/v1/protocol`, { headers: { Authorization: `Bearer ${token}` } });
          return { types, text, version: response.headers.get('AgenticDriver-Version') };
        },
        { url: host.url, token: TOKEN },
      );
      assert.equal(outcome.types[0], 'run.started');
      assert.equal(outcome.types.at(-1), 'run.completed');
      assert.equal(outcome.text, 'Hello from the browser');
      assert.equal(outcome.version, '1.0');
    } finally {
      await page.close();
    }
  });

  it('refuses a page from an origin that is not allowed with ORIGIN_DENIED', async () => {
    const recorder = await startRecordingProxy(host.url);
    const page = await browser.newPage();
    try {
      await page.goto(`${denied.origin}/`);
      await page.waitForFunction(() => document.title === 'ready');
      const clientError = await page.evaluate(
        async ({ url, token }) => {
          const { AgenticClient, DriverError } = (window as unknown as { agentic: typeof import('../../src/client/index.js') }).agentic;
          try {
            await new AgenticClient({ url, token }).protocol();
            return undefined;
          } catch (error) {
            return { name: (error as Error).name, code: error instanceof DriverError ? error.code : undefined };
          }
        },
        { url: recorder.url, token: TOKEN },
      );
      // The preflight passes so the page can read the refusal; the request itself is refused
      // before authentication, and the page's client reports the host's own code.
      assert.deepEqual(recorder.answers, [
        { method: 'OPTIONS', origin: denied.origin, status: 204, code: undefined },
        { method: 'GET', origin: denied.origin, status: 403, code: 'ORIGIN_DENIED' },
      ]);
      assert.deepEqual(clientError, { name: 'DriverError', code: 'ORIGIN_DENIED' });
    } finally {
      await page.close();
      recorder.server.closeAllConnections();
      await new Promise((resolve) => recorder.server.close(resolve));
    }
  });
});

interface HostAnswer {
  method: string;
  origin: string | undefined;
  status: number;
  code: string | undefined;
}

/** A loopback forwarder in front of the host that records what the host answered the browser. */
async function startRecordingProxy(target: string): Promise<{ url: string; answers: HostAnswer[]; server: Server }> {
  const answers: HostAnswer[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'connection')) as Record<string, string>;
    const answer = await fetch(`${target}${request.url}`, { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const body = await answer.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(body) as { error?: { code?: string } }).error?.code;
    } catch {
      code = undefined;
    }
    answers.push({ method: request.method ?? '', origin: request.headers.origin, status: answer.status, code });
    response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => name !== 'content-length' && name !== 'transfer-encoding'))).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, answers, server };
}
