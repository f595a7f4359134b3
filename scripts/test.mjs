#!/usr/bin/env node
// The one test command: type-check, the TypeScript suites, then the cross-language
// conformance harness. Each stage prints its own summary; any failure fails the run.
import { spawn } from 'node:child_process';
import { readdirSync, statSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { leftovers, snapshot } from './leftovers.mjs';
import { startPostgres } from './postgres.mjs';

const root = new URL('..', import.meta.url).pathname;
const only = process.argv[2];

function findTests(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

// Every stage gets a private temp dir inside the system one, so what the tests leave there is
// theirs alone; tsx's compile cache (not made by our tests) is switched off.
const systemTmp = tmpdir();
const privateTmp = mkdtempSync(join(systemTmp, 'agenticdriver-test-'));
process.env.TMPDIR = process.env.TMP = process.env.TEMP = privateTmp;
process.env.TSX_DISABLE_CACHE = '1';
const runCaches = [...new Set([homedir(), userInfo().homedir].map((home) => join(home, '.cache', 'agenticdriver')))];
const before = snapshot([systemTmp, ...runCaches]);

// One PostgreSQL server for the whole run (the store's tests use both engines), stopped and
// its cluster removed however the run ends.
let postgres;
let current;
let finishing = false;

async function finish(code) {
  if (finishing) return new Promise(() => {}); // a signal handler is ending the run
  finishing = true;
  await postgres?.stop();
  const found = leftovers(before, [systemTmp, ...runCaches], privateTmp);
  rmSync(privateTmp, { recursive: true, force: true });
  if (found.length > 0) {
    // Another process on a shared machine may write there too; AGENTICDRIVER_TEST_SHARED_TMP=1
    // reports new entries outside the private temp dir without failing on them.
    const shared = process.env.AGENTICDRIVER_TEST_SHARED_TMP === '1';
    const ours = shared ? found.filter((path) => path.startsWith(privateTmp)) : found;
    console.error(`\n=== the tests left ${found.length} new entr${found.length === 1 ? 'y' : 'ies'} behind:\n${found.map((path) => `  ${path}`).join('\n')}`);
    if (ours.length > 0) process.exit(code || 1);
  }
  process.exit(code);
}

// Stopped from outside: the running stage, the server and the private temp dir go too.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
  process.once(signal, async () => {
    if (finishing) return;
    finishing = true;
    current?.kill(signal);
    await postgres?.stop().catch(() => {});
    rmSync(privateTmp, { recursive: true, force: true });
    process.exit(code);
  });
}

async function stage(name, command, args, options = {}) {
  if (only && only !== name) return;
  console.log(`\n=== ${name}: ${command} ${args.join(' ')}`);
  const status = await new Promise((resolveStatus) => {
    current = spawn(command, args, { cwd: root, stdio: 'inherit', ...options });
    current.once('error', () => resolveStatus('spawn error'));
    current.once('exit', (code, signal) => resolveStatus(code ?? signal));
  });
  current = undefined;
  if (finishing) await new Promise(() => {}); // a signal handler is ending the run
  if (status !== 0) {
    console.error(`\n=== ${name} failed (exit ${status})`);
    await finish(typeof status === 'number' ? status : 1);
  }
}

await stage('typecheck', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
// The operator console is browser code outside src/ (console/, bundled by scripts/build-console.ts).
await stage('typecheck', 'npx', ['tsc', '-p', 'console/tsconfig.json']);
// The layer order and no import cycles in src/ (.dependency-cruiser.cjs; docs/architecture.md).
await stage('layers', 'npx', ['depcruise', 'src', '--config', '.dependency-cruiser.cjs']);
await stage('build', 'npm', ['run', 'build', '--silent']);
// test/attack runs in its own stage (below), after the unit suites.
const attackDir = join(root, 'test', 'attack');
const tests = findTests(join(root, 'test')).filter((path) => !path.startsWith(attackDir)).sort();
if (!only || !['typecheck', 'layers', 'build'].includes(only)) {
  try {
    postgres = await startPostgres(privateTmp);
  } catch (error) {
    console.error(`\n=== could not start the test PostgreSQL server: ${error.message}`);
    await finish(1);
  }
  console.log(`\n=== postgres: a test server on port ${postgres.port} (started in ${postgres.startedInMs} ms)`);
  process.env.AGENTICDRIVER_TEST_POSTGRES_URL = postgres.url;
}
// The CLI provider tests drive the pinned real CLIs; install them (idempotent) first.
await stage('unit', process.execPath, ['test/cli-tools/setup.mjs']);
await stage('unit', process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', '--test-timeout=120000', ...tests]);
// Keep attacking (issue 13): authorization matrix, secret grep, SSE soak, then schemathesis
// against a live host (bounded; AGENTICDRIVER_FUZZ=long for the long campaign).
await stage('attack', process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', '--test-timeout=300000', ...findTests(attackDir).sort()]);
await stage('attack', process.execPath, ['--import', 'tsx', 'test/attack/schemathesis.ts']);
// Each language client's own suite (lint, type checks, unit tests), then the shared harness.
await stage('python', 'bash', ['clients/python/scripts/test.sh']);
await stage('rust', 'bash', ['clients/rust/scripts/check.sh']);
if (existsSync(join(root, 'conformance', 'run.ts'))) await stage('conformance', process.execPath, ['--import', 'tsx', 'conformance/run.ts']);
// The published 0.1.0 Rust crate (crates.io) against our host, every call, HTTP and HTTPS (compat/README.md).
await stage('compat', process.execPath, ['--import', 'tsx', 'compat/run.ts']);
await finish(0);
