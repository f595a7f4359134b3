/**
 * Migrations counted per table module (`table_migrations`), on both engines: a fresh database
 * gets every module's steps; a database migrated under the former global version
 * (`schema_migrations`) continues from where each module was, keeps its data, and ends with the
 * same schema as a fresh one; a database newer than the host is refused.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import type { SqlEngine } from '../../src/store/sql/engine.js';
import { GLOBAL_VERSIONS, migrate } from '../../src/store/sql/migrate.js';
import { SqlStateStore, TABLES } from '../../src/store/sql/sql-store.js';
import { openSqliteEngine, SQLITE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import { ENGINES, type Engine } from '../support/stores.js';
import { freshDatabase } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

/** A new empty database of `engine`; `open()` connects to it (again), `drop()` removes it. */
async function emptyDatabase(engine: Engine): Promise<{ open(): Promise<SqlEngine>; drop(): Promise<void> }> {
  if (engine === 'sqlite') {
    const path = join(tempDir('agenticdriver-migrations-'), SQLITE_FILE);
    return { open: async () => openSqliteEngine(path), drop: async () => undefined };
  }
  const database = await freshDatabase();
  return { open: () => PostgresEngine.connect(database.url), drop: database.drop };
}

/** The schema as the engine describes it: every table's columns, and every index. */
async function schemaOf(engine: SqlEngine): Promise<string[]> {
  if (engine.dialect === 'sqlite') {
    const rows = await engine.all<{ sql: string | null }>("SELECT sql FROM sqlite_master WHERE name NOT IN ('table_migrations', 'schema_migrations') AND sql IS NOT NULL ORDER BY name");
    return rows.map((row) => row.sql!.replace(/\s+/g, ' '));
  }
  const columns = await engine.all<{ line: string }>(
    "SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable AS line FROM information_schema.columns WHERE table_schema = current_schema() AND table_name NOT IN ('table_migrations', 'schema_migrations') ORDER BY 1",
  );
  const indexes = await engine.all<{ line: string }>("SELECT indexdef AS line FROM pg_indexes WHERE schemaname = current_schema() AND tablename NOT IN ('table_migrations', 'schema_migrations') ORDER BY 1");
  return [...columns, ...indexes].map((row) => row.line);
}

/** Builds the database an earlier host left at global version `global`: the steps shipped up to it, in the order they shipped. */
async function legacyDatabase(engine: SqlEngine, global: number): Promise<void> {
  const shipped = GLOBAL_VERSIONS[engine.dialect];
  await engine.transaction(async (tx) => {
    for (let version = 1; version <= global; version += 1) {
      for (const module of TABLES) {
        const steps = (shipped[module.name] ?? []).flatMap((at, step) => (at === version ? [module.migrations[tx.dialect][step]!] : []));
        for (const step of steps) await tx.exec(step);
      }
    }
    await tx.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)');
    for (let version = 1; version <= global; version += 1) await tx.run('INSERT INTO schema_migrations (version) VALUES (?)', [version]);
  });
}
async function versions(engine: SqlEngine): Promise<Record<string, number>> {
  const rows = await engine.all<{ name: string; version: number }>('SELECT name, version FROM table_migrations ORDER BY name');
  return Object.fromEntries(rows.map((row) => [row.name, Number(row.version)]));
}

for (const engine of ENGINES) {
  describe(`migrations per table module (${engine})`, () => {
    const latest = Math.max(...Object.values(GLOBAL_VERSIONS[engine]).flat());

    it('a fresh database gets every step of every module, counted per module', async () => {
      const database = await emptyDatabase(engine);
      try {
        const store = await SqlStateStore.open(await database.open());
        await store.close();
        const sql = await database.open();
        try {
          const expected = Object.fromEntries(TABLES.map((module) => [module.name, module.migrations[sql.dialect].length]));
          assert.deepEqual(await versions(sql), Object.fromEntries(Object.entries(expected).sort()));
          // Opening again applies nothing (a step run twice would fail: CREATE TABLE of a table that exists).
          await migrate(sql, TABLES);
        } finally {
          await sql.close();
        }
      } finally {
        await database.drop();
      }
    });

    for (const global of [...new Set([1, 3, Math.ceil(latest / 2), latest])]) {
      it(`a database an earlier host left at global version ${global} continues from there, data and all, to today's schema`, async () => {
        const fresh = await emptyDatabase(engine);
        const legacy = await emptyDatabase(engine);
        try {
          const reference = await fresh.open();
          await migrate(reference, TABLES);
          const today = await schemaOf(reference);
          await reference.close();

          const old = await legacy.open();
          await legacyDatabase(old, global);
          const auditShipped = GLOBAL_VERSIONS[old.dialect].audit![0]!;
          if (global >= auditShipped) {
            await old.run('INSERT INTO approval_audit (at, kind, subject, approval_id, record) VALUES (?, ?, ?, ?, ?)', ['2026-01-01T00:00:00.000Z', 'approval.resolved', 'alice', 'a1', '{"kind":"approval.resolved"}']);
          }
          await old.close();

          const store = await SqlStateStore.open(await legacy.open());
          try {
            if (global >= auditShipped) assert.equal((await store.audit.read(10)).length, 1, 'the audit record written before the upgrade is still there');
          } finally {
            await store.close();
          }
          const upgraded = await legacy.open();
          try {
            assert.deepEqual(await schemaOf(upgraded), today);
            assert.deepEqual(await versions(upgraded), Object.fromEntries(TABLES.map((module) => [module.name, module.migrations[upgraded.dialect].length]).sort()));
          } finally {
            await upgraded.close();
          }
        } finally {
          await fresh.drop();
          await legacy.drop();
        }
      });
    }

    it('refuses a database whose module is newer than this host', async () => {
      const database = await emptyDatabase(engine);
      try {
        const sql = await database.open();
        try {
          await migrate(sql, TABLES);
          await sql.run('UPDATE table_migrations SET version = version + 1 WHERE name = ?', ['jobs']);
          await assert.rejects(migrate(sql, TABLES), /table jobs at version \d+, newer than this host/);
        } finally {
          await sql.close();
        }
      } finally {
        await database.drop();
      }
    });
  });
}
