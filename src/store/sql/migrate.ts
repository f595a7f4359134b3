/**
 * Brings the schema up to date: each table module's steps that are missing, counted per module
 * in `table_migrations`, in one transaction. On PostgreSQL an advisory lock keeps replicas that
 * start together from migrating twice.
 */
import { DriverError } from '../../protocol/errors.js';
import type { SqlEngine } from './engine.js';
import type { TableModule } from './table.js';

/**
 * Before the steps were counted per module, one global version (`schema_migrations`) counted
 * them all. For each engine, the global version at which each module's steps shipped, in order:
 * a database at global version G has applied exactly the steps listed at G or below.
 * Frozen at the last global version main shipped: new steps are counted per module only.
 */
export const GLOBAL_VERSIONS: Record<SqlEngine['dialect'], Record<string, number[]>> = {
  sqlite: { replicas: [4], usage: [1, 3, 4, 9], audit: [2], approvals: [3, 4], tickets: [4], operations: [4], jobs: [5], sessions: [6, 7], retrieval: [8, 10, 11, 12, 13] },
  postgres: { replicas: [1], usage: [1, 6], audit: [1], approvals: [1], tickets: [1], operations: [1], jobs: [2], sessions: [3, 4], retrieval: [5, 7, 8, 9] },
};

export async function migrate(engine: SqlEngine, modules: readonly TableModule[]): Promise<void> {
  const names = new Set<string>();
  for (const module of modules) {
    if (names.has(module.name)) throw new Error(`Two table modules are named ${module.name}.`);
    names.add(module.name);
  }
  await engine.transaction(async (tx) => {
    if (tx.dialect === 'postgres') await tx.all('SELECT pg_advisory_xact_lock(7433)');
    // Under the lock: two replicas creating the table at once would collide even with IF NOT EXISTS.
    await tx.exec('CREATE TABLE IF NOT EXISTS table_migrations (name TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    const recorded = new Map((await tx.all<{ name: string; version: number }>('SELECT name, version FROM table_migrations')).map((row) => [row.name, Number(row.version)]));
    const applied = recorded.size > 0 ? recorded : await fromGlobalVersion(tx);
    for (const module of modules) {
      const steps = module.migrations[tx.dialect];
      const from = applied.get(module.name) ?? 0;
      if (from > steps.length) throw new DriverError('OPERATION_STORE_ERROR', `The database has table ${module.name} at version ${from}, newer than this host (${steps.length}).`);
      for (const step of steps.slice(from)) await tx.exec(step);
      if (recorded.get(module.name) === steps.length) continue;
      await tx.run('DELETE FROM table_migrations WHERE name = ?', [module.name]);
      await tx.run('INSERT INTO table_migrations (name, version) VALUES (?, ?)', [module.name, steps.length]);
    }
  });
}

/** A database migrated under the global version: how far each module got. */
async function fromGlobalVersion(tx: SqlEngine): Promise<Map<string, number>> {
  const exists =
    tx.dialect === 'sqlite'
      ? "SELECT COUNT(*) AS found FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
      : "SELECT COUNT(*) AS found FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations'";
  const [table] = await tx.all<{ found: number }>(exists);
  const applied = new Map<string, number>();
  if (Number(table?.found ?? 0) === 0) return applied;
  const [row] = await tx.all<{ version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations');
  const global = Number(row?.version ?? 0);
  for (const [name, versions] of Object.entries(GLOBAL_VERSIONS[tx.dialect])) applied.set(name, versions.filter((version) => version <= global).length);
  return applied;
}
