/**
 * A private, empty directory tree per CLI run: `work/` (the cwd), `tmp/` (TMPDIR) and the
 * run's private settings and policy files at its root.
 *
 * The run directories live under a base whose every ancestor is writable by no one but its
 * owner (root or this user), so no one else can change the run's settings and policy files.
 * The base is the first candidate that qualifies, checked before every run; when none does,
 * the run is refused with CLI_UNAVAILABLE instead of running without its lockdown.
 */
import { lstat, mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { homedir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { DriverError } from '../../protocol/errors.js';

export interface RunWorkspace {
  root: string;
  workDir: string;
  tmpDir: string;
  remove(): Promise<void>;
}

/** The run directory and every ancestor must be owned by root or this process's user and writable by no one else. */
export interface WorkspaceOptions {
  /** The product, for the refusal message. */
  product: string;
  /** Candidate bases in order of preference; defaults to {@link defaultRunBases}. */
  bases?: string[];
}

const RUN_PREFIX = 'run-';

/** `$XDG_RUNTIME_DIR/agenticdriver`, then `~/.cache/agenticdriver/cli-runs` for HOME and for the passwd home. */
export function defaultRunBases(env: NodeJS.ProcessEnv = process.env): string[] {
  const bases: string[] = [];
  if (env.XDG_RUNTIME_DIR) bases.push(join(env.XDG_RUNTIME_DIR, 'agenticdriver'));
  const cache = (home: string) => join(home, '.cache', 'agenticdriver', 'cli-runs');
  bases.push(cache(homedir()));
  try {
    bases.push(cache(userInfo().homedir));
  } catch {
    // No passwd entry for this uid (some containers): HOME is all there is.
  }
  return [...new Set(bases)];
}

const uid = () => process.getuid?.() ?? 0;

/** Why `path` (an existing directory or file) fails the rule, or undefined when it passes. */
async function flaw(path: string): Promise<string | undefined> {
  const stats = await lstat(path);
  if (![0, uid()].includes(stats.uid)) return `${path} is owned by uid ${stats.uid}, not root or uid ${uid()}`;
  if ((stats.mode & 0o022) !== 0) return `${path} is writable by group or others (mode ${(stats.mode & 0o7777).toString(8)})`;
  return undefined;
}

/** Why `path` or one of its ancestors fails the rule; symbolic links are resolved first. */
export async function chainFlaw(path: string): Promise<string | undefined> {
  let current = await realpath(path);
  for (;;) {
    const problem = await flaw(current);
    if (problem) return problem;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** The deepest existing directory on the way to `path`. */
async function existingAncestor(path: string): Promise<string> {
  let current = path;
  for (;;) {
    try {
      await lstat(current);
      return current;
    } catch {
      const parent = dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}

/** Creates `base` (0700) if the existing part of its path qualifies, and returns why it does not otherwise. */
async function prepareBase(base: string): Promise<string | undefined> {
  try {
    const before = await chainFlaw(await existingAncestor(base));
    if (before) return before;
    await mkdir(base, { recursive: true, mode: 0o700 });
    return await chainFlaw(base);
  } catch (error) {
    return `${base}: ${(error as Error).message}`;
  }
}

const swept = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Once per base and process: removes run directories left by processes that no longer exist. */
async function sweepDeadRuns(base: string): Promise<void> {
  if (swept.has(base)) return;
  swept.add(base);
  for (const name of await readdir(base).catch(() => [])) {
    const pid = Number(/^run-(\d+)-/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
      await rm(join(base, name), { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    }
  }
}

/** The first candidate base that qualifies, or a CLI_UNAVAILABLE refusal saying why none does. */
export async function chooseRunBase(options: WorkspaceOptions): Promise<string> {
  const reasons: string[] = [];
  for (const base of options.bases ?? defaultRunBases()) {
    const problem = await prepareBase(base);
    if (!problem) return base;
    reasons.push(problem);
  }
  const owners = 'owned by root or this user';
  throw new DriverError(
    'CLI_UNAVAILABLE',
    `${options.product} would ignore the run's locked-down settings: they need a folder whose every parent is ${owners} and writable by no one else, and none qualifies (${reasons.join('; ')}). ` +
      'Set XDG_RUNTIME_DIR or HOME to such a folder (not inside a world-writable one such as /tmp).',
  );
}

export async function createRunWorkspace(options: WorkspaceOptions): Promise<RunWorkspace> {
  const base = await chooseRunBase(options);
  await sweepDeadRuns(base);
  const root = await mkdtemp(join(base, `${RUN_PREFIX}${process.pid}-`));
  const remove = () => rm(root, { recursive: true, force: true, maxRetries: 3 });
  try {
    const problem = await chainFlaw(root);
    if (problem) throw new DriverError('CLI_UNAVAILABLE', `${options.product} would ignore the run's locked-down settings: ${problem}.`);
    const workDir = join(root, 'work');
    const tmpDir = join(root, 'tmp');
    await mkdir(workDir, { mode: 0o700 });
    await mkdir(tmpDir, { mode: 0o700 });
    return { root, workDir, tmpDir, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
