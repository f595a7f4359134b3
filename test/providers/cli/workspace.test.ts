/**
 * Run directories: refused where a CLI could ignore the run's files, removed whenever a run
 * ends (success or failure), and swept at start when a crashed process left them behind.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DriverError } from '../../../src/protocol/errors.js';
import { codex } from '../../../src/providers/cli/codex.js';
import { geminiCli, verifyGeminiRun } from '../../../src/providers/cli/gemini-cli.js';
import { chooseRunBase, createRunWorkspace, defaultRunBases } from '../../../src/providers/cli/workspace.js';
import { startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { API_KEY, binary, codexAccount, drain, geminiAccount, hostEnvironment, request, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 90_000 };

describe('run directories', () => {
  let scratch: { path: string; remove(): Promise<void> };
  /** A folder anyone may write to, like /tmp: nothing under it qualifies. */
  let open: string;
  /** A private folder inside the base the product would choose by default. */
  let privateBase: string;
  let proxy: RefusingProxy;
  let server: VendorServer;

  before(async () => {
    scratch = await scratchDirectory('workspace');
    open = join(scratch.path, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    const base = await chooseRunBase({ product: 'test' });
    privateBase = join(base, `test-${process.pid}`);
    proxy = await startRefusingProxy();
    server = await startOpenAIResponsesServer({ apiKey: API_KEY });
  });
  after(async () => {
    await server?.close();
    await proxy?.close();
    await rm(privateBase, { recursive: true, force: true });
    await scratch?.remove();
  });

  test('the default candidates start with XDG_RUNTIME_DIR, then the home cache', () => {
    const bases = defaultRunBases({ XDG_RUNTIME_DIR: '/run/user/4242' });
    assert.equal(bases[0], '/run/user/4242/agenticdriver');
    assert.match(bases[1]!, /\.cache\/agenticdriver\/cli-runs$/);
  });

  test('a folder others can write to never holds a run directory: typed refusal saying why', async () => {
    const refused = await createRunWorkspace({ product: 'Some CLI', bases: [join(open, 'runs')] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(refused instanceof DriverError);
    assert.equal(refused.code, 'CLI_UNAVAILABLE');
    assert.match(refused.message, /writable by group or others/);
    assert.match(refused.message, /XDG_RUNTIME_DIR or HOME/);
    assert.deepEqual(await readdir(open), [], 'nothing was created under the open folder');
  });

  test('a gemini-cli run is refused before the CLI starts when no location qualifies, and discovery says so', TIMEOUT, async () => {
    const adapter = geminiCli({
      binary: binary('gemini'),
      models: ['gemini-2.5-flash'],
      accountDirectory: await geminiAccount(join(scratch.path, 'gemini')),
      hostEnvironment: hostEnvironment(proxy),
      runBases: [join(open, 'runs')],
    });
    const { error, parts } = await drain(adapter, request('hi', 'gemini-2.5-flash'));
    assert.equal(error?.code, 'CLI_UNAVAILABLE');
    assert.deepEqual(parts, []);
    const inspection = await adapter.inspect!(AbortSignal.timeout(30_000));
    assert.equal(inspection.health.status, 'unavailable');
    assert.equal(inspection.health.code, 'CLI_UNAVAILABLE');
    assert.match(inspection.health.message, /locked-down settings/);
    assert.deepEqual(proxy.attempts, []);
  });

  test('a gemini-cli run is refused unless Gemini would honour its workspace settings', async () => {
    const cwd = join(privateBase, 'gemini-verify');
    await mkdir(join(cwd, '.gemini'), { recursive: true, mode: 0o700 });
    const trusted = { GEMINI_CLI_TRUST_WORKSPACE: 'true', GEMINI_RESTRICTED_MODE: 'false', HOME: join(privateBase, 'home') };
    const refusal = (env: Record<string, string>) => verifyGeminiRun(env, cwd).then(() => undefined, (error: unknown) => error as DriverError);
    try {
      assert.equal((await refusal(trusted))?.code, 'CLI_UNAVAILABLE', 'no settings file yet');
      await writeFile(join(cwd, '.gemini', 'settings.json'), '{}', { mode: 0o600 });
      assert.equal(await refusal(trusted), undefined);
      assert.match((await refusal({ ...trusted, GEMINI_RESTRICTED_MODE: 'true' }))?.message ?? '', /not be trusted/);
      assert.match((await refusal({ ...trusted, GEMINI_CLI_TRUST_WORKSPACE: 'false' }))?.message ?? '', /not be trusted/);
      assert.match((await refusal({ ...trusted, HOME: cwd }))?.message ?? '', /is its home folder/);
      assert.match((await refusal({ ...trusted, GEMINI_CLI_HOME: cwd }))?.message ?? '', /is its home folder/);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  test('the run directory is removed after a successful run and after a failed one', TIMEOUT, async () => {
    const adapter = codex({
      binary: binary('codex'),
      models: ['loopback-model'],
      accountDirectory: await codexAccount(join(scratch.path, 'codex'), server.url),
      environment: async () => ({ LOOPBACK_OPENAI_KEY: API_KEY }),
      hostEnvironment: hostEnvironment(proxy),
      runBases: [privateBase],
    });
    server.push({ turn: { text: 'fine' } });
    const success = await drain(adapter, request('hi', 'loopback-model'));
    assert.equal(success.error, undefined);
    assert.equal(success.text, 'fine');
    assert.deepEqual(await readdir(privateBase), []);
    server.push({ error: { status: 500, message: 'boom' } });
    const failure = await drain(adapter, request('hi', 'loopback-model'));
    assert.equal(failure.error?.code, 'CLI_FAILED');
    assert.deepEqual(await readdir(privateBase), []);
    assert.deepEqual(proxy.attempts, []);
  });

  test('run directories of dead processes are swept at start; a live process keeps its own', async () => {
    const base = join(privateBase, 'sweep');
    await mkdir(base, { recursive: true, mode: 0o700 });
    // No process has this id (above the kernel's pid_max); the parent process is alive.
    const dead = join(base, 'run-2147483646-abcdef');
    const live = join(base, `run-${process.ppid}-abcdef`);
    for (const dir of [dead, live]) {
      await mkdir(join(dir, 'work'), { recursive: true });
      await writeFile(join(dir, 'settings.json'), '{}');
    }
    const workspace = await createRunWorkspace({ product: 'test', bases: [base] });
    try {
      const left = await readdir(base);
      assert.ok(!left.includes('run-2147483646-abcdef'), 'the dead process run directory is gone');
      assert.ok(left.includes(`run-${process.ppid}-abcdef`), 'the live process run directory stays');
    } finally {
      await workspace.remove();
    }
  });
});
