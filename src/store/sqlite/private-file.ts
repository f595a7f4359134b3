/**
 * The database file is created owner-only (0600) before SQLite opens it. SQLite creates
 * its `-wal` and `-shm` companions with the main file's mode; companions left by an older
 * version are narrowed here too.
 */
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';

export const PRIVATE_FILE_MODE = 0o600;

export function preparePrivateDatabaseFile(path: string): void {
  if (path === ':memory:' || path === '') return;
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    if (existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
  }
}
