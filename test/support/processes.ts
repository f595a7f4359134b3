/**
 * Real processes for tests: the `agenticdriver` CLI as a user runs it (the build: the test
 * command builds before the suites), and host processes (`serve --json`, or a launcher printing
 * the same first line) started and awaited until they listen.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// tsx resolves from the working directory: processes run from the repository root.
export const ROOT = join(import.meta.dirname, '..', '..');
/** The built CLI (`npm run build`). */
export const CLI_MAIN = join(ROOT, 'dist', 'cli', 'main.js');

/** What scripts/build.mjs writes at the end of every build (tsc leaves an unchanged output's time alone). */
const BUILD_STAMP = join(ROOT, 'dist', '.build-inputs.json');
let buildChecked = false;

/** Refuses to test a missing or stale build: every file under src/ must be older than the last build. */
export function assertFreshBuild(): void {
  if (buildChecked) return;
  if (!existsSync(CLI_MAIN) || !existsSync(BUILD_STAMP)) throw new Error(`${CLI_MAIN} is missing: run \`npm run build\` first.`);
  const built = statSync(BUILD_STAMP).mtimeMs;
  const newest = (dir: string): number =>
    Math.max(...readdirSync(dir, { withFileTypes: true }).map((entry) => (entry.isDirectory() ? newest(join(dir, entry.name)) : statSync(join(dir, entry.name)).mtimeMs)));
  if (newest(join(ROOT, 'src')) > built) throw new Error(`${CLI_MAIN} is older than src/: run \`npm run build\` first.`);
  buildChecked = true;
}

/** The arguments of `node` running the CLI with `args` (for a test that spawns it its own way). */
export function cliCommand(args: readonly string[]): string[] {
  return nodeArgs(CLI_MAIN, args);
}

/** How node runs `script`: a TypeScript one (a test's own launcher) through tsx, the build as it is. */
function nodeArgs(script: string, rest: readonly string[]): string[] {
  if (script === CLI_MAIN) assertFreshBuild();
  return script.endsWith('.ts') ? ['--import', 'tsx', script, ...rest] : [script, ...rest];
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion with stdout and stderr piped (no config from the environment). */
export function cli(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): CliResult {
  const result = spawnSync(process.execPath, cliCommand(args), { encoding: 'utf8', input: options.input ?? '', env: { ...process.env, AGENTICDRIVER_CONFIG: '', ...options.env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the CLI to completion without blocking the test's event loop (streams it holds open keep being read). */
export function cliAsync(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  const child = spawn(process.execPath, cliCommand(args), { cwd: ROOT, env: { ...env, AGENTICDRIVER_CONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

// A pseudo-terminal from Python's standard library (the test command needs Python anyway).
const PTY = 'import os, pty, sys\nstatus = pty.spawn(sys.argv[1:])\nsys.exit(os.waitstatus_to_exitcode(status))';

/** Runs the built CLI at a terminal: stdout and stderr are one pseudo-terminal, returned as `output` (line ends normalized). */
export function terminalCli(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; output: string } {
  const result = spawnSync('python3', ['-c', PTY, process.execPath, ...cliCommand(args)], { encoding: 'utf8', env: { ...process.env, AGENTICDRIVER_CONFIG: '', ...env } });
  return { status: result.status, output: result.stdout.replaceAll('\r\n', '\n') };
}

/** The error of a failed CLI command: its last stderr line. */
export function errorOf(stderr: string): { code: string; message: string; retryable: boolean } {
  const lines = stderr.trim().split('\n');
  return (JSON.parse(lines.at(-1)!) as { error: { code: string; message: string; retryable: boolean } }).error;
}

export interface HostProcess {
  child: ChildProcess;
  url: string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * Starts `node <script> <args>` (e.g. the CLI's `serve --json`) and resolves once its first
 * stdout line, `{"url": …}`, says it listens. Recorded in `children` so the suite can kill it.
 * Its stderr goes to the test's, or to `onStderr`.
 */
export async function spawnHost([script, ...args]: [string, ...string[]], env: NodeJS.ProcessEnv, children: ChildProcess[], options: { onStderr?: (text: string) => void } = {}): Promise<HostProcess> {
  const child = spawn(process.execPath, nodeArgs(script, args), { env, cwd: ROOT, stdio: ['ignore', 'pipe', options.onStderr ? 'pipe' : 'inherit'] });
  if (options.onStderr) child.stderr!.setEncoding('utf8').on('data', options.onStderr);
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    void exited.then((code) => reject(new Error(`the host process exited (${code}) before listening`)));
  });
  return { child, url: (JSON.parse(line) as { url: string }).url, exited };
}

/** Kills whatever of `children` still runs. */
export function killAll(children: ChildProcess[]): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Stops a child with SIGTERM and resolves once it has exited (so the folder it writes can go after it). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
