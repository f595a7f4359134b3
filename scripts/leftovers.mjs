// What the test run left behind. The stages run with folders of the run's own — a private
// TMPDIR and a private XDG_RUNTIME_DIR, where the product puts CLI run directories — so all
// that is found there is theirs. The shared places (the system temp dir's top level and
// ~/.cache/agenticdriver) are compared before and after; there, run directories of processes
// still alive (another host or test run on the machine) are not leftovers.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';

// The empty folders the product keeps for its run directories: made once, by design.
const KEPT = [/\/\.cache\/agenticdriver$/, /\/\.cache\/agenticdriver\/cli-runs$/];
// A CLI run directory names the process that made it (src/providers/cli/workspace.ts).
const RUN_DIRECTORY = /\/\.cache\/agenticdriver\/cli-runs\/run-(\d+)-[^/]+/;

function entries(dir, recursive) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return recursive && entry.isDirectory() ? [path, ...entries(path, true)] : [path];
  });
}

const isCache = (dir) => dir.endsWith('/.cache/agenticdriver');

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Paths present now under each shared folder (the temp dir only at its top level). */
export function snapshot(dirs) {
  return new Set(dirs.flatMap((dir) => (isCache(dir) ? [dir, ...entries(dir, true)] : entries(dir, false))));
}

/**
 * The product keeps CLI run directories only under a folder that it and every ancestor are
 * owned by root or this user and writable by no one else (src/providers/cli/workspace.ts).
 */
function qualifiesForRuns(path) {
  const uid = process.getuid?.() ?? 0;
  for (let current = realpathSync(path); ; current = dirname(current)) {
    const stats = lstatSync(current);
    if (![0, uid].includes(stats.uid) || (stats.mode & 0o022) !== 0) return false;
    if (dirname(current) === current) return true;
  }
}

/**
 * A new private folder for the run's XDG_RUNTIME_DIR, so that the CLI run directories of the
 * tests are the run's own: in the private temp dir when that qualifies (a private TMPDIR),
 * else in the user's ~/.cache; undefined when neither does (the product then refuses CLI runs).
 */
export function privateRunBase(privateTmp) {
  const cache = join(userInfo().homedir, '.cache');
  for (const parent of [privateTmp, cache]) {
    try {
      if (parent === cache) mkdirSync(cache, { recursive: true, mode: 0o700 });
      if (qualifiesForRuns(parent)) return mkdtempSync(join(parent, 'agenticdriver-test-runtime-'));
    } catch {
      // Not usable: try the next.
    }
  }
  return undefined;
}

/**
 * Folders the real agent CLIs make at fixed paths in the system temp dir, whatever TMPDIR they
 * are given: Codex's sandbox helper (`codex-linux-sandbox`, used by the native-tool runs) makes
 * `/tmp/codex-daemon-<uid>` for itself. Made during the run, they are the run's: removed at its
 * end, when no CLI of the run is left.
 */
export function removeCliFolders(before, systemTmp) {
  const uid = process.getuid?.() ?? 0;
  for (const path of [join(systemTmp, `codex-daemon-${uid}`)]) {
    if (!before.has(path)) rmSync(path, { recursive: true, force: true });
  }
}

/**
 * `ours`: whatever is in the run's private temp dir (top level) and XDG_RUNTIME_DIR (besides
 * the run-directory base the product keeps there); `shared`: new entries in the shared
 * folders since `before`.
 */
export function leftovers(before, sharedDirs, { tmp, runBase }) {
  const ours = [
    ...entries(tmp, false).filter((path) => path !== runBase),
    ...(runBase ? entries(runBase, true).filter((path) => path !== join(runBase, 'agenticdriver')) : []),
  ];
  const shared = [...snapshot(sharedDirs)].filter((path) => {
    if (path === tmp || path === runBase || before.has(path) || KEPT.some((kept) => kept.test(path))) return false;
    const run = RUN_DIRECTORY.exec(path);
    return !(run && alive(Number(run[1])));
  });
  return { ours: ours.sort(), shared: shared.sort() };
}
