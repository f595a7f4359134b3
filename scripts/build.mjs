#!/usr/bin/env node
// `npm run build` (also run by `npm start`, `npm test` and `npm pack`): compiles src/ into
// dist/ and bundles the operator console into dist/console, each only when its inputs changed
// since the last build. Inputs are compared by content, so a `git pull` (or a branch switch)
// rebuilds exactly what it changed, and outputs of deleted sources are removed.
//
//   node scripts/build.mjs [--out DIR] [--force]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const root = join(import.meta.dirname, '..');
const { values: options } = parseArgs({ options: { out: { type: 'string' }, force: { type: 'boolean' } } });
const out = options.out ?? join(root, 'dist');
const stampFile = join(out, '.build-inputs.json');
const SOURCE = /\.(ts|tsx|mts|cts)$/;

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path) : [path];
  });
}

/** One hash over the paths and contents of `paths` (a missing file counts as missing). */
function digest(paths) {
  const hash = createHash('sha256');
  for (const path of [...paths].sort()) {
    hash.update(`${relative(root, path)}\0`);
    hash.update(existsSync(path) ? readFileSync(path) : '<missing>');
    hash.update('\0');
  }
  return hash.digest('hex');
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return {};
  }
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/**
 * After a `git pull` that changed package-lock.json, node_modules is stale until `npm install`:
 * say so plainly rather than fail later on a missing or mismatched module.
 */
function checkInstalled() {
  let wanted;
  let installed;
  try {
    wanted = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages;
    installed = JSON.parse(readFileSync(join(root, 'node_modules', '.package-lock.json'), 'utf8')).packages;
  } catch {
    return; // no lockfile or installed by something other than npm: nothing to compare
  }
  const stale = Object.entries(wanted)
    .filter(([path, entry]) => path.startsWith('node_modules/') && (installed[path] ? installed[path].version !== entry.version : !entry.optional))
    .map(([path, entry]) => `${path.slice('node_modules/'.length)}@${entry.version}`);
  if (stale.length > 0) {
    console.error(`The installed dependencies do not match package-lock.json (${stale.slice(0, 5).join(', ')}${stale.length > 5 ? `, and ${stale.length - 5} more` : ''}): run npm install.`);
    process.exit(1);
  }
}

checkInstalled();
const stamp = options.force ? {} : readStamp();
const next = { ...stamp };

// TypeScript: every source, the compiler settings and the dependencies (their types).
const sources = files(join(root, 'src')).filter((path) => SOURCE.test(path));
// What the build did goes to stderr: stdout stays clean for `npm pack --json`, whose prepack this is.
const say = (line) => process.stderr.write(`${line}\n`);
const tsInputs = digest([...sources, join(root, 'tsconfig.json'), join(root, 'tsconfig.build.json'), join(root, 'package-lock.json')]);
const outputOf = (source) => join(out, relative(join(root, 'src'), source).replace(SOURCE, '.js'));
const outputsPresent = sources.every((source) => source.endsWith('.d.ts') || existsSync(outputOf(source)));
if (stamp.typescript === tsInputs && outputsPresent) {
  say('typescript: up to date');
} else {
  const buildInfo = join(out, '.tsbuildinfo');
  // tsc's incremental state trusts that its outputs are still there: when some are not, start over.
  if (!outputsPresent) rmSync(buildInfo, { force: true });
  run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out, '--incremental', '--tsBuildInfoFile', buildInfo]);
  next.typescript = tsInputs;
  say('typescript: compiled');
}
const removed = removeStaleOutputs();
if (removed > 0) say(`typescript: removed ${removed} outputs of deleted sources`);

// The console bundle: every file under console/, the files esbuild read last time (recorded
// by scripts/build-console.ts: the app's imports, Preact), the build script and the lockfile.
const consoleOut = join(out, 'console');
const consoleInputs = (recorded) =>
  digest(new Set([...files(join(root, 'console')), ...recorded.map((path) => join(root, path)), join(root, 'scripts', 'build-console.ts'), join(root, 'package-lock.json')]));
if (stamp.console && stamp.console.digest === consoleInputs(stamp.console.files) && existsSync(join(consoleOut, 'app.js'))) {
  say('console: up to date');
} else {
  const recordFile = join(out, '.console-inputs.json');
  run(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'build-console.ts'), consoleOut, recordFile]);
  const recorded = JSON.parse(readFileSync(recordFile, 'utf8'));
  rmSync(recordFile);
  next.console = { files: recorded, digest: consoleInputs(recorded) };
  say('console: bundled');
}

writeFileSync(stampFile, `${JSON.stringify(next, null, 2)}\n`);

/** Removes what tsc emitted for sources that no longer exist (tsc never deletes outputs); returns how many. */
function removeStaleOutputs() {
  let removed = 0;
  for (const path of files(out)) {
    const name = relative(out, path);
    if (name.startsWith('console/') || name.startsWith('.')) continue;
    const base = join(root, 'src', name.replace(/(\.d)?\.(js|ts)(\.map)?$/, ''));
    if (![`${base}.ts`, `${base}.tsx`, `${base}.mts`, `${base}.cts`].some(existsSync)) {
      rmSync(path);
      removed += 1;
      for (let dir = dirname(path); dir !== out && readdirSync(dir).length === 0; dir = dirname(dir)) rmdirSync(dir);
    }
  }
  return removed;
}
