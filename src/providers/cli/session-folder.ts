/**
 * The private folder of one conversation session on this machine: the CLI's own saved
 * conversation for a native-mode session, under the same locked-down base as the run
 * workspaces (0700, every ancestor owner- or root-only writable). Unlike a run workspace it
 * outlives its runs: it is removed when the session is deleted here, and swept from the base
 * once the session has been idle longer than its retention (deleted or expired elsewhere).
 *
 * Layout: `session-<id>/` with `work/` (the turns' cwd, stable so the CLI finds its
 * conversation), `tmp/`, `home/` (the CLI's private home) and `state.json`.
 */
import { lstat, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DriverError } from '../../protocol/errors.js';
import { chainFlaw, chooseRunBase, type RunWorkspace, type WorkspaceOptions } from './workspace.js';

const PREFIX = 'session-';
const STATE_FILE = 'state.json';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Past its retention a folder is kept this much longer, for a turn that runs long on another process. */
const SWEEP_GRACE_MS = 600_000;
const SWEEP_EVERY_MS = 60_000;

export interface SessionFolder extends RunWorkspace {
  /** The CLI's private home for the session's turns. */
  home: string;
  /** The CLI conversation this folder holds, if a turn completed in it. */
  nativeId: string | undefined;
  /** Records the CLI conversation after a completed turn (and restarts the idle clock). */
  record(nativeId: string): Promise<void>;
  /** Empties the folder for a new CLI conversation. */
  reset(): Promise<void>;
}

interface FolderState {
  nativeId: string | null;
  usedAt: number;
  retentionMs: number;
}

const folderName = (sessionId: string) => {
  if (!UUID.test(sessionId)) throw new DriverError('INVALID_REQUEST', 'A session id must be a UUID.');
  return `${PREFIX}${sessionId.toLowerCase()}`;
};

async function readState(root: string): Promise<FolderState | undefined> {
  try {
    const state = JSON.parse(await readFile(join(root, STATE_FILE), 'utf8')) as Partial<FolderState>;
    if (typeof state.usedAt !== 'number' || typeof state.retentionMs !== 'number') return undefined;
    return { nativeId: typeof state.nativeId === 'string' ? state.nativeId : null, usedAt: state.usedAt, retentionMs: state.retentionMs };
  } catch {
    return undefined;
  }
}

const writeState = (root: string, state: FolderState) => writeFile(join(root, STATE_FILE), JSON.stringify(state), { mode: 0o600 });

/** Opens (creating it if needed) the session's folder; `active` are sessions with a turn in this process (never swept). */
export async function openSessionFolder(options: WorkspaceOptions, sessionId: string, retentionMs: number, active: ReadonlySet<string>): Promise<SessionFolder> {
  const name = folderName(sessionId);
  const base = await chooseRunBase(options);
  await sweepSessionFolders(base, active);
  const root = join(base, name);
  await mkdir(root, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const problem = await chainFlaw(root);
  if (problem) throw new DriverError('CLI_UNAVAILABLE', `${options.product} would ignore the session's locked-down files: ${problem}.`);
  const workDir = join(root, 'work');
  const tmpDir = join(root, 'tmp');
  const home = join(root, 'home');
  const makeDirs = async () => {
    for (const dir of [workDir, tmpDir, home]) await mkdir(dir, { recursive: true, mode: 0o700 });
  };
  await makeDirs();
  const previous = await readState(root);
  const folder: SessionFolder = {
    root,
    workDir,
    tmpDir,
    home,
    nativeId: previous?.nativeId ?? undefined,
    // The folder outlives the run: only the session's deletion or the sweep removes it.
    remove: async () => undefined,
    async record(nativeId) {
      folder.nativeId = nativeId;
      await writeState(root, { nativeId, usedAt: Date.now(), retentionMs });
    },
    async reset() {
      folder.nativeId = undefined;
      for (const entry of await readdir(root)) await rm(join(root, entry), { recursive: true, force: true, maxRetries: 3 });
      await makeDirs();
      await writeState(root, { nativeId: null, usedAt: Date.now(), retentionMs });
    },
  };
  await writeState(root, { nativeId: previous?.nativeId ?? null, usedAt: Date.now(), retentionMs });
  return folder;
}

/** Removes the session's folder from the base (a no-op when there is none). */
export async function removeSessionFolder(options: WorkspaceOptions, sessionId: string): Promise<void> {
  const name = folderName(sessionId);
  const base = await chooseRunBase(options);
  await rm(join(base, name), { recursive: true, force: true, maxRetries: 3 });
}

const lastSweep = new Map<string, number>();

/** At most once a minute per base: removes session folders idle past their retention (and a grace). */
export async function sweepSessionFolders(base: string, active: ReadonlySet<string>, now = Date.now()): Promise<void> {
  if (now - (lastSweep.get(base) ?? -Infinity) < SWEEP_EVERY_MS) return;
  lastSweep.set(base, now);
  for (const entry of await readdir(base).catch(() => [])) {
    if (!entry.startsWith(PREFIX) || active.has(entry.slice(PREFIX.length))) continue;
    const state = await readState(join(base, entry));
    // A folder without a readable state (its turn never got going): its own age decides.
    const idleSince = state?.usedAt ?? (await lstat(join(base, entry)).then((stats) => stats.mtimeMs, () => now));
    const retention = state?.retentionMs ?? 0;
    if (now - idleSince > retention + SWEEP_GRACE_MS) await rm(join(base, entry), { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
}

/** For tests: the next open sweeps again. */
export function resetSessionSweepClock(): void {
  lastSweep.clear();
}

/**
 * Links the named entries of the account directory (sign-in, settings) into a session's
 * private home, so the CLI signs in as usual while everything else it writes stays private.
 */
export async function linkFromAccount(account: string, home: string, names: readonly string[]): Promise<void> {
  await mkdir(home, { recursive: true, mode: 0o700 });
  for (const name of names) {
    const target = join(account, name);
    if (!(await lstat(target).then(() => true, () => false))) continue;
    await symlink(target, join(home, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}
