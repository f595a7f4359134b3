#!/usr/bin/env node
// The packages as an application gets them (issue 26), each step named when it fails:
//
//   node scripts/packages.mjs npm    npm pack; the tarball installed into a new project, its
//                                    types checked there, its bin run (npx, and a global
//                                    install), a host served from it and used by the client
//                                    and the runtime imported from it
//   node scripts/packages.mjs rust   cargo package (verified: the packaged crate is built on
//                                    its own); the README's first example compiled against the
//                                    packaged crate with the README's dependency lines
//   node scripts/packages.mjs go     the README's program built in a new module that uses the
//                                    client through a `replace` directive, as the README says
//
// The Python wheel and sdist are built, checked (twine) and installed by the Python suite
// (clients/python/tests/test_packaging.py).
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'agenticdriver-packages-'));
const cleanups = [() => rmSync(work, { recursive: true, force: true })];

class StepFailure extends Error {}

/** Runs one named step; a failure says which step, and why. */
async function step(name, body) {
  console.log(`--- ${name}`);
  const started = Date.now();
  try {
    const value = await body();
    console.log(`    passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return value;
  } catch (error) {
    throw new StepFailure(`step "${name}" failed: ${error.message}`);
  }
}

/** Runs a command to completion; throws with its exit status and the end of its output. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-40).join('\n');
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal ?? result.error?.message}\n${output}`);
  }
  return result.stdout;
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

/** The fenced blocks of `language` in a Markdown file, in order. */
function codeBlocks(file, language) {
  return [...readFileSync(file, 'utf8').matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1]);
}

// --- npm -----------------------------------------------------------------------------------

const APP = `
import { AgenticClient } from 'agenticdriver/client';
import { AgenticDriver, MockProvider } from 'agenticdriver';

const [url, token] = process.argv.slice(2);
const client = new AgenticClient({ url, token });
let streamed = '';
for await (const event of client.stream({ provider: 'mock', model: 'demo', input: 'Hello' })) {
  if (event.type === 'text.delta') streamed += event.text;
  if (event.type === 'run.failed') throw new Error(event.error.code);
}
const driver = new AgenticDriver({ providers: [new MockProvider({ models: ['demo'] })] });
const embedded = await driver.run({ provider: 'mock', model: 'demo', input: 'Hello' });
console.log(JSON.stringify({ streamed, embedded: embedded.text }));
`;

const TYPED_APP = `
import { AgenticClient, DriverError, type RunRequest, type RunResult } from 'agenticdriver/client';
import { AgenticDriver } from 'agenticdriver';
import { startHost } from 'agenticdriver/host';
import { WIRE_VERSION } from 'agenticdriver/protocol';

const request: RunRequest = { provider: 'mock', model: 'demo', input: 'Hello' };
export async function demo(client: AgenticClient): Promise<RunResult | string> {
  try {
    return await client.run(request);
  } catch (error) {
    return error instanceof DriverError ? error.code : 'unknown';
  }
}
export const parts: [typeof AgenticDriver, typeof startHost, '1.0'] = [AgenticDriver, startHost, WIRE_VERSION];
`;

async function npmPackage() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const packed = await step('npm pack', () => {
    const [report] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root }));
    const files = report.files.map((file) => file.path);
    for (const needed of ['package.json', 'README.md', 'dist/cli/main.js', 'dist/index.js', 'dist/index.d.ts', 'dist/client/index.d.ts', 'dist/host/index.js', 'dist/console/app.js', 'protocol/openapi.json', 'protocol/validators/wire.js', 'protocol/validators/host-config.js', 'protocol/rules.json']) {
      expect(files.includes(needed), `the package lacks ${needed}`);
    }
    const stray = files.filter((file) => /^(src|test|scripts|clients|conformance|bench|node_modules)\//.test(file) || /(^|\/)\./.test(file));
    expect(stray.length === 0, `the package carries files it should not: ${stray.slice(0, 10).join(', ')}`);
    console.log(`${report.filename}: ${files.length} files, ${(report.size / 1024).toFixed(0)} kB packed`);
    return join(work, report.filename);
  });

  const app = join(work, 'app');
  await step('install the tarball into a new project', () => {
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
    // Without install scripts: better-sqlite3 would compile its native addon for minutes (its
    // prebuilt binaries come from GitHub); the repository's own build of the same version for
    // the same Node is copied in instead.
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline', packed], { cwd: app });
    const addon = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    const version = (dir) => JSON.parse(readFileSync(join(dir, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')).version;
    expect(version(app) === version(root), `the package installed better-sqlite3 ${version(app)}, the repository has ${version(root)}`);
    mkdirSync(dirname(join(app, addon)), { recursive: true });
    copyFileSync(join(root, addon), join(app, addon));
  });

  await step('types and exports (tsc in the project)', () => {
    writeFileSync(join(app, 'typed.ts'), TYPED_APP);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, typeRoots: [join(root, 'node_modules', '@types')], types: ['node'] }, files: ['typed.ts'] }),
    );
    run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { cwd: app });
  });

  await step('the bin through npx', () => {
    const version = run('npx', ['--no-install', 'agenticdriver', '--version'], { cwd: app }).trim();
    expect(version === pkg.version, `npx agenticdriver --version printed ${JSON.stringify(version)}, not ${pkg.version}`);
  });

  await step('a host served by the bin, used by the client and the runtime from the package', async () => {
    const home = join(work, 'home');
    mkdirSync(home);
    const configPath = join(home, 'agenticdriver', 'config.json');
    const env = { ...process.env, HOME: home, AGENTICDRIVER_CONFIG: '' };
    const host = spawn(join(app, 'node_modules', '.bin', 'agenticdriver'), ['serve', '--config', configPath, '--init', '--json', '--port', '0'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.unshift(() => host.kill('SIGKILL'));
    let errors = '';
    host.stderr.setEncoding('utf8').on('data', (chunk) => (errors = (errors + chunk).slice(-4000)));
    const line = await new Promise((resolveLine, reject) => {
      createInterface({ input: host.stdout }).once('line', resolveLine);
      host.once('exit', (code) => reject(new Error(`agenticdriver serve exited (${code}) before listening:\n${errors}`)));
    });
    const { url } = JSON.parse(line);
    const config = JSON.parse(readFileSync(configPath, 'utf8'));
    const tokenRef = config.tokens.find((token) => token.providers?.includes('mock') && token.tokenRef.file).tokenRef;
    const token = readFileSync(resolve(dirname(configPath), tokenRef.file), 'utf8').trim();
    writeFileSync(join(app, 'app.mjs'), APP);
    const answer = JSON.parse(run(process.execPath, ['app.mjs', url, token], { cwd: app }));
    expect(answer.streamed.length > 0 && answer.embedded.length > 0, `the client or the runtime got no text: ${JSON.stringify(answer)}`);
    host.kill('SIGTERM');
    await new Promise((resolveExit) => (host.exitCode !== null ? resolveExit() : host.once('exit', resolveExit)));
  });

  await step('a global install (npm install -g) puts agenticdriver on PATH', () => {
    const prefix = join(work, 'global');
    run('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline', packed], { cwd: work });
    const version = run('agenticdriver', ['--version'], { env: { ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH}` } }).trim();
    expect(version === pkg.version, `agenticdriver --version printed ${JSON.stringify(version)}`);
  });
}

// --- rust ----------------------------------------------------------------------------------

async function rustCrate() {
  const crate = join(root, 'clients', 'rust');
  // One target folder with the Rust client's own checks (clients/rust/scripts/check.sh).
  const env = { ...process.env, CARGO_TARGET_DIR: join(crate, 'target') };
  const manifest = readFileSync(join(crate, 'Cargo.toml'), 'utf8');
  const version = /^version = "([^"]+)"/m.exec(manifest)[1];
  const unpacked = join(crate, 'target', 'package', `agenticdriver-${version}`);

  await step('cargo package (builds the packaged crate on its own)', () => {
    const files = run('cargo', ['package', '--list', '--locked', '--allow-dirty'], { cwd: crate, env }).trim().split('\n');
    for (const needed of ['Cargo.toml', 'Cargo.lock', 'README.md', 'src/lib.rs']) expect(files.includes(needed), `the crate lacks ${needed}`);
    expect(!files.some((file) => file.startsWith('tests/') || file.startsWith('target/')), 'the crate carries tests/ or target/');
    // --allow-dirty: what is checked is the crate's content, whatever the working tree's git state.
    run('cargo', ['package', '--locked', '--allow-dirty', '--quiet'], { cwd: crate, env });
    console.log(`agenticdriver-${version}.crate: ${files.length} files`);
  });

  await step("the README's first example, with the README's dependency lines, against the packaged crate", () => {
    const readme = join(crate, 'README.md');
    const [toml] = codeBlocks(readme, 'toml');
    const [example] = codeBlocks(readme, 'rust');
    const dependencies = toml
      .split('\n')
      .filter((line) => /^[a-z_-]+\s*=/.test(line))
      .map((line) => (line.startsWith('agenticdriver') ? `agenticdriver = { path = ${JSON.stringify(unpacked)} }` : line));
    expect(dependencies.some((line) => line.startsWith('agenticdriver')), "the README's toml block has no agenticdriver line");
    const project = join(work, 'rust-app');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'Cargo.toml'), `[package]\nname = "readme-example"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[dependencies]\n${dependencies.join('\n')}\n`);
    copyFileSync(join(crate, 'Cargo.lock'), join(project, 'Cargo.lock'));
    writeFileSync(join(project, 'src', 'main.rs'), `#![allow(dead_code)]\n${example}\n#[tokio::main]\nasync fn main() {}\n`);
    run('cargo', ['check', '--quiet'], { cwd: project, env });
  });
}

// --- go ------------------------------------------------------------------------------------

async function goModule() {
  const client = join(root, 'clients', 'go');
  const path = /^module (\S+)$/m.exec(readFileSync(join(client, 'go.mod'), 'utf8'))[1];
  const readme = readFileSync(join(client, 'README.md'), 'utf8');
  await step('the README names the replace directive', () => {
    expect(readme.includes(`go mod edit -replace ${path}=`), `clients/go/README.md does not show \`go mod edit -replace ${path}=...\``);
  });
  await step("the README's program in a new module, using the client by replace", () => {
    const project = join(work, 'go-app');
    mkdirSync(project);
    // Nothing may come from the module proxy: the client is the replaced folder, the rest is the standard library.
    const env = { ...process.env, GOFLAGS: '-mod=mod', GOPROXY: 'off', GOWORK: 'off' };
    run('go', ['mod', 'init', 'example.com/app'], { cwd: project, env });
    run('go', ['mod', 'edit', '-replace', `${path}=${client}`], { cwd: project, env });
    writeFileSync(join(project, 'main.go'), codeBlocks(join(client, 'README.md'), 'go')[0]);
    run('go', ['mod', 'tidy'], { cwd: project, env });
    run('go', ['vet', '.'], { cwd: project, env });
    run('go', ['build', '-o', join(project, 'app'), '.'], { cwd: project, env });
    expect(existsSync(join(project, 'app')), 'go build made no program');
  });
}

// --- main ----------------------------------------------------------------------------------

const checks = { npm: npmPackage, rust: rustCrate, go: goModule };
const which = process.argv[2];
if (!checks[which]) {
  console.error(`usage: node scripts/packages.mjs ${Object.keys(checks).join('|')}`);
  process.exit(2);
}
let status = 0;
try {
  await checks[which]();
  console.log(`${which}: the package installs and works`);
} catch (error) {
  console.error(error instanceof StepFailure ? `${which}: ${error.message}` : error);
  status = 1;
} finally {
  for (const cleanup of cleanups) cleanup();
}
process.exit(status);
