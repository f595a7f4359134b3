/** The embedded default store: one SQLite file in the host's state directory. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AuditRecord } from '../../extensions/audit.js';
import type { UsageRecord } from '../../runtime/usage-record.js';
import type { StateStore, UsageSummary } from '../store.js';
import { preparePrivateDatabaseFile } from './private-file.js';

const MIGRATIONS: string[] = [
  `CREATE TABLE usage_records (
     run_id TEXT PRIMARY KEY,
     subject TEXT NOT NULL,
     provider TEXT NOT NULL,
     model TEXT NOT NULL,
     status TEXT NOT NULL,
     finished_at TEXT NOT NULL,
     record TEXT NOT NULL
   )`,
  `CREATE TABLE approval_audit (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at TEXT NOT NULL,
     kind TEXT NOT NULL,
     subject TEXT NOT NULL,
     approval_id TEXT,
     record TEXT NOT NULL
   )`,
];

export class SqliteStateStore implements StateStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  /** Usage records written together in one transaction per turn of the event loop. */
  private pendingUsage: { record: UsageRecord; done: (error?: unknown) => void }[] = [];

  constructor(readonly path: string) {
    preparePrivateDatabaseFile(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
  }

  static open(directory: string): SqliteStateStore {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    return new SqliteStateStore(join(directory, 'agenticdriver.sqlite'));
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)');
    const row = this.db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null };
    const applied = row.version ?? 0;
    const apply = this.db.transaction((index: number) => {
      this.db.exec(MIGRATIONS[index]!);
      this.db.prepare('INSERT INTO schema_migrations (version) VALUES (?)').run(index + 1);
    });
    for (let index = applied; index < MIGRATIONS.length; index += 1) apply(index);
  }

  /** Resolves once the record is committed; concurrent records share one commit. */
  recordUsage(record: UsageRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.pendingUsage.length === 0) setImmediate(() => this.flushUsage());
      this.pendingUsage.push({ record, done: (error) => (error === undefined ? resolve() : reject(error)) });
    });
  }

  private flushUsage(): void {
    const batch = this.pendingUsage;
    this.pendingUsage = [];
    if (batch.length === 0) return;
    const insert = this.db.prepare(
      'INSERT OR IGNORE INTO usage_records (run_id, subject, provider, model, status, finished_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    try {
      this.db.transaction(() => {
        for (const { record } of batch) {
          insert.run(record.runId, record.subject, record.provider, record.model, record.status, record.finishedAt, JSON.stringify(record));
        }
      })();
      for (const entry of batch) entry.done();
    } catch (error) {
      for (const entry of batch) entry.done(error);
    }
  }

  async usageSummary(): Promise<UsageSummary> {
    const rows = this.db.prepare('SELECT status, COUNT(*) AS count FROM usage_records GROUP BY status').all() as { status: string; count: number }[];
    const summary: UsageSummary = { runs: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const { status, count } of rows) {
      summary.runs += count;
      if (status === 'completed' || status === 'failed' || status === 'cancelled') summary[status] = count;
    }
    return summary;
  }

  async appendAudit(record: AuditRecord): Promise<void> {
    this.db
      .prepare('INSERT INTO approval_audit (at, kind, subject, approval_id, record) VALUES (?, ?, ?, ?, ?)')
      .run(record.at, record.kind, record.subject, record.approvalId ?? null, JSON.stringify(record));
  }

  async readAudit(limit: number): Promise<AuditRecord[]> {
    const rows = this.db.prepare('SELECT record FROM approval_audit ORDER BY id DESC LIMIT ?').all(limit) as { record: string }[];
    return rows.map((row) => JSON.parse(row.record) as AuditRecord);
  }

  async close(): Promise<void> {
    this.flushUsage();
    this.db.close();
  }
}
