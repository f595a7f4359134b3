#!/usr/bin/env node
// The one test command: type checks, the build, the TypeScript suites (on this Node and on a
// current LTS line), the attack suites, each language client's suite, the packages as users
// install them, and the cross-language conformance harness. Every stage runs even after
// another failed (unless it needs what failed); the run ends with a table of the stages and
// fails if any failed or anything was left behind.
//
//   npm test                    every stage
//   npm test -- unit python     only the stages of those groups (see `group` below)
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { leftovers, privateRunBase, removeCliFolders, snapshot } from './leftovers.mjs';
import { prepareLtsNode } from './lts-node.mjs';
import { MARKER, OrphanWatch } from './orphans.mjs';
import { startPostgres } from './postgres.mjs';

const root = new URL('..', import.meta.url).pathname;
const selected = process.argv.slice(2);
const reporter = join(root, 'scripts', 'test-reporter.mjs');

function findTests(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

// --- the stages ------------------------------------------------------------------------------

/**
 * One row of the final table: a group (what `npm test -- <group>` selects), a name, what it
 * needs to have passed, and run(io), which resolves to { ok, detail, cpu? } (or throws: failed).
 * `alongside`: run two at a time with the stages next to it marked so too (most keep about one
 * core busy: a 2-core machine is then busy on both); its output is held and printed whole when
 * it ends (io.held).
 */
const stages = [];
function stage(group, name, run, needs = [], { alongside = false } = {}) {
  stages.push({ group, name, run, needs, alongside, result: 'not selected', detail: '', seconds: undefined, cpu: undefined });
}
/** A stage that runs one command and passes when it exits 0. */
const command = (file, args, options) => (io) => runCommand(file, args, { ...options, ...io });
/**
 * node --test over `files`, with the reporter that holds a file's output back unless one of
 * its tests fails. --test-force-exit: a file whose tests are done exits even if a failed test
 * left a handle open (Node 22+ no longer stops such a file at --test-timeout; it would keep
 * the stage waiting for ever).
 */
const nodeTests = (files, { node = process.execPath, concurrency, timeoutMs, env }, io) =>
  runCommand(node, ['--import', 'tsx', '--test', '--test-force-exit', `--test-reporter=${reporter}`, `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, ...files], { env, ...io });

const attackDir = join(root, 'test', 'attack');
// The official Python clients of the agent protocols: a venv from PyPI on first use, so a stage of its own with a longer bound.
const interopDir = join(root, 'test', 'interop');
const unitTests = findTests(join(root, 'test')).filter((path) => !path.startsWith(attackDir) && !path.startsWith(interopDir)).sort();
// The suites of the real agent CLIs (a third of the unit suite's time) run on the LTS lines users
// run; on an end-of-life Node (20) the unit stage leaves them to the LTS stage.
const realCliDir = join(root, 'test', 'providers', 'cli');
const endOfLifeNode = Number(process.versions.node.split('.')[0]) < 22;
const systemNodeTests = endOfLifeNode ? unitTests.filter((path) => !path.startsWith(realCliDir)) : unitTests;
let postgres;
let lts;

stage('typecheck', 'typecheck', command('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']));
// The operator console is browser code outside src/ (console/, bundled by scripts/build.mjs).
stage('typecheck', 'typecheck console', command('npx', ['tsc', '-p', 'console/tsconfig.json']));
// The layer order and no import cycles in src/ (.dependency-cruiser.cjs; docs/architecture.md).
stage('layers', 'layers', command('npx', ['depcruise', 'src', '--config', '.dependency-cruiser.cjs']));
stage('build', 'build', command(process.execPath, ['scripts/build.mjs']));
// One PostgreSQL server for the whole run (the store's tests use both engines).
stage('unit', 'postgres', async () => {
  postgres = await startPostgres(privateTmp);
  process.env.AGENTICDRIVER_TEST_POSTGRES_URL = postgres.url;
  return { ok: true, detail: `as ${postgres.as}, up in ${(postgres.startedInMs / 1000).toFixed(1)} s` };
});
// The CLI provider tests drive the pinned real CLIs; install them (idempotent) first.
stage('unit', 'cli tools', command(process.execPath, ['test/cli-tools/setup.mjs']));
stage('unit', 'unit', async (io) => ({
  ...(await nodeTests(systemNodeTests, { concurrency: 2, timeoutMs: 120_000 }, io)),
  ...(endOfLifeNode ? { note: `Node ${process.versions.node} is end-of-life: test/providers/cli/ runs in the LTS stage only` } : {}),
}), ['build', 'postgres', 'cli tools']);
// The same suite on the current LTS line: the system's Node when it is one, else Node from
// npm's registry, with its own build of the one native addon (scripts/lts-node.mjs).
stage('lts', 'lts node', async () => {
  lts = await prepareLtsNode();
  return { ok: true, detail: lts.description };
});
stage('lts', 'unit on lts node', (io) => nodeTests(unitTests, { node: lts.node, concurrency: 2, timeoutMs: 120_000, env: lts.env }, io), ['build', 'postgres', 'cli tools', 'lts node']);
// The stages after the unit suites, two at a time (each with its own venv, none building what
// another builds). Keep attacking (issue 13): authorization matrix, secret grep,
// SSE soak, then schemathesis against a live host (bounded; AGENTICDRIVER_FUZZ=long for the
// long campaign).
const alongside = { alongside: true };
stage('attack', 'attack', (io) => nodeTests(findTests(attackDir).sort(), { concurrency: 1, timeoutMs: 300_000 }, io), ['build', 'postgres'], alongside);
stage('attack', 'schemathesis', command(process.execPath, ['--import', 'tsx', 'test/attack/schemathesis.ts']), [], alongside);
// MCP and A2A driven by their official Python SDKs against a live host (docs/agent-protocols.md).
stage('interop', 'python agent-protocol clients', (io) => nodeTests(findTests(interopDir).sort(), { concurrency: 1, timeoutMs: 600_000 }, io), ['build'], alongside);
// Each language client's own suite (lint, type checks, unit tests, its package); each step
// names itself when it fails.
stage('python', 'python', command('bash', ['clients/python/scripts/test.sh']), [], alongside);
// The packages as an application installs them (scripts/packages.mjs; the Python wheel is
// built, checked and installed by the Python suite).
stage('packages', 'npm package', command(process.execPath, ['scripts/packages.mjs', 'npm']), ['build'], alongside);
stage('packages', 'go module', command(process.execPath, ['scripts/packages.mjs', 'go']), [], alongside);
stage('rust', 'rust', command('sh', ['clients/rust/scripts/check.sh']), [], alongside);
stage('go', 'go', command('sh', ['clients/go/scripts/check.sh']), [], alongside);
stage('packages', 'rust crate', command(process.execPath, ['scripts/packages.mjs', 'rust']));
// Every client against the shared vectors (after their own suites: it reuses their venv and builds).
stage('conformance', 'conformance', command(process.execPath, ['--import', 'tsx', 'conformance/run.ts']));
// The published 0.1.0 Rust crate (crates.io) against our host, every call, HTTP and HTTPS (compat/README.md).
stage('compat', 'compat', command(process.execPath, ['--import', 'tsx', 'compat/run.ts']));

const groups = [...new Set(stages.map((entry) => entry.group))];
const unknown = selected.filter((group) => !groups.includes(group));
if (unknown.length > 0) {
  console.error(`unknown stage ${unknown.join(', ')}; the stages are: ${groups.join(', ')}`);
  process.exit(2);
}
// A selected stage brings the stages it needs (e.g. `npm test -- lts` builds and starts PostgreSQL).
const wanted = new Set(stages.filter((entry) => selected.length === 0 || selected.includes(entry.group)).map((entry) => entry.name));
for (const entry of [...stages].reverse()) if (wanted.has(entry.name)) entry.needs.forEach((name) => wanted.add(name));

// --- running them ----------------------------------------------------------------------------

// Every stage gets a private temp dir inside the system one and a private XDG_RUNTIME_DIR
// (where CLI runs make their directories), so that what the tests leave there is theirs
// alone. tsx's compile cache lives there too (tsx-<uid>): the many processes of a run compile
// each source once, and it goes with the folder.
const systemTmp = tmpdir();
const privateTmp = mkdtempSync(join(systemTmp, 'agenticdriver-test-'));
const runBase = privateRunBase(privateTmp);
process.env.TMPDIR = process.env.TMP = process.env.TEMP = privateTmp;
if (runBase) process.env.XDG_RUNTIME_DIR = runBase;
delete process.env.TSX_DISABLE_CACHE;
// Node 22.1+ keeps the code it compiles there too (the agent CLIs' bundles, the dependencies); older lines ignore it.
process.env.NODE_COMPILE_CACHE = join(privateTmp, 'node-compile-cache');
// Every process of the run carries this marker, so that one it left running is found (scripts/orphans.mjs).
process.env[MARKER] = randomUUID();
const orphans = new OrphanWatch(process.env[MARKER]);
const sharedDirs = [systemTmp, ...new Set([homedir(), userInfo().homedir].map((home) => join(home, '.cache', 'agenticdriver')))];
const before = snapshot(sharedDirs);
if (!runBase) console.warn('No folder qualifies for a private XDG_RUNTIME_DIR (see scripts/leftovers.mjs): CLI runs use the shared ~/.cache/agenticdriver/cli-runs.');

/** The stages' processes running now (two when stages run alongside each other). */
const running = new Set();
let interrupted = false;

/**
 * Runs one command to its end. `held`: its output is kept and returned, and it runs under
 * scripts/with-cpu.mjs, which reports its CPU on file descriptor 3.
 */
function runCommand(file, args, { env, held = false } = {}) {
  return new Promise((resolveRun) => {
    const environment = env ? { ...process.env, ...env } : process.env;
    const child = held
      ? spawn(process.execPath, [join(root, 'scripts', 'with-cpu.mjs'), file, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env: environment })
      : spawn(file, args, { cwd: root, stdio: 'inherit', env: environment });
    running.add(child);
    child.once('exit', () => running.delete(child));
    const output = [];
    let cpu = '';
    if (held) {
      child.stdout.on('data', (chunk) => output.push(chunk));
      child.stderr.on('data', (chunk) => output.push(chunk));
      child.stdio[3].setEncoding('utf8').on('data', (text) => (cpu += text));
    }
    const outcome = (result) => ({ ...result, ...(held ? { output: Buffer.concat(output).toString('utf8'), cpu: cpu === '' ? undefined : Number(cpu) } : {}) });
    child.once('error', (error) => {
      running.delete(child);
      resolveRun(outcome({ ok: false, detail: `could not start ${file}: ${error.message}` }));
    });
    // 'close': a held command's output has all been read.
    child.once(held ? 'close' : 'exit', (code, signal) => resolveRun(outcome(code === 0 ? { ok: true } : { ok: false, detail: `exit ${code ?? signal}` })));
  });
}

// Stopped from outside: the running stages end, the rest are not run, and the table still prints.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = signal;
    for (const child of running) child.kill(signal);
    setTimeout(() => orphans.sweep(), 2000).unref();
  });
}

async function runStage(entry, held) {
  const missing = entry.needs.filter((name) => stages.find((other) => other.name === name).result !== 'passed');
  if (interrupted || missing.length > 0) {
    entry.result = 'not run';
    entry.detail = interrupted ? `${interrupted}` : `needs ${missing.join(', ')}`;
    return;
  }
  console.log(held ? `\n=== ${entry.name}: started alongside another stage; its output follows when it ends` : `\n=== ${entry.name}`);
  const started = Date.now();
  const cpuBefore = childrenCpu();
  const outcome = await entry.run({ held }).catch((error) => ({ ok: false, detail: error.message }));
  orphans.sweep();
  entry.seconds = (Date.now() - started) / 1000;
  entry.cpu = held ? outcome.cpu : childrenCpu() - cpuBefore;
  entry.result = outcome.ok ? 'passed' : 'failed';
  entry.detail = [outcome.detail, outcome.note].filter(Boolean).join('; ');
  if (held) process.stdout.write(`\n=== ${entry.name} (ran alongside other stages; its whole output)\n${outcome.output ?? ''}`);
  if (!outcome.ok) console.error(`\n=== ${entry.name} failed: ${entry.detail}`);
}

const chosen = stages.filter((entry) => wanted.has(entry.name));
const runStarted = Date.now();
orphans.start();
for (let index = 0; index < chosen.length; ) {
  if (!chosen[index].alongside) {
    await runStage(chosen[index], false);
    index += 1;
    continue;
  }
  // The run of stages that go alongside each other: two at a time, in order.
  const batch = [];
  while (index < chosen.length && chosen[index].alongside) batch.push(chosen[index++]);
  const next = async () => {
    for (let entry = batch.shift(); entry; entry = batch.shift()) await runStage(entry, true);
  };
  await Promise.all([next(), next()]);
}
orphans.stop();

// --- the end: the server, what was left behind, the table ------------------------------------

// The compile caches are the run's own, not something a test left.
for (const cache of [`tsx-${process.geteuid?.() ?? userInfo().username}`, 'node-compile-cache']) rmSync(join(privateTmp, cache), { recursive: true, force: true });
await postgres?.stop().catch((error) => console.error(`the test PostgreSQL server did not stop cleanly: ${error.message}`));
orphans.sweep();
removeCliFolders(before, systemTmp);
const found = leftovers(before, sharedDirs, { tmp: privateTmp, runBase });
const leftRunning = orphans.killed;
if (runBase) rmSync(runBase, { recursive: true, force: true });
rmSync(privateTmp, { recursive: true, force: true });
// Other processes on a shared machine may write to the shared folders too:
// AGENTICDRIVER_TEST_SHARED_TMP=1 reports new entries there without failing on them.
const sharedMachine = process.env.AGENTICDRIVER_TEST_SHARED_TMP === '1';
const failingLeftovers = [...found.ours, ...leftRunning, ...(sharedMachine ? [] : found.shared)];
if (found.ours.length + leftRunning.length + found.shared.length > 0) {
  console.error('\n=== left behind:');
  for (const path of found.ours) console.error(`  ${path} (in the run's own folders)`);
  for (const entry of leftRunning) console.error(`  process ${entry} (a test's process that outlived it; killed)`);
  for (const path of found.shared) console.error(`  ${path} (new in a shared folder${sharedMachine ? '; not counted with AGENTICDRIVER_TEST_SHARED_TMP=1' : ''})`);
}
if (!interrupted) {
  stages.push({ name: 'nothing left behind', result: failingLeftovers.length === 0 ? 'passed' : 'failed', detail: failingLeftovers.length === 0 ? '' : `${failingLeftovers.length} entries (listed above)` });
}

// The table: wall time, and the CPU time of the stage's processes (what a 2-core CI machine
// needs at least half of, whatever else runs on this one).
const rows = stages.filter((entry) => entry.result !== 'not selected');
const time = (seconds) => (seconds === undefined || Number.isNaN(seconds) ? '' : formatSeconds(seconds));
const cells = rows.map((entry) => [entry.name, entry.result, time(entry.seconds), time(entry.cpu), entry.detail]);
const header = ['stage', 'result', 'time', 'cpu', ''];
const widths = [0, 1, 2, 3].map((column) => Math.max(...[header, ...cells].map((row) => row[column].length)));
console.log('\n=== summary');
for (const row of [header, ...cells]) {
  console.log(`${row[0].padEnd(widths[0])}  ${row[1].padEnd(widths[1])}  ${row[2].padStart(widths[2])}  ${row[3].padStart(widths[3])}  ${row[4]}`.trimEnd());
}
const cpu = rows.reduce((sum, entry) => sum + (Number.isFinite(entry.cpu) ? entry.cpu : 0), 0);
console.log(`total ${formatSeconds((Date.now() - runStarted) / 1000)}, cpu ${formatSeconds(cpu)}`);
const count = (result) => rows.filter((entry) => entry.result === result).length;
console.log(`${count('passed')} passed, ${count('failed')} failed, ${count('not run')} not run`);
process.exit(interrupted ? (interrupted === 'SIGINT' ? 130 : 143) : count('failed') + count('not run') > 0 ? 1 : 0);

/** CPU seconds of this process's finished children (Linux; NaN elsewhere). */
function childrenCpu() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

function formatSeconds(seconds) {
  return seconds < 60 ? `${seconds.toFixed(0)} s` : `${Math.floor(seconds / 60)} min ${String(Math.round(seconds % 60)).padStart(2, '0')} s`;
}
