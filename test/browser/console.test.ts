/**
 * The operator console in a real Chromium (launch.ts) against a live host over loopback:
 * an application token is refused (403) and the page says so; the operator signs in; a run
 * started from a client appears and streams; an interactive approval is approved in the
 * page and the run completes, and another is denied; a job is followed to completion; the
 * CSP blocks an injected inline script and a tool argument holding `<script>` renders as
 * text. Screenshots of each view are taken (1000x700); with
 * AGENTICDRIVER_CONSOLE_SCREENSHOTS=docs they are written to docs/console/ for the docs.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { AgenticClient, type RunEvent } from '../../src/client/index.js';
import { OTHER_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { tempDir } from '../support/temp.js';
import { launchChromium } from './launch.js';

const root = new URL('../..', import.meta.url).pathname;
const WAIT = { timeout: 60_000 };
const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';

const guarded = {
  name: 'guarded',
  description: 'Sends a message; a person must agree first.',
  inputSchema: { type: 'object' },
  requiresApproval: true,
  execute: (input: Record<string, unknown>) => ({ sent: true, to: input.to }),
};

/** A run that asks to use `guarded` (a review is needed) and then answers. */
function reviewedRun(to: string) {
  return {
    provider: 'mock',
    model: 'demo',
    input: script(
      [{ usage: { inputTokens: 120, outputTokens: 30 } }, { text: 'Drafting the message. ' }, { toolCall: { name: 'guarded', arguments: { to, body: HOSTILE, attachments: [1, 2, 3] } } }],
      [{ usage: { inputTokens: 150, outputTokens: 20 } }, { text: 'Done.' }],
    ),
    tools: ['guarded'],
    approvals: { mode: 'interactive' as const, idlePolicy: 'pause' as const },
  };
}

/** Consumes a client stream in the background; `done` has every event once it ends. */
function collect(events: AsyncGenerator<RunEvent>) {
  const seen: RunEvent[] = [];
  const done = (async () => {
    for await (const event of events) seen.push(event);
    return seen;
  })();
  return { seen, done };
}

describe('operator console in a real browser', () => {
  let built: string;
  let shots: string;
  let host: TestHost;
  let browser: Browser;
  let page: Page;
  const violations: string[] = [];
  const writeDocs = process.env.AGENTICDRIVER_CONSOLE_SCREENSHOTS === 'docs';

  before(async () => {
    built = tempDir('agenticdriver-console-');
    await buildConsole(built);
    shots = writeDocs ? join(root, 'docs', 'console') : tempDir('agenticdriver-console-shots-');
    mkdirSync(shots, { recursive: true });
    host = await startTestHost(
      {
        approvals: { interactive: true },
        jobs: { retentionMs: 60_000, pollIntervalMs: 20 },
        console: { enabled: true },
        tokens: [
          { id: 'app', subject: 'billing-app', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], jobs: ['submit', 'read'] },
          { id: 'ops', subject: 'ada', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock', 'second'], operator: true },
        ],
      },
      { tools: [guarded], consoleDirectory: built },
    );
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    await page.exposeFunction('reportViolation', (directive: string) => violations.push(directive));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => (window as unknown as { reportViolation(value: string): void }).reportViolation(event.violatedDirective));
    });
  });

  after(async () => {
    await browser?.close();
    await host?.close();
    rmSync(built, { recursive: true, force: true });
    if (!writeDocs) rmSync(shots, { recursive: true, force: true });
  });

  async function screenshot(name: string) {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path });
    assert.ok(statSync(path).size > 1000, `${name}.png is empty`);
  }

  async function view(name: string) {
    await page.click(`nav a[data-view="${name}"]`);
    await page.waitForFunction((target) => location.hash === `#${target}`, name);
  }

  it('refuses an application token: the host answers 403 and the page says so', async () => {
    const response = await page.goto(host.consoleUrl!);
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    await page.fill('#token', TOKEN);
    await page.click('button[type="submit"]');
    const error = page.locator('[data-testid="signin-error"]');
    await error.waitFor(WAIT);
    assert.match(await error.innerText(), /Forbidden \(403 FORBIDDEN\).*operator grant/);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'a refused token is not kept');
    await screenshot('signin-forbidden');
  });

  it('signs the operator in; the token stays in sessionStorage, never in the URL or a cookie', async () => {
    await page.fill('#token', OTHER_TOKEN);
    await page.click('button[type="submit"]');
    await page.locator('nav').waitFor(WAIT);
    const state = await page.evaluate(() => ({ url: location.href, cookie: document.cookie, stored: Object.values(sessionStorage) }));
    assert.deepEqual(state.stored, [OTHER_TOKEN]);
    assert.ok(!state.url.includes(OTHER_TOKEN));
    assert.equal(state.cookie, '');
  });

  it('shows a run started from a client and streams its events; the approval is approved in the page and the run completes', async () => {
    const client = new AgenticClient({ url: host.url, token: TOKEN });
    const run = collect(client.stream(reviewedRun('ada@example.com')));
    await view('runs');
    const row = page.locator('[data-testid="active-runs"] tr[data-run]');
    await row.first().waitFor(WAIT);
    const runId = (await row.first().getAttribute('data-run'))!;
    assert.match(await row.first().innerText(), /billing-app[\s\S]*mock \/ demo[\s\S]*120 \/ 30[\s\S]*running/);
    await row.first().locator('button', { hasText: 'Watch' }).click();
    await page.locator('[data-testid="run-watch"] li[data-type="approval.requested"]').waitFor(WAIT);
    await screenshot('runs');

    await view('approvals');
    const card = page.locator('article[data-approval]');
    await card.waitFor(WAIT);
    // The hostile argument is shown as text, and nothing in it ran.
    assert.ok((await card.locator('[data-testid="arguments"]').innerText()).includes(HOSTILE.replaceAll('"', '\\"')));
    assert.equal(await page.evaluate(() => document.querySelectorAll('pre script, pre img').length), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    await screenshot('approvals');
    await card.locator('button.approve').click();
    await page.locator('[data-testid="decision-result"]', { hasText: 'approved' }).waitFor(WAIT);
    await page.locator('[data-testid="no-approvals"]').waitFor(WAIT);
    const events = await run.done;
    assert.equal(events.at(-1)!.type, 'run.completed');
    assert.ok(events.some((event) => event.type === 'approval.resolved' && event.resolution.outcome === 'approved'));
    assert.ok(events.some((event) => event.type === 'tool.completed'));

    // The watch panel (back on the Runs view, reopened) is gone with the run; the run is listed finished.
    await view('runs');
    await page.locator(`[data-testid="finished-runs"] tr[data-run="${runId}"]`, { hasText: 'completed' }).waitFor(WAIT);
  });

  it('denies another run\'s approval in the page', async () => {
    const client = new AgenticClient({ url: host.url, token: TOKEN });
    const run = collect(client.stream(reviewedRun('grace@example.com')));
    await view('approvals');
    const card = page.locator('article[data-approval]');
    await card.waitFor(WAIT);
    assert.match(await card.innerText(), /grace@example\.com/);
    await card.locator('button.deny').click();
    await page.locator('[data-testid="decision-result"]', { hasText: 'denied' }).waitFor(WAIT);
    const events = await run.done;
    assert.ok(events.some((event) => event.type === 'approval.resolved' && event.resolution.outcome === 'denied'));
    assert.ok(!events.some((event) => event.type === 'tool.completed' && (event.output as { sent?: boolean })?.sent), 'a denied tool ran');
    assert.ok(['run.completed', 'run.failed'].includes(events.at(-1)!.type));
  });

  it('follows a job to completion', async () => {
    const client = new AgenticClient({ url: host.url, token: TOKEN });
    const job = await client.submitJob({
      key: 'nightly-report',
      request: { provider: 'mock', model: 'demo', input: script([{ text: 'Compiling the report… ' }, { stallMs: 1500 }, { usage: { inputTokens: 900, outputTokens: 240 } }, { text: 'report ready.' }]) },
    });
    await view('jobs');
    const row = page.locator(`tr[data-job="${job.id}"]`);
    await row.waitFor(WAIT);
    await row.locator('button', { hasText: 'Follow' }).click();
    await page.locator('[data-testid="job-outcome"]', { hasText: 'completed' }).waitFor(WAIT);
    assert.ok((await page.locator('[data-testid="job-tail"] li[data-type="text.delta"]').count()) >= 2);
    await page.locator(`tr[data-job="${job.id}"]`, { hasText: 'completed' }).waitFor(WAIT);
    await screenshot('jobs');
  });

  it('shows providers, and usage with its chart and the audit log of the operator\'s decisions', async () => {
    await view('providers');
    await page.locator('tr[data-provider="mock"]').waitFor(WAIT);
    await page.click('button:has-text("Refresh")');
    await page.locator('tr[data-provider="second"]').waitFor(WAIT);
    await screenshot('providers');

    await view('usage');
    await page.locator('[data-testid="usage-chart"] rect').first().waitFor(WAIT);
    const audit = page.locator('[data-testid="audit"] tbody tr', { hasText: 'approval.resolved' });
    await audit.first().waitFor(WAIT);
    assert.match(await page.locator('[data-testid="audit"]').innerText(), /ada \(operator, token ops\)[\s\S]*denied/);
    await screenshot('usage');
  });

  it('blocks an injected inline script with the CSP', async () => {
    violations.length = 0;
    const ran = await page.evaluate(async () => {
      const element = document.createElement('script');
      element.textContent = 'window.__inline = 1';
      document.body.appendChild(element);
      await new Promise((resolve) => setTimeout(resolve, 200));
      return (window as unknown as { __inline?: number }).__inline;
    });
    assert.equal(ran, undefined);
    await page.waitForFunction(() => true);
    assert.ok(violations.includes('script-src-elem') || violations.includes('script-src'), `no CSP violation reported: ${violations.join(', ')}`);
  });
});
