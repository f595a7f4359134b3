/** The embedded default store: one SQLite file (WAL) in the host's state directory. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEngine } from './sqlite-engine.js';
import { SqlStateStore, type SqlStoreOptions } from '../sql/sql-store.js';
import { preparePrivateDatabaseFile } from './private-file.js';

export const SQLITE_FILE = 'agenticdriver.sqlite';

export function openSqliteEngine(path: string): SqliteEngine {
  preparePrivateDatabaseFile(path);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  // A checkpoint every 10,000 log pages (~40 MB) instead of 1,000: each one stalls the event loop
  // while it copies and flushes, and pages rewritten meanwhile (the tables' hot leaves) are copied once.
  db.pragma('wal_autocheckpoint = 10000');
  return new SqliteEngine(db);
}

/** Opens (creating, owner-only) the state directory's database and brings its schema up to date. */
export async function openSqliteStore(directory: string, now?: () => number, options: SqlStoreOptions = {}): Promise<SqlStateStore> {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const engine = openSqliteEngine(join(directory, SQLITE_FILE));
  try {
    return await SqlStateStore.open(engine, now, options);
  } catch (error) {
    await engine.close();
    throw error;
  }
}
