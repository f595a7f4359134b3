/**
 * Error codes chosen by a provider are bounded (issue 25, item 8), against a host process
 * started by the real CLI. A tenant scripts the mock — the same path an API or CLI adapter's
 * error takes — with a 90 KB code, two hundred distinct made-up codes and a 100 KB message.
 * Before: the 90 KB code became a Prometheus label, every code a new series, and an unknown
 * code answered HTTP 500. Now a code outside the contract's table becomes `PROVIDER_ERROR`
 * (the original quoted in the message only when it is a short identifier), messages are cut
 * to 2,000 characters, and metric labels come only from the table — in answers, streams,
 * usage records, logs and `/metrics` alike.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isKnownErrorCode } from '../../src/protocol/errors.js';
import { MAX_ERROR_MESSAGE_CHARS } from '../../src/runtime/provider-errors.js';
import { parseSse, script } from '../support/host.js';
import { CLI_MAIN, killAll, spawnHost, type HostProcess } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'provider-codes-token-0123456789abcdefgh';
const HUGE_CODE = 'X'.repeat(90_000);
const failing = (error: Record<string, unknown>) => ({ provider: 'mock', model: 'demo', input: script([{ error }]) });

describe('provider-chosen error codes are bounded (issue 25, item 8)', () => {
  const dir = tempDir('agenticdriver-provider-codes-');
  const children: ChildProcess[] = [];
  let host: HostProcess;
  let stderr = '';

  before(async () => {
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [{ id: 'main', subject: 'tenant', tokenRef: { env: 'AD_CODES_TOKEN' }, providers: ['mock'] }],
        limits: { maxConcurrentRunsPerSubject: 16 },
        metrics: { enabled: true },
        usage: { file: { path: 'usage.jsonl' } },
      }),
      { mode: 0o600 },
    );
    host = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--json'], { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_CODES_TOKEN: TOKEN }, children, {
      onStderr: (text) => (stderr += text),
    });
  });
  after(() => killAll(children));

  const run = (body: unknown, accept?: string) =>
    fetch(`${host.url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify(body) });
  const failure = async (body: unknown) => {
    const response = await run(body);
    return { status: response.status, error: ((await response.json()) as { error: { code: string; message: string; retryable: boolean } }).error };
  };

  it('answers a code outside the contract with 502 PROVIDER_ERROR, never a 500, quoting it only when it is short', async () => {
    const huge = await failure(failing({ code: HUGE_CODE, message: 'quota' }));
    assert.deepEqual([huge.status, huge.error.code], [502, 'PROVIDER_ERROR']);
    assert.equal(huge.error.message, 'The provider failed with a code the contract does not define (90000 characters, not shown): quota');
    // The mock's own message repeats the code: it is cut like any message.
    const echoed = await failure(failing({ code: HUGE_CODE }));
    assert.deepEqual([echoed.status, echoed.error.code], [502, 'PROVIDER_ERROR']);
    assert.ok(echoed.error.message.length <= MAX_ERROR_MESSAGE_CHARS, `${echoed.error.message.length} characters`);

    const made = await failure(failing({ code: 'VENDOR_QUOTA_EXCEEDED', message: 'over quota', retryable: true }));
    assert.deepEqual([made.status, made.error.code, made.error.retryable], [502, 'PROVIDER_ERROR', true]);
    assert.match(made.error.message, /code VENDOR_QUOTA_EXCEEDED, which the contract does not define: over quota/);

    // A code with characters no label or log should carry is not quoted either.
    const odd = await failure(failing({ code: 'bad code\n{"level":"error"}', message: 'odd' }));
    assert.deepEqual([odd.error.code, odd.error.message], ['PROVIDER_ERROR', 'The provider failed with a code the contract does not define (26 characters, not shown): odd']);

    // Codes of the contract pass unchanged; a huge message is cut.
    const known = await failure(failing({ code: 'PROVIDER_AUTH', message: 'M'.repeat(90_000) }));
    assert.deepEqual([known.status, known.error.code], [502, 'PROVIDER_AUTH']);
    assert.equal(known.error.message.length, MAX_ERROR_MESSAGE_CHARS);
    assert.ok(known.error.message.endsWith('…'));

    const stream = await run(failing({ code: 'Y'.repeat(45_000), message: 'm'.repeat(45_000) }), 'text/event-stream');
    const last = parseSse(await stream.text()).at(-1) as { type: string; error: { code: string; message: string } };
    assert.deepEqual([last.type, last.error.code], ['run.failed', 'PROVIDER_ERROR']);
    assert.ok(last.error.message.length <= MAX_ERROR_MESSAGE_CHARS);
  });

  it('keeps metric labels to the contract table however many codes a tenant invents', async (t) => {
    const scrape = async () => (await fetch(`${host.url}/metrics`)).text();
    const before = await scrape();
    for (let batch = 0; batch < 20; batch += 1) {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, index) => failure(failing({ code: `INVENTED_${batch}_${index}`, message: 'invented' }))));
      for (const answer of answers) assert.deepEqual([answer.status, answer.error.code], [502, 'PROVIDER_ERROR']);
    }
    const text = await scrape();
    const codes = new Set([...text.matchAll(/^agenticdriver_run_errors_total\{[^}]*code="([^"]*)"/gm)].map((match) => match[1]!));
    assert.ok(codes.size > 0);
    for (const code of codes) assert.ok(isKnownErrorCode(code), `label code="${code.slice(0, 80)}"`);
    assert.equal(text.includes('INVENTED_'), false);
    assert.equal(text.includes('XXXXXXXX'), false);
    // Two hundred invented codes added no series: the exposition grew by counter values only.
    const series = (exposition: string) => exposition.split('\n').filter((line) => line.startsWith('agenticdriver_run_errors_total{')).length;
    t.diagnostic(`200 invented codes: run-error series ${series(before)} -> ${series(text)}, exposition ${before.length} -> ${text.length} bytes`);
    assert.equal(series(text), series(before));
    assert.ok(text.length - before.length < 2_000, `the exposition grew by ${text.length - before.length} bytes`);
  });

  it('writes only contract codes to usage records and bounded lines to the log', async () => {
    // The file sink gets each record in the background; wait for the last one of the battery.
    let lines: { errorCode?: string }[] = [];
    const deadline = Date.now() + 20_000;
    while (lines.length < 206 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      lines = readFileSync(join(dir, 'usage.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { errorCode?: string });
    }
    assert.equal(lines.length, 206);
    for (const line of lines) assert.ok(line.errorCode !== undefined && isKnownErrorCode(line.errorCode), String(line.errorCode).slice(0, 80));
    assert.equal(readFileSync(join(dir, 'usage.jsonl'), 'utf8').includes('XXXXXXXX'), false);
    assert.ok(stderr.includes('"kind":"run"'), 'the host logs its runs');
    assert.equal(stderr.includes('XXXXXXXX'), false);
    assert.equal(stderr.includes('INVENTED_'), false);
    for (const line of stderr.split('\n')) assert.ok(line.length < 4_000, `a log line of ${line.length} characters`);
  });
});
