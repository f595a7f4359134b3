/**
 * The operator console in a real Chromium (launch.ts) against a live host over loopback. Each
 * behaviour is shown in the page and waited for on an explicit condition, never on time:
 *
 * - an application token is refused (403) and the page says so; the operator signs in;
 * - finished runs show their outcome, duration and reason; an interrupted one says why and
 *   that its steps are unknown;
 * - a run waiting for a person shows "waiting for approval" and the Approvals tab counts it —
 *   from the live update stream, with no list request after the first (no polling);
 * - a run's page: its live events grouped by step (earlier steps collapsed, two-digit numbers
 *   whole), its steps, tools, approval, tokens and timing; approving and denying in the page;
 * - filters, search and paging of finished runs; a full run id copied to the clipboard;
 * - a job followed to completion, the event log following the newest events until the
 *   operator scrolls up; providers; usage per hour and per day; spend against budget per
 *   subject, refreshed by the live feed when a run finishes; the audit log;
 * - at phone width (420 px) no view overflows sideways;
 * - the CSP blocks an injected inline script and a `<script>` argument renders as text.
 *
 * Screenshots of the views are taken; with AGENTICDRIVER_CONSOLE_SCREENSHOTS=docs they are
 * written to docs/console/ for the docs.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { AgenticClient, type RunEvent, type ScopeLimits } from '../../src/client/index.js';
import { interruptedRecord, USAGE_RECORD_SCHEMA } from '../../src/runtime/usage-record.js';
import { OTHER_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { tempDir } from '../support/temp.js';
import { launchChromium } from './launch.js';

const root = new URL('../..', import.meta.url).pathname;
const WAIT = { timeout: 60_000 };
const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
const WIDE = { width: 1200, height: 800 };
const PHONE = { width: 420, height: 860 };

const guarded = {
  name: 'guarded',
  description: 'Sends a message; a person must agree first.',
  inputSchema: { type: 'object' },
  requiresApproval: true,
  execute: (input: Record<string, unknown>) => ({ sent: true, to: input.to }),
};

/** A run that asks to use `guarded` (a review is needed) and then answers: 12 events when approved. */
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
  let context: BrowserContext;
  let page: Page;
  let client: AgenticClient;
  const violations: string[] = [];
  /** Every request the page made: `METHOD /path`. */
  const requests: string[] = [];
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
        // Budgets that never refuse, priced runs: the Usage view shows spend against budget.
        usage: { prices: [{ vendor: 'mock', model: 'demo', inputUsdPerMTok: 3, outputUsdPerMTok: 15 }] },
        limits: { host: { budgets: [{ period: 'month', usd: 100 }] }, subjects: { '*': { requestsPerMinute: 600, budgets: [{ period: 'day', usd: 5, tokens: 1_000_000 }] } } },
        tokens: [
          { id: 'app', subject: 'billing-app', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock', 'second'], tools: ['guarded'], jobs: ['submit', 'read'] },
          { id: 'ops', subject: 'ada', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock', 'second'], operator: true },
        ],
      },
      { tools: [guarded], consoleDirectory: built, operatorMarksIntervalMs: 100 },
    );
    client = new AgenticClient({ url: host.url, token: TOKEN });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: WIDE });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(host.url).origin });
    page = await context.newPage();
    page.on('request', (request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`));
    await page.exposeFunction('reportViolation', (directive: string) => violations.push(directive));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => (window as unknown as { reportViolation(value: string): void }).reportViolation(event.violatedDirective));
    });
  });

  after(async () => {
    await context?.close();
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

  const count = (request: string) => requests.filter((entry) => entry === request).length;
  const row = (testid: string, runId: string) => page.locator(`[data-testid="${testid}"] tr[data-run="${runId}"]`);

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

  it('signs the operator in; the token stays in sessionStorage, never in the URL or a cookie; the live stream connects', async () => {
    await page.fill('#token', OTHER_TOKEN);
    await page.click('button[type="submit"]');
    await page.locator('nav').waitFor(WAIT);
    const state = await page.evaluate(() => ({ url: location.href, cookie: document.cookie, stored: Object.values(sessionStorage) }));
    assert.deepEqual(state.stored, [OTHER_TOKEN]);
    assert.ok(!state.url.includes(OTHER_TOKEN));
    assert.equal(state.cookie, '');
    await page.locator('[data-testid="live-status"]', { hasText: 'live' }).waitFor(WAIT);
  });

  let reviewedId: string;
  let reviewed: ReturnType<typeof collect>;

  it('shows a run waiting for approval and counts it on the Approvals tab, from the live stream, without polling', async () => {
    // The list has loaded (nothing has finished yet, so nothing will make it reload).
    await page.locator('[data-testid="finished-runs"]', { hasText: 'No finished run matches.' }).waitFor(WAIT);
    const listsBefore = count('POST /v1/operator/runs');
    const streamsBefore = count('GET /v1/operator/updates');
    reviewed = collect(client.stream(reviewedRun('ada@example.com')));
    const waiting = page.locator('[data-testid="active-runs"] tr[data-run]', { has: page.locator('[data-state="waiting"]') });
    await waiting.waitFor(WAIT);
    reviewedId = (await waiting.getAttribute('data-run'))!;
    assert.match(await waiting.innerText(), /billing-app[\s\S]*mock \/ demo[\s\S]*120 \/ 30[\s\S]*waiting for approval[\s\S]*guarded/);
    await page.locator('[data-testid="pending-count"]', { hasText: '1' }).waitFor(WAIT);
    assert.equal(await page.locator('[data-testid="active-count"]').innerText(), '1');
    // The run appeared, started waiting and was counted without one more list request.
    assert.equal(count('POST /v1/operator/runs'), listsBefore);
    assert.equal(count('GET /v1/operator/updates'), streamsBefore);
  });

  it('shows finished runs with their duration and outcome, a failed run\'s reason, and an interrupted run\'s reason and unknown steps', async () => {
    // The reviewed run still waits for its approval meanwhile.
    const completed = await client.run({ provider: 'mock', model: 'demo', input: script([{ usage: { inputTokens: 900, outputTokens: 240 } }, { text: 'The quarterly report is ready.' }]) });
    const failure = await client.run({ provider: 'second', model: 'demo', input: script([{ error: { code: 'PROVIDER_ERROR', message: 'The vendor refused: monthly quota exhausted.' } }]) }).then(
      () => assert.fail('the run should fail'),
      (error: unknown) => error,
    );
    assert.equal((failure as { code: string }).code, 'PROVIDER_ERROR');
    const interruptedId = randomUUID();
    await host.store.usage.record(
      interruptedRecord(
        {
          schema: USAGE_RECORD_SCHEMA,
          recordId: interruptedId,
          hostId: 'h',
          runId: interruptedId,
          subject: 'nightly-batch',
          provider: 'mock',
          vendor: 'mock',
          model: 'demo',
          authMode: 'none',
          source: 'synthetic',
          startedAt: new Date(Date.now() - 95_000).toISOString(),
        },
        new Date().toISOString(),
      ),
    );

    const done = row('finished-runs', completed.runId);
    await done.waitFor(WAIT);
    assert.match(await done.innerText(), /billing-app[\s\S]*mock \/ demo[\s\S]*\d+(\.\d)? (ms|s)[\s\S]*900 \/ 240[\s\S]*completed/);
    const failed = page.locator('[data-testid="finished-runs"] tr', { hasText: 'PROVIDER_ERROR' });
    await failed.waitFor(WAIT);
    assert.equal(await failed.locator('[data-testid="reason"]').innerText(), 'The provider answered with an error.');
    assert.ok(!(await page.locator('main').innerText()).includes('monthly quota'), 'an error message (it may quote content) reached the console');
    // Another replica's record as far as this page knows: the live stream says something finished, the page reloads the list.
    const interrupted = row('finished-runs', interruptedId);
    await interrupted.waitFor(WAIT);
    const text = await interrupted.innerText();
    assert.match(text, /nightly-batch[\s\S]*1 min 3\d s[\s\S]*unknown[\s\S]*interrupted/);
    assert.match(await interrupted.locator('[data-testid="reason"]').innerText(), /host stopped while this run was in flight/);
    assert.ok(await row('active-runs', reviewedId).locator('[data-state="waiting"]').count());
    await screenshot('runs');
  });

  it('lists the pending approval with its arguments as text; the run\'s page shows its live events, and the approval is approved there; then its steps, tools and timing', async () => {
    await view('approvals');
    const card = page.locator('article[data-approval]', { hasText: 'ada@example.com' });
    await card.waitFor(WAIT);
    // The hostile argument is shown as text, and nothing in it ran.
    assert.ok((await card.locator('[data-testid="arguments"]').innerText()).includes(HOSTILE.replaceAll('"', '\\"')));
    assert.equal(await page.evaluate(() => document.querySelectorAll('pre script, pre img').length), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    await screenshot('approvals');

    await card.locator(`a[href="#run/${reviewedId}"]`).click();
    await page.locator(`[data-testid="run-page"][data-run="${reviewedId}"]`).waitFor(WAIT);
    await page.locator('[data-testid="run-watch"] li[data-type="approval.requested"]').waitFor(WAIT);
    assert.match(await page.locator('[data-testid="run-summary"]').innerText(), /waiting for approval/);
    const decide = page.locator('[data-testid="run-approval"] article[data-approval]');
    await decide.waitFor(WAIT);
    await screenshot('run-waiting');
    await decide.locator('button.approve').click();
    await page.locator('[data-testid="run-page"] [data-testid="decision-result"]', { hasText: 'approved' }).waitFor(WAIT);
    const events = await reviewed.done;
    assert.equal(events.at(-1)!.type, 'run.completed');
    assert.equal(events.length, 12);
    await page.locator('[data-testid="pending-count"]').waitFor({ state: 'detached', ...WAIT });

    const summary = page.locator('[data-testid="run-summary"]');
    await summary.locator('[data-state="completed"]').waitFor(WAIT);
    assert.match(await summary.innerText(), /billing-app[\s\S]*mock \/ demo[\s\S]*Duration\s+\d+(\.\d)? (ms|s)[\s\S]*Steps\s+2[\s\S]*270 \/ 50/);
    const steps = page.locator('[data-testid="steps"] tbody tr');
    await steps.nth(1).waitFor(WAIT);
    assert.match(await steps.nth(0).innerText(), /120 \/ 30[\s\S]*guarded[\s\S]*approval approved after/);
    assert.match(await steps.nth(1).innerText(), /150 \/ 20[\s\S]*none/);

    // The events it streamed stay: grouped by step, the earlier steps collapsed, every number whole.
    await page.locator('[data-testid="run-watch"] li[data-type="run.completed"]').waitFor(WAIT);
    const groups = await page.$$eval('[data-testid="events"] details', (list) => list.map((element) => [element.getAttribute('data-step'), (element as HTMLDetailsElement).open]));
    assert.deepEqual(groups, [['0', false], ['1', false], ['2', true]]);
    await page.click('[data-testid="events"] details[data-step="1"] summary');
    const numbers = await page.$$eval('[data-testid="events"] .seq', (list) =>
      list.filter((element) => element.getClientRects().length > 0).map((element) => {
        const box = element.getBoundingClientRect();
        const container = element.closest('.events')!.getBoundingClientRect();
        return { text: element.textContent, whole: element.scrollWidth <= element.clientWidth && box.left >= container.left && box.right <= container.right };
      }),
    );
    assert.ok(numbers.some((entry) => entry.text === '#12'), JSON.stringify(numbers));
    assert.ok(numbers.some((entry) => entry.text === '#5'), 'step 1 opened');
    assert.deepEqual(numbers.filter((entry) => !entry.whole), []);
    await screenshot('run');
  });

  it('denies another run\'s approval in the page; the finished run says why', async () => {
    const denied = collect(client.stream(reviewedRun('grace@example.com')));
    await view('approvals');
    const card = page.locator('article[data-approval]', { hasText: 'grace@example.com' });
    await card.waitFor(WAIT);
    await card.locator('button.deny').click();
    await page.locator('[data-testid="decision-result"]', { hasText: 'denied' }).waitFor(WAIT);
    const events = await denied.done;
    assert.ok(events.some((event) => event.type === 'approval.resolved' && event.resolution.outcome === 'denied'));
    assert.ok(!events.some((event) => event.type === 'tool.completed' && (event.output as { sent?: boolean })?.sent), 'a denied tool ran');
    await view('runs');
    const finished = row('finished-runs', events[0]!.runId);
    await finished.locator('[data-testid="reason"]').waitFor(WAIT);
    assert.match(await finished.innerText(), /APPROVAL_DENIED[\s\S]*A person denied a tool call the run needed\./);
  });

  it('filters, searches and pages finished runs', async () => {
    await view('runs');
    const made: string[] = [];
    for (let index = 0; index < 24; index += 1) made.push((await client.run({ provider: index % 2 ? 'second' : 'mock', model: 'demo', input: `batch item ${index}` })).runId);
    // The live feed reloads the first page as they finish; it holds 25.
    await row('finished-runs', made.at(-1)!).waitFor(WAIT);
    assert.equal(await page.locator('[data-testid="finished-runs"] tbody tr').count(), 25);

    await page.click('[data-testid="older"]');
    await page.locator('[data-testid="page-number"]', { hasText: 'page 2' }).waitFor(WAIT);
    await row('finished-runs', reviewedId).waitFor(WAIT);
    const secondPage = await page.locator('[data-testid="finished-runs"] tbody tr').count();
    assert.ok(secondPage >= 4 && secondPage <= 25, `${secondPage} runs on page 2`);
    assert.ok(!(await page.locator(`[data-testid="finished-runs"] tr[data-run="${made.at(-1)}"]`).count()), 'the newest run is not on page 2');
    await page.click('[data-testid="newer"]');
    await row('finished-runs', made.at(-1)!).waitFor(WAIT);

    await page.selectOption('[data-testid="run-filters"] select[name="state"]', 'failed');
    await page.locator('[data-testid="finished-runs"] tr', { hasText: 'APPROVAL_DENIED' }).waitFor(WAIT);
    const states = await page.$$eval('[data-testid="finished-runs"] [data-state]', (list) => list.map((element) => element.getAttribute('data-state')));
    assert.deepEqual([...new Set(states)], ['failed']);

    await page.selectOption('[data-testid="run-filters"] select[name="state"]', '');
    await page.fill('[data-testid="run-filters"] input[name="search"]', made[7]!.slice(0, 13).toUpperCase());
    await page.press('[data-testid="run-filters"] input[name="search"]', 'Enter');
    await page.waitForFunction((runId) => {
      const rows = [...document.querySelectorAll('[data-testid="finished-runs"] tbody tr')];
      return rows.length === 1 && rows[0]!.getAttribute('data-run') === runId;
    }, made[7]!);

    await page.fill('[data-testid="run-filters"] input[name="search"]', '');
    await page.fill('[data-testid="run-filters"] input[name="provider"]', 'second');
    await page.press('[data-testid="run-filters"] input[name="provider"]', 'Enter');
    await row('finished-runs', made[1]!).waitFor(WAIT);
    const providers = await page.$$eval('[data-testid="finished-runs"] tbody tr td:nth-child(3)', (list) => list.map((element) => element.textContent));
    assert.ok(providers.length > 0 && providers.every((text) => text?.startsWith('second')), JSON.stringify(providers));
    await page.click('[data-testid="run-filters"] button:has-text("Clear")');
    await page.locator('[data-testid="finished-runs"] tbody tr').nth(24).waitFor(WAIT);
  });

  it('copies a run\'s full id to the clipboard', async () => {
    const first = page.locator('[data-testid="finished-runs"] tbody tr').first();
    const runId = (await first.getAttribute('data-run'))!;
    assert.equal((await first.locator('a.mono').innerText()).length, 8, 'lists show ids short');
    await first.locator('button.copy').click();
    await first.locator('button.copy', { hasText: '✓' }).waitFor(WAIT);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), runId);
  });

  it('follows a job to completion; the event log follows the newest events until the operator scrolls up', async () => {
    const paragraph = 'Compiling the quarterly figures for every region and checking each total against the ledger. '.repeat(40);
    const job = await client.submitJob({
      key: 'nightly-report',
      request: { provider: 'mock', model: 'demo', input: script([{ text: paragraph }, { stallMs: 300 }, { usage: { inputTokens: 900, outputTokens: 240 } }, { text: 'report ready.' }]) },
    });
    await view('jobs');
    const jobRow = page.locator(`tr[data-job="${job.id}"]`);
    await jobRow.waitFor(WAIT);
    await jobRow.locator('button', { hasText: 'Follow' }).click();
    await page.locator('[data-testid="job-outcome"]', { hasText: 'completed' }).waitFor(WAIT);
    await page.locator(`tr[data-job="${job.id}"]`, { hasText: 'completed' }).waitFor(WAIT);
    const log = page.locator('[data-testid="job-events"]');
    const position = () => log.evaluate((element) => ({ top: element.scrollTop, height: element.scrollHeight, client: element.clientHeight }));
    await page.waitForFunction(() => {
      const element = document.querySelector('[data-testid="job-events"]')!;
      return element.scrollHeight > element.clientHeight && element.scrollTop + element.clientHeight >= element.scrollHeight - 4;
    });
    await screenshot('jobs');
    await log.evaluate((element) => {
      element.scrollTop = 0;
      element.dispatchEvent(new Event('scroll'));
    });
    await page.waitForFunction(() => !(document.querySelector('[data-testid="job-tail"] [data-testid="follow"]') as HTMLInputElement).checked);
    assert.equal((await position()).top, 0);
  });

  it('shows providers, usage per hour and per day, and the audit log of the operator\'s decisions', async () => {
    await view('providers');
    await page.locator('tr[data-provider="mock"]').waitFor(WAIT);
    await page.click('button:has-text("Refresh")');
    await page.locator('tr[data-provider="second"]').waitFor(WAIT);
    await screenshot('providers');

    await view('usage');
    const chart = page.locator('[data-testid="usage-chart"]');
    await chart.locator('rect').first().waitFor(WAIT);
    assert.equal(await chart.getAttribute('data-buckets'), '24');
    const hour = new Date().toISOString().slice(0, 13);
    // Every run of this test finished within the hour (or the one before, at an hour's turn).
    const busy = await chart.locator('g[data-bucket]').evaluateAll((list) => list.filter((element) => element.getAttribute('data-runs') !== '0').map((element) => element.getAttribute('data-bucket')));
    assert.ok(busy.length >= 1 && busy.length <= 2 && busy.at(-1)! <= hour, JSON.stringify(busy));
    const audit = page.locator('[data-testid="audit"] tbody tr', { hasText: 'approval.resolved' });
    await audit.first().waitFor(WAIT);
    assert.match(await page.locator('[data-testid="audit"]').innerText(), /ada \(operator, token ops\)[\s\S]*denied/);
    // Spend against budget: the host's and the subject's budgets as the host counts them, and a run that finishes shows up.
    const limits = async () => ((await (await fetch(`${host.url}/v1/operator/limits`, { method: 'POST', headers: { authorization: `Bearer ${OTHER_TOKEN}`, 'content-type': 'application/json' }, body: '{}' })).json()) as { limits: ScopeLimits[] }).limits;
    const dayUsd = (scopes: ScopeLimits[]) => scopes.find((scope) => scope.name === 'billing-app')!.budgets.find((budget) => budget.unit === 'usd')!;
    const spent = dayUsd(await limits());
    assert.ok(spent.used > 0, JSON.stringify(spent));
    const row = page.locator('[data-testid="budgets"] tr[data-scope="subject billing-app"][data-budget="usd:day"]');
    await row.getByText(`$${spent.used.toFixed(4)} / `).waitFor(WAIT);
    assert.match(await row.innerText(), /600 requests\/min[\s\S]*\$5\.0000 per day/);
    assert.equal(await row.locator('svg.spend').getAttribute('data-used'), Math.min(100, (spent.used / 5) * 100).toFixed(2));
    await page.locator('[data-testid="budgets"] tr[data-scope="host"][data-budget="usd:month"]').waitFor(WAIT);
    await screenshot('usage');
    await client.run({ provider: 'mock', model: 'demo', input: script([{ usage: { inputTokens: 20_000, outputTokens: 4_000 } }, { text: 'Budgeted.' }]) });
    const after = dayUsd(await limits());
    assert.ok(after.used >= spent.used + 0.12, `the run's $0.12 was counted: ${JSON.stringify(after)}`);
    await row.getByText(`$${after.used.toFixed(4)} / `).waitFor(WAIT);
    await page.click('button[data-range="days"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="usage-chart"]')?.getAttribute('data-buckets') === '30');
  });

  it('holds at phone width: no view overflows sideways and the header wraps', async () => {
    await page.setViewportSize(PHONE);
    const overflow = () => page.evaluate(() => ({ page: document.documentElement.scrollWidth, width: innerWidth, nav: document.querySelector('nav')!.getBoundingClientRect().right }));
    for (const name of ['runs', 'approvals', 'jobs', 'providers', 'usage']) {
      await view(name);
      await page.locator('main section').waitFor(WAIT);
      const { page: scrolled, width, nav } = await overflow();
      assert.ok(scrolled <= width, `${name}: the page is ${scrolled} px wide at ${width} px`);
      assert.ok(nav <= width, `${name}: the navigation ends at ${nav} px`);
    }
    await page.evaluate((runId) => (location.hash = `#run/${runId}`), reviewedId);
    await page.locator('[data-testid="steps"]').waitFor(WAIT);
    const { page: scrolled, width } = await overflow();
    assert.ok(scrolled <= width, `the run page is ${scrolled} px wide at ${width} px`);
    await view('runs');
    await page.locator('[data-testid="finished-runs"] tbody tr').first().waitFor(WAIT);
    await screenshot('runs-phone');
    await page.setViewportSize(WIDE);
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
