/**
 * What a table module of the SQL store is given, and what it gives back: its SQL and its
 * migrations live in one file (`tables/*.ts`). Timestamps the store compares are epoch
 * milliseconds (BIGINT); records are JSON text.
 */
import type { SqlEngine } from './engine.js';

export interface TableContext {
  /** The store's engine; a database failure surfaces as a typed OPERATION_STORE_ERROR. */
  readonly engine: SqlEngine;
  /** This replica's id, the owner of what it writes (it changes when a lost lease is taken anew). */
  owner(): string;
  now(): number;
}

/**
 * A table module's migration steps per engine, oldest first. A released step never changes;
 * a new one is appended. Each module's steps are counted on their own (`table_migrations`).
 */
export type Migrations = Readonly<Record<SqlEngine['dialect'], readonly string[]>>;

export interface TableModule {
  /** Its name in `table_migrations`; never renamed once released. */
  readonly name: string;
  readonly migrations: Migrations;
}

/** A table that holds work a replica can leave open: reaped, inside one transaction, once its owner is gone. */
export interface Reaped {
  /** Closes what owners without a live lease left open (interrupted / uncertain); returns how many. */
  reap(tx: SqlEngine, now: number): Promise<number>;
}
