/** The store engines every store test runs on, and a fresh store of each for one host. */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore, SQLITE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import type { StateStore } from '../../src/store/store.js';
import { tempDir } from './temp.js';

export const ENGINES = ['sqlite'] as const;
export type Engine = (typeof ENGINES)[number];

export async function openTestStore(engine: Engine): Promise<StateStore> {
  switch (engine) {
    case 'sqlite':
      return openSqliteStore(tempDir('agenticdriver-store-'));
  }
}

/** What a host process's config needs to use `engine`, and a way to read its usage records after it stops. */
export async function stateConfig(
  engine: Engine,
  dir: string,
): Promise<{ config: Record<string, unknown>; env: Record<string, string>; usage(): Promise<Record<string, number>>; cleanup(): Promise<void> }> {
  switch (engine) {
    case 'sqlite': {
      const directory = join(dir, 'state');
      return {
        config: { directory },
        env: {},
        usage: async () => {
          const db = new Database(join(directory, SQLITE_FILE), { readonly: true });
          try {
            return countByStatus(db.prepare('SELECT status, COUNT(*) AS count FROM usage_records GROUP BY status').all() as { status: string; count: number }[]);
          } finally {
            db.close();
          }
        },
        cleanup: async () => undefined,
      };
    }
  }
}

function countByStatus(rows: { status: string; count: number | string }[]): Record<string, number> {
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}
