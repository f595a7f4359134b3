/**
 * An exclusive lock on a file, held by this process until `release()` or its death.
 *
 * Node has no `flock`; the lock is SQLite's own: the file is an empty SQLite database held in
 * an open `BEGIN EXCLUSIVE` transaction (`locking_mode = EXCLUSIVE`, no busy wait). SQLite takes
 * it with the operating system's advisory file locks (`fcntl` on POSIX, `LockFileEx` on
 * Windows), so the kernel releases it the moment the process dies — `kill -9` included — and
 * nothing stale is left to clean up. SQLite also tracks its locks per file inside the process,
 * so a second attempt from the same process is refused too.
 *
 * Never open the lock file with `fs` in this process: closing any descriptor of a file drops
 * the process's POSIX locks on it. Like SQLite itself, this needs a local file system.
 */
import { chmodSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface ExclusiveLock {
  readonly path: string;
  release(): void;
}

/** Takes the lock at once, or returns undefined when another holder (any process, this one included) has it. */
export function tryExclusiveLock(path: string): ExclusiveLock | undefined {
  const db = new Database(path, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY' || (error as { code?: string }).code === 'SQLITE_LOCKED') return undefined;
    throw error;
  }
  // chmod changes the mode without opening the file (opening and closing would drop the lock).
  chmodSync(path, 0o600);
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
