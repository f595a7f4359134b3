/** Opens the store the host config names: the SQLite file in its directory, or a PostgreSQL database. */
import type { SecretRef } from '../shared/secrets.js';
import { readSecret } from '../shared/secrets.js';
import { DriverError } from '../protocol/errors.js';
import { PostgresEngine } from './postgres/postgres-engine.js';
import { SqlStateStore, type SqlStoreOptions } from './sql/sql-store.js';

/** What extensions set when the store is opened. */
export type StoreOptions = SqlStoreOptions;
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { StateStore } from './store.js';

export type StateConfig = { engine: 'sqlite'; directory: string } | { engine: 'postgres'; urlRef: SecretRef };

/**
 * How long the server lets a transaction sit idle before it ends it: the replica's lease (by then
 * the replica that left it has lost its lease), and never less than this, so that a live replica
 * with a short lease starved of CPU for a moment (a loaded machine, a long GC) keeps its transaction.
 */
export const MIN_IDLE_TRANSACTION_MS = 5_000;

/** `leaseMs`: the replica's lease, which bounds how long the server lets a stalled replica's transaction hold its locks. */
export async function openStore(state: StateConfig, configDir: string, env: NodeJS.ProcessEnv, options: SqlStoreOptions = {}, leaseMs?: number): Promise<StateStore> {
  if (state.engine === 'sqlite') return openSqliteStore(state.directory, undefined, options);
  const url = await readSecret(state.urlRef, configDir, env);
  if (!url) throw new DriverError('INVALID_CONFIG', 'The PostgreSQL URL (state.urlRef) is missing or empty.');
  let engine: PostgresEngine;
  try {
    engine = await PostgresEngine.connect(url, leaseMs === undefined ? {} : { idleTransactionTimeoutMs: Math.max(leaseMs, MIN_IDLE_TRANSACTION_MS) });
  } catch (error) {
    // The engine's messages never include the URL (it carries the password).
    throw new DriverError('OPERATION_STORE_ERROR', `The state store could not be opened: ${(error as Error).message}`, { retryable: true, cause: error });
  }
  try {
    return await SqlStateStore.open(engine, undefined, options);
  } catch (error) {
    await engine.close();
    throw error;
  }
}
