/**
 * SQLite behind the SqlEngine seam: one connection, one process. better-sqlite3 is
 * synchronous, but a transaction body is async (it is written once for both engines), so
 * every statement waits its turn behind a lock: nothing from another request can land
 * inside someone else's transaction. Signals stay in this process.
 */
import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
import type { SqlEngine, SqlValue } from '../sql/engine.js';

export class SqliteEngine implements SqlEngine {
  readonly dialect = 'sqlite';
  private readonly signals = new EventEmitter().setMaxListeners(0);
  private tail: Promise<void> = Promise.resolve();
  private readonly statements = new Map<string, Database.Statement>();

  constructor(readonly db: Database.Database) {}

  all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.serialized(() => this.allNow<T>(sql, params));
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<{ changes: number }> {
    return this.serialized(() => this.runNow(sql, params));
  }

  exec(sql: string): Promise<void> {
    return this.serialized(() => void this.db.exec(sql));
  }

  transaction<T>(body: (tx: SqlEngine) => Promise<T>): Promise<T> {
    return this.serialized(async () => {
      const published: [string, string][] = [];
      const tx: SqlEngine = {
        dialect: 'sqlite',
        all: async <R>(sql: string, params: readonly SqlValue[] = []) => this.allNow<R>(sql, params),
        run: async (sql: string, params: readonly SqlValue[] = []) => this.runNow(sql, params),
        exec: async (sql: string) => void this.db.exec(sql),
        transaction: () => Promise.reject(new Error('Transactions do not nest.')),
        publish: async (channel: string, payload: string) => void published.push([channel, payload]),
        subscribe: (channel: string, handler: (payload: string) => void) => this.subscribe(channel, handler),
        close: () => Promise.reject(new Error('A transaction cannot close its engine.')),
      };
      this.prepared('BEGIN IMMEDIATE').run();
      let result: T;
      try {
        result = await body(tx);
        this.prepared('COMMIT').run();
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw error;
      }
      if (published.length > 0) this.emitAll(published);
      return result;
    });
  }

  async publish(channel: string, payload: string): Promise<void> {
    this.emitAll([[channel, payload]]);
  }

  async subscribe(channel: string, handler: (payload: string) => void): Promise<void> {
    this.signals.on(channel, handler);
  }

  async close(): Promise<void> {
    await this.serialized(() => {
      this.statements.clear();
      this.db.close();
    });
    this.signals.removeAllListeners();
  }

  /** Handlers run after the current turn, as they would for a signal from another replica. */
  private emitAll(signals: [channel: string, payload: string][]): void {
    setImmediate(() => {
      for (const [channel, payload] of signals) this.signals.emit(channel, payload);
    });
  }

  private serialized<T>(work: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private allNow<T>(sql: string, params: readonly SqlValue[]): T[] {
    return this.prepared(sql).all(...params) as T[];
  }

  private runNow(sql: string, params: readonly SqlValue[]): { changes: number } {
    const statement = this.prepared(sql);
    if (statement.reader) return { changes: statement.all(...params).length };
    return { changes: statement.run(...params).changes };
  }
}
