/**
 * The parts of `npm test` itself (scripts/): the reporter that holds a test file's output back
 * unless one of its tests fails, the named steps of the per-language scripts, the leftover
 * check that counts only what the run's own processes left, and the watch that kills the
 * processes a test left running.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { ROOT } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

interface OrphansModule {
  MARKER: string;
  OrphanWatch: new (marker: string, self?: number) => { killed: string[]; sweep(): void };
}

interface LeftoversModule {
  snapshot(dirs: string[]): Set<string>;
  leftovers(before: Set<string>, sharedDirs: string[], own: { tmp: string; runBase: string | undefined }): { ours: string[]; shared: string[] };
  removeCliFolders(before: Set<string>, systemTmp: string): void;
}

/** The environment of a nested `node --test` (without this run's test-runner context). */
function plainEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

describe('the test reporter', () => {
  it("shows a file's output only when one of its tests failed", () => {
    const dir = tempDir('agenticdriver-reporter-');
    writeFileSync(join(dir, 'quiet.test.mjs'), "import { test } from 'node:test';\ntest('passes', () => { console.log('{\"level\":\"info\",\"msg\":\"quiet-stdout\"}'); console.error('quiet-stderr'); });\n");
    writeFileSync(
      join(dir, 'loud.test.mjs'),
      "import { test } from 'node:test';\ntest('passes first', () => { console.log('loud-before'); });\ntest('fails', () => { console.log('loud-during'); throw new Error('expected failure'); });\n",
    );
    const run = spawnSync(process.execPath, ['--test', `--test-reporter=${join(ROOT, 'scripts', 'test-reporter.mjs')}`, 'quiet.test.mjs', 'loud.test.mjs'], { cwd: dir, env: plainEnv(), encoding: 'utf8' });
    assert.equal(run.status, 1, run.stderr);
    assert.doesNotMatch(run.stdout, /quiet-stdout|quiet-stderr/);
    assert.match(run.stdout, /what .*loud\.test\.mjs printed \(shown because a test in it failed\)/);
    assert.match(run.stdout, /loud-before/);
    assert.match(run.stdout, /loud-during/);
    assert.match(run.stdout, /✔ passes/);
    assert.match(run.stdout, /✖ fails/);
  });
});

describe('named steps (scripts/lib/steps.sh)', () => {
  const script = (body: string) => {
    const dir = tempDir('agenticdriver-steps-');
    const path = join(dir, 'check.sh');
    writeFileSync(path, `set -u\nsteps_label=demo\n. ${JSON.stringify(join(ROOT, 'scripts', 'lib', 'steps.sh'))}\n${body}\n`);
    return spawnSync('sh', [path], { encoding: 'utf8' });
  };

  it('runs every step, names each failure and exits 1', () => {
    const run = script(`step "first" true\nstep "second" sh -c 'exit 3'\nstep "third" sh -c 'echo third-ran'\nfinish`);
    assert.equal(run.status, 1);
    assert.match(run.stdout, /third-ran/);
    assert.match(run.stderr, /--- FAILED: second \(exit 3\)/);
    assert.match(run.stderr, /demo: these steps failed:\n {2}second \(exit 3\)\n$/);
  });

  it('stops at a step the rest cannot do without', () => {
    const run = script(`step_or_stop "setup" false\nstep "later" sh -c 'echo later-ran'\nfinish`);
    assert.equal(run.status, 1);
    assert.doesNotMatch(run.stdout, /later-ran/);
    assert.match(run.stderr, /these steps failed:\n {2}setup \(exit 1\)/);
  });

  it('says so when every step passed', () => {
    const run = script(`step "only" true\nfinish`);
    assert.equal(run.status, 0);
    assert.match(run.stderr, /demo: every step passed/);
  });
});

describe('the leftover check (scripts/leftovers.mjs)', () => {
  it("counts what is in the run's own folders, and in shared ones only what no live process owns", async () => {
    const { leftovers, snapshot } = (await import(pathToFileURL(join(ROOT, 'scripts', 'leftovers.mjs')).href)) as LeftoversModule;
    const dir = tempDir('agenticdriver-leftovers-');
    const systemTmp = join(dir, 'tmp');
    const cache = join(dir, 'home', '.cache', 'agenticdriver');
    const runs = join(cache, 'cli-runs');
    const privateTmp = join(systemTmp, 'agenticdriver-test-x');
    const runBase = join(dir, 'runtime');
    for (const folder of [runs, privateTmp, join(runBase, 'agenticdriver')]) mkdirSync(folder, { recursive: true });
    mkdirSync(join(systemTmp, 'there-before'));
    const before = snapshot([systemTmp, cache]);

    // A process of another run that is still alive, and one that is gone.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    try {
      mkdirSync(join(runs, `run-${other.pid}-live`));
      mkdirSync(join(runs, `run-${gone}-dead`));
      mkdirSync(join(systemTmp, 'new-shared'));
      writeFileSync(join(privateTmp, 'left-by-a-test'), '');
      mkdirSync(join(runBase, 'agenticdriver', 'run-1-abc'));

      const found = leftovers(before, [systemTmp, cache], { tmp: privateTmp, runBase });
      assert.deepEqual(found.ours, [join(privateTmp, 'left-by-a-test'), join(runBase, 'agenticdriver', 'run-1-abc')].sort());
      assert.deepEqual(found.shared, [join(runs, `run-${gone}-dead`), join(systemTmp, 'new-shared')].sort());
    } finally {
      other.kill('SIGKILL');
    }
  });

  it("removes the Codex sandbox helper's fixed folder in the system temp dir when the run made it, and keeps one that was there before", async () => {
    const { removeCliFolders, snapshot } = (await import(pathToFileURL(join(ROOT, 'scripts', 'leftovers.mjs')).href)) as LeftoversModule;
    const codexFolder = `codex-daemon-${process.getuid?.() ?? 0}`;
    const made = join(tempDir('agenticdriver-leftovers-'), 'tmp');
    mkdirSync(made);
    const before = snapshot([made]);
    mkdirSync(join(made, codexFolder));
    mkdirSync(join(made, 'someone-else'));
    removeCliFolders(before, made);
    assert.deepEqual(readdirSync(made), ['someone-else']);

    const kept = join(tempDir('agenticdriver-leftovers-'), 'tmp');
    mkdirSync(join(kept, codexFolder), { recursive: true });
    removeCliFolders(snapshot([kept]), kept);
    assert.deepEqual(readdirSync(kept), [codexFolder]);
  });
});

describe('processes left running (scripts/orphans.mjs)', () => {
  it('kills a marked process that lost its parent, and leaves the ones still attached', async () => {
    const { MARKER, OrphanWatch } = (await import(pathToFileURL(join(ROOT, 'scripts', 'orphans.mjs')).href)) as OrphansModule;
    const marker = randomUUID();
    const env = { ...process.env, [MARKER]: marker };
    const attached = spawn('sleep', ['60'], { env, stdio: 'ignore' });
    // A shell that starts a process and exits: the process is left to init.
    const lost = Number(spawnSync('sh', ['-c', 'sleep 60 >/dev/null 2>&1 & echo $!'], { env, encoding: 'utf8' }).stdout.trim());
    const unmarked = spawnSync('sh', ['-c', 'sleep 60 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' });
    const other = Number(unmarked.stdout.trim());
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      const watch = new OrphanWatch(marker, process.pid);
      watch.sweep();
      assert.deepEqual(watch.killed.map((entry) => Number(entry.split(' ')[0])), [lost]);
      assert.match(watch.killed[0]!, /sleep 60/);
      assert.ok(alive(attached.pid!), 'a process still attached to the run is not touched');
      assert.ok(alive(other), 'a process without the marker is not touched');
    } finally {
      attached.kill('SIGKILL');
      process.kill(other, 'SIGKILL');
      if (alive(lost)) process.kill(lost, 'SIGKILL');
    }
  });
});
