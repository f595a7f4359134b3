/** The store engines every store test runs on, and a fresh store of each for one host. */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqlStateStore } from '../../src/store/sql/sql-store.js';
import { openSqliteEngine, openSqliteStore, SQLITE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import type { StateStore } from '../../src/store/store.js';
import pg from 'pg';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import { freshDatabase, superuserQuery } from './postgres.js';
import { tempDir } from './temp.js';

export const ENGINES = ['sqlite', 'postgres'] as const;
export type Engine = (typeof ENGINES)[number];

export async function openTestStore(engine: Engine): Promise<StateStore> {
  switch (engine) {
    case 'sqlite':
      return openSqliteStore(tempDir('agenticdriver-store-'));
    case 'postgres': {
      const database = await freshDatabase();
      return dropOnClose(await SqlStateStore.open(await PostgresEngine.connect(database.url)), database.drop);
    }
  }
}

/** A store on an existing PostgreSQL database (one replica of several). */
export async function openPostgresStore(url: string): Promise<StateStore> {
  return SqlStateStore.open(await PostgresEngine.connect(url));
}

function dropOnClose<T extends StateStore>(store: T, drop: () => Promise<void>): T {
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await drop();
  };
  return store;
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
    case 'postgres': {
      const database = await freshDatabase();
      return {
        config: { engine: 'postgres', urlRef: { env: 'AD_TEST_POSTGRES_URL' } },
        env: { AD_TEST_POSTGRES_URL: database.url },
        usage: async () => {
          const client = new pg.Client({ connectionString: database.url });
          await client.connect();
          try {
            return countByStatus((await client.query('SELECT status, COUNT(*) AS count FROM usage_records GROUP BY status')).rows as { status: string; count: string }[]);
          } finally {
            await client.end();
          }
        },
        cleanup: database.drop,
      };
    }
  }
}

function countByStatus(rows: { status: string; count: number | string }[]): Record<string, number> {
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}

export type StoreFailure = 'writes-refused' | 'down';

/** A store whose database the test can break, and a fresh store on the same data afterwards. */
export async function openBreakableStore(engine: Engine): Promise<{ store: StateStore; fail(how: StoreFailure): Promise<void>; recover(): Promise<StateStore> }> {
  switch (engine) {
    case 'sqlite': {
      const directory = tempDir('agenticdriver-store-');
      const sqlite = openSqliteEngine(join(directory, SQLITE_FILE));
      const store = await SqlStateStore.open(sqlite);
      return {
        store,
        fail: async (how) => {
          if (how === 'writes-refused') sqlite.db.pragma('query_only = ON');
          else sqlite.db.close();
        },
        recover: () => openSqliteStore(directory),
      };
    }
    case 'postgres': {
      const database = await freshDatabase();
      const store = dropOnClose(await SqlStateStore.open(await PostgresEngine.connect(database.url)), async () => undefined);
      const cutConnections = () => superuserQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database.name]);
      return {
        store,
        fail: async (how) => {
          if (how === 'writes-refused') await superuserQuery(`ALTER DATABASE ${database.name} SET default_transaction_read_only = on`);
          else await superuserQuery(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS false`);
          await cutConnections();
        },
        recover: async () => {
          await superuserQuery(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`);
          await superuserQuery(`ALTER DATABASE ${database.name} RESET default_transaction_read_only`);
          return dropOnClose(await SqlStateStore.open(await PostgresEngine.connect(database.url)), database.drop);
        },
      };
    }
  }
}

/** State several stores open in turn (SQLite: one at a time, a restart) or at once (PostgreSQL: replicas). */
export async function sharedState(engine: Engine): Promise<{ open(): Promise<StateStore> }> {
  switch (engine) {
    case 'sqlite': {
      const directory = tempDir('agenticdriver-store-');
      return { open: () => openSqliteStore(directory) };
    }
    case 'postgres': {
      const database = await freshDatabase();
      let open = 0;
      return {
        open: async () => {
          open += 1;
          // The last store closed drops the database.
          return dropOnClose(await openPostgresStore(database.url), async () => {
            open -= 1;
            if (open === 0) await database.drop();
          });
        },
      };
    }
  }
}
