/**
 * The test PostgreSQL server: `npm test` starts one (scripts/postgres.mjs) and exports its
 * superuser URL. A single file by hand:
 *   node scripts/postgres.mjs --run node --import tsx --test test/store/engine.test.ts
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export function postgresUrl(): string {
  const url = process.env.AGENTICDRIVER_TEST_POSTGRES_URL;
  if (!url) {
    throw new Error(
      'AGENTICDRIVER_TEST_POSTGRES_URL is not set: run the tests through `npm test`, or one file with ' +
        '`node scripts/postgres.mjs --run node --import tsx --test <file>`.',
    );
  }
  return url;
}

async function asSuperuser<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  client.on('error', () => {});
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** A new empty database; drop() removes it, ending whatever connections still use it. */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `test_${randomBytes(8).toString('hex')}`;
  await asSuperuser((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresUrl());
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await asSuperuser((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Ends one backend (a connection) as the superuser, as a network cut or a restart would. */
export async function terminateBackend(pid: number): Promise<void> {
  await asSuperuser((client) => client.query('SELECT pg_terminate_backend($1)', [pid]));
}

/** One statement as the superuser, on the maintenance database. */
export async function superuserQuery(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return asSuperuser(async (client) => (await client.query(sql, params)).rows as Record<string, unknown>[]);
}
