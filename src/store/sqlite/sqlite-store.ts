/** The embedded default store: one SQLite file in the host's state directory. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AuditRecord } from '../audit-record.js';
import { interruptedRecord, type RunStartRecord, type UsageRecord } from '../../runtime/usage-record.js';
import type { ReconcileReport, StateStore, UsageSummary } from '../store.js';
import { preparePrivateDatabaseFile } from './private-file.js';
import { sumUsage, type UsageTotalsQuery, type UsageTotalsRow } from '../usage-totals.js';

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
  // Runs started and not yet recorded, and approvals requested and not yet resolved: what a
  // crash leaves open. Approvals already open in the audit trail are carried over.
  `CREATE TABLE runs_in_flight (
     run_id TEXT PRIMARY KEY,
     record TEXT NOT NULL
   );
   CREATE TABLE open_approvals (
     approval_id TEXT PRIMARY KEY,
     record TEXT NOT NULL
   );
   INSERT OR IGNORE INTO open_approvals (approval_id, record)
     SELECT requested.approval_id, requested.record FROM approval_audit AS requested
     WHERE requested.kind = 'approval.requested' AND requested.approval_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM approval_audit AS resolved
                       WHERE resolved.kind = 'approval.resolved' AND resolved.approval_id = requested.approval_id)`,
];

type PendingWrite =
  | { kind: 'start'; record: RunStartRecord; done: (error?: unknown) => void }
  | { kind: 'usage'; record: UsageRecord; done: (error?: unknown) => void };

export class SqliteStateStore implements StateStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  /** Run starts and usage records, written together in one transaction per turn of the event loop. */
  private pendingWrites: PendingWrite[] = [];

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

  /** Resolves once the start is committed; concurrent writes share one commit. */
  recordRunStart(record: RunStartRecord): Promise<void> {
    return this.enqueue((done) => ({ kind: 'start', record, done }));
  }

  /** Resolves once the record is committed (and the run no longer in flight); concurrent records share one commit. */
  recordUsage(record: UsageRecord): Promise<void> {
    return this.enqueue((done) => ({ kind: 'usage', record, done }));
  }

  private enqueue(entry: (done: (error?: unknown) => void) => PendingWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.pendingWrites.length === 0) setImmediate(() => this.flushWrites());
      this.pendingWrites.push(entry((error) => (error === undefined ? resolve() : reject(error))));
    });
  }

  private insertUsage(record: UsageRecord): void {
    const { usage, done } = this.hot();
    usage.run(record.runId, record.subject, record.provider, record.model, record.status, record.finishedAt, JSON.stringify(record));
    done.run(record.runId);
  }

  /** The per-run statements and their batch transaction, prepared once rather than per write. */
  private statements?: { start: Database.Statement; usage: Database.Statement; done: Database.Statement; commit: (batch: PendingWrite[]) => void };

  private hot(): NonNullable<SqliteStateStore['statements']> {
    if (this.statements) return this.statements;
    const start = this.db.prepare('INSERT OR IGNORE INTO runs_in_flight (run_id, record) VALUES (?, ?)');
    const usage = this.db.prepare('INSERT OR IGNORE INTO usage_records (run_id, subject, provider, model, status, finished_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const done = this.db.prepare('DELETE FROM runs_in_flight WHERE run_id = ?');
    const commit = this.db.transaction((batch: PendingWrite[]) => {
      for (const entry of batch) {
        if (entry.kind === 'start') start.run(entry.record.runId, JSON.stringify(entry.record));
        else this.insertUsage(entry.record);
      }
    });
    this.statements = { start, usage, done, commit };
    return this.statements;
  }

  private flushWrites(): void {
    const batch = this.pendingWrites;
    this.pendingWrites = [];
    if (batch.length === 0) return;
    try {
      this.hot().commit(batch);
      for (const entry of batch) entry.done();
    } catch (error) {
      for (const entry of batch) entry.done(error);
    }
  }

  async usageSummary(): Promise<UsageSummary> {
    const rows = this.db.prepare('SELECT status, COUNT(*) AS count FROM usage_records GROUP BY status').all() as { status: string; count: number }[];
    const summary: UsageSummary = { runs: 0, completed: 0, failed: 0, cancelled: 0, interrupted: 0 };
    for (const { status, count } of rows) {
      summary.runs += count;
      if (status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'interrupted') summary[status] = count;
    }
    return summary;
  }

  async usageTotals(query: UsageTotalsQuery): Promise<UsageTotalsRow[]> {
    this.flushWrites();
    const rows = this.db.prepare('SELECT record FROM usage_records WHERE finished_at >= ?').iterate(query.since ?? '') as IterableIterator<{ record: string }>;
    return sumUsage((function* () {
      for (const row of rows) yield JSON.parse(row.record) as UsageRecord;
    })(), query.by);
  }

  async appendAudit(record: AuditRecord): Promise<void> {
    this.db.transaction(() => this.insertAudit(record))();
  }

  /** The audit row, and the open-approval index that start-up reconciliation reads. */
  private insertAudit(record: AuditRecord): void {
    const json = JSON.stringify(record);
    this.db
      .prepare('INSERT INTO approval_audit (at, kind, subject, approval_id, record) VALUES (?, ?, ?, ?, ?)')
      .run(record.at, record.kind, record.subject, record.approvalId ?? null, json);
    if (record.approvalId === undefined) return;
    if (record.kind === 'approval.requested') {
      this.db.prepare('INSERT OR IGNORE INTO open_approvals (approval_id, record) VALUES (?, ?)').run(record.approvalId, json);
    } else if (record.kind === 'approval.resolved') {
      this.db.prepare('DELETE FROM open_approvals WHERE approval_id = ?').run(record.approvalId);
    }
  }

  async reconcileInterrupted(at: string): Promise<ReconcileReport> {
    this.flushWrites();
    return this.db.transaction((): ReconcileReport => {
      const runs = this.db.prepare('SELECT record FROM runs_in_flight').all() as { record: string }[];
      for (const row of runs) {
        const start = JSON.parse(row.record) as RunStartRecord;
        this.insertUsage(interruptedRecord(start, at));
      }
      const approvals = this.db.prepare('SELECT record FROM open_approvals').all() as { record: string }[];
      for (const row of approvals) {
        const requested = JSON.parse(row.record) as AuditRecord;
        this.insertAudit({
          kind: 'approval.resolved',
          at,
          subject: requested.subject,
          ...(requested.approvalId !== undefined ? { approvalId: requested.approvalId } : {}),
          ...(requested.runId !== undefined ? { runId: requested.runId } : {}),
          ...(requested.provider !== undefined ? { provider: requested.provider } : {}),
          ...(requested.tool !== undefined ? { tool: requested.tool } : {}),
          outcome: 'interrupted',
        });
      }
      return { runs: runs.length, approvals: approvals.length };
    })();
  }

  async readAudit(limit: number): Promise<AuditRecord[]> {
    const rows = this.db.prepare('SELECT record FROM approval_audit ORDER BY id DESC LIMIT ?').all(limit) as { record: string }[];
    return rows.map((row) => JSON.parse(row.record) as AuditRecord);
  }

  async close(): Promise<void> {
    this.flushWrites();
    this.db.close();
  }
}
