/**
 * The one thing the SQL store needs from a database: queries with `?` placeholders, a
 * transaction, and a signal bus between host replicas. SQLite (embedded, one process) and
 * PostgreSQL (shared by replicas) each implement it; everything above it is written once.
 *
 * Conventions every engine keeps: integer columns (BIGINT) come back as JS numbers; JSON is
 * stored as TEXT; binary (BLOB / BYTEA) comes back as a Buffer; `?` never appears inside a string literal of the store's SQL.
 */
export type SqlValue = string | number | null | Uint8Array;

export interface SqlEngine {
  readonly dialect: 'sqlite' | 'postgres';
  /** The rows a statement returns (SELECT, or anything with RETURNING). */
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** Runs a statement; `changes` is the number of rows it inserted, updated or deleted. */
  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }>;
  /** Several statements separated by `;`, no parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `body` in one transaction: committed when it resolves, rolled back when it throws.
   * Statements inside must go through `tx`; signals published through `tx` are delivered
   * only after the commit, and not at all after a rollback.
   */
  transaction<T>(body: (tx: SqlEngine) => Promise<T>): Promise<T>;
  /** Delivers `payload` (≤ 7,000 bytes) to every subscriber of `channel` on every replica, this one included. */
  publish(channel: string, payload: string): Promise<void>;
  /** Calls `handler` for every payload published on `channel` from now on. */
  subscribe(channel: string, handler: (payload: string) => void): Promise<void>;
  close(): Promise<void>;
}
