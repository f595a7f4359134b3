/**
 * Usage records, and the runs in flight: a run's row of the one record of runs (`runs.ts`)
 * holds its start record from its start until its usage record, so a run whose replica died is
 * recorded `interrupted` when its owner is reaped. Starts and records arriving together share
 * one transaction per turn of the event loop, with whatever else the store's group commit holds.
 */
import { interruptedRecord, type RunStartRecord, type UsageRecord } from '../../../runtime/usage-record.js';
import type { FinishedRunsPage, FinishedRunsQuery, UsageStore, UsageSummary } from '../../store.js';
import { sumUsage, type UsageTotalsQuery, type UsageTotalsRow } from '../../usage-totals.js';
import type { SqlEngine, SqlValue } from '../engine.js';
import type { GroupCommit, GroupWriter, QueuedWrites } from '../group-commit.js';
import { ORPHAN } from '../ownership.js';
import type { Migrations, Reaped, TableContext } from '../table.js';
import { RUN_COLUMNS } from './runs.js';

type PendingWrite =
  | { kind: 'start'; record: RunStartRecord; done: (error?: unknown) => void }
  | { kind: 'usage'; record: UsageRecord; done: (error?: unknown) => void };

const USAGE_RECORDS = `CREATE TABLE usage_records (
     run_id TEXT PRIMARY KEY, subject TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
     status TEXT NOT NULL, finished_at TEXT NOT NULL, record TEXT NOT NULL)`;
// The console and `usage --since` read the newest records first.
const USAGE_BY_TIME = 'CREATE INDEX usage_records_finished ON usage_records (finished_at)';

/**
 * The former `runs_in_flight` moves to the one record of runs: a start record joins the row of
 * its operation or job (moved before it), or becomes the row of an attached run without a key.
 * `field(name)` reads a field of the record; `millis(iso)` makes epoch milliseconds of a time.
 */
function inFlightMovedToRuns(field: (name: string) => string, millis: (iso: string) => string): string {
  return `UPDATE runs SET start_record = (SELECT f.record FROM runs_in_flight f WHERE f.run_id = runs.run_id)
     WHERE run_id IN (SELECT run_id FROM runs_in_flight);
   INSERT INTO runs (${RUN_COLUMNS})
     SELECT f.run_id, 'attached', ${field('subject')}, NULL, NULL, ${field('tokenId')}, NULL, f.run_id, ${field('provider')}, ${field('model')}, 'running',
       0, 0, f.owner, f.record, ${millis(field('startedAt'))}, ${millis(field('startedAt'))}, NULL, NULL, 0
     FROM runs_in_flight f WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = f.run_id);
   DROP TABLE runs_in_flight`;
}

/**
 * A row that only marks an attached run without a key in flight: its id is the run's id, and it
 * goes with its start record. A row with a retention is a run record (`run-records.ts`): it stays.
 */
const MARKER = "mode = 'attached' AND run_key IS NULL AND retention_ms IS NULL";

export class UsageTable implements UsageStore, Reaped, GroupWriter {
  static readonly migrations: Migrations = {
    sqlite: [
      USAGE_RECORDS,
      'CREATE TABLE runs_in_flight (run_id TEXT PRIMARY KEY, record TEXT NOT NULL)',
      'ALTER TABLE runs_in_flight ADD COLUMN owner TEXT',
      USAGE_BY_TIME,
      inFlightMovedToRuns(
        (name) => `json_extract(f.record, '$.${name}')`,
        (iso) => `COALESCE(CAST(ROUND((julianday(${iso}) - 2440587.5) * 86400000) AS INTEGER), 0)`,
      ),
    ],
    postgres: [
      `${USAGE_RECORDS};\n   CREATE TABLE runs_in_flight (run_id TEXT PRIMARY KEY, record TEXT NOT NULL, owner TEXT)`,
      USAGE_BY_TIME,
      inFlightMovedToRuns(
        (name) => `(f.record::jsonb ->> '${name}')`,
        (iso) => `COALESCE((EXTRACT(EPOCH FROM ${iso}::timestamptz) * 1000)::bigint, 0)`,
      ),
    ],
  };

  private pending: PendingWrite[] = [];

  constructor(
    private readonly context: TableContext,
    /** The store's shared commit: starts and records share transactions with the other queued writes. */
    private readonly group: GroupCommit,
  ) {}

  /** Resolves once the start is committed; concurrent writes share one commit. */
  runStarted(record: RunStartRecord): Promise<void> {
    return this.enqueue((done) => ({ kind: 'start', record, done }));
  }

  /** Resolves once the record is committed (and the run no longer in flight); concurrent records share one commit. */
  record(record: UsageRecord): Promise<void> {
    return this.enqueue((done) => ({ kind: 'usage', record, done }));
  }

  /** Writes what is queued now (the store's close waits for it). */
  flush(): Promise<void> {
    return this.group.flush();
  }

  take(): QueuedWrites | undefined {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return undefined;
    return {
      write: async (tx) => {
        for (const entry of batch) {
          if (entry.kind === 'start') await this.started(tx, entry.record);
          else await this.insert(tx, entry.record);
        }
      },
      settle: (error) => {
        for (const entry of batch) entry.done(error);
      },
    };
  }

  /**
   * Runs whose replica died are recorded interrupted; the duration is only an upper bound. Each
   * start record is taken by one guarded statement, so two replicas reaping at once record it once.
   */
  async reap(tx: SqlEngine, now: number): Promise<number> {
    const at = new Date(now).toISOString();
    const orphans = await tx.all<{ id: string; mode: string; run_key: string | null; retention_ms: number | null; start_record: string }>(`SELECT id, mode, run_key, retention_ms, start_record FROM runs WHERE start_record IS NOT NULL AND (${ORPHAN})`);
    let recorded = 0;
    for (const row of orphans) {
      const marker = row.mode === 'attached' && row.run_key === null && row.retention_ms === null;
      const taken = await tx.run(marker ? 'DELETE FROM runs WHERE id = ? AND start_record IS NOT NULL' : 'UPDATE runs SET start_record = NULL WHERE id = ? AND start_record IS NOT NULL', [row.id]);
      if (taken.changes === 0) continue;
      await this.insert(tx, interruptedRecord(JSON.parse(row.start_record) as RunStartRecord, at));
      recorded += 1;
    }
    return recorded;
  }

  async summary(): Promise<UsageSummary> {
    const rows = await this.context.engine.all<{ status: string; count: number }>('SELECT status, COUNT(*) AS count FROM usage_records GROUP BY status');
    const summary: UsageSummary = { runs: 0, completed: 0, failed: 0, cancelled: 0, interrupted: 0 };
    for (const { status, count } of rows) {
      summary.runs += Number(count);
      if (status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'interrupted') summary[status] = Number(count);
    }
    return summary;
  }

  async totals(query: UsageTotalsQuery): Promise<UsageTotalsRow[]> {
    const rows = await this.context.engine.all<{ record: string }>('SELECT record FROM usage_records WHERE finished_at >= ?', [query.since ?? '']);
    return sumUsage(
      rows.map((row) => JSON.parse(row.record) as UsageRecord),
      query.by,
    );
  }

  async finished(query: FinishedRunsQuery): Promise<FinishedRunsPage> {
    const engine = this.context.engine;
    const where: string[] = [engine.dialect === 'postgres' ? "(record::jsonb ->> 'operation') IS NULL" : "json_extract(record, '$.operation') IS NULL"];
    const params: SqlValue[] = [];
    if (query.before) {
      where.push('(finished_at < ? OR (finished_at = ? AND run_id > ?))');
      params.push(query.before.finishedAt, query.before.finishedAt, query.before.runId);
    }
    for (const [column, value] of [['status', query.status], ['subject', query.subject], ['provider', query.provider], ['run_id', query.runId]] as const) {
      if (value === undefined) continue;
      where.push(`${column} = ?`);
      params.push(value);
    }
    if (query.search !== undefined) {
      const pattern = `%${query.search.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
      where.push(`(${['run_id', 'subject', 'provider', 'model'].map((column) => `LOWER(${column}) LIKE ? ESCAPE '\\'`).join(' OR ')})`);
      params.push(pattern, pattern, pattern, pattern);
    }
    // One more than asked for tells whether an older page exists.
    const rows = await engine.all<{ record: string }>(`SELECT record FROM usage_records WHERE ${where.join(' AND ')} ORDER BY finished_at DESC, run_id LIMIT ?`, [...params, query.limit + 1]);
    const records = rows.slice(0, query.limit).map((row) => JSON.parse(row.record) as UsageRecord);
    const last = records.at(-1);
    return { records, ...(rows.length > query.limit && last ? { next: { finishedAt: last.finishedAt, runId: last.runId } } : {}) };
  }

  async lastFinishedAt(): Promise<string | undefined> {
    const [row] = await this.context.engine.all<{ last: string | null }>('SELECT MAX(finished_at) AS last FROM usage_records');
    return row?.last ?? undefined;
  }

  private enqueue(entry: (done: (error?: unknown) => void) => PendingWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push(entry((error) => (error === undefined ? resolve() : reject(error))));
      this.group.request(true, 0);
    });
  }

  private async insert(tx: SqlEngine, record: UsageRecord): Promise<void> {
    await tx.run('INSERT INTO usage_records (run_id, subject, provider, model, status, finished_at, record) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [
      record.runId,
      record.subject,
      record.provider,
      record.model,
      record.status,
      record.finishedAt,
      JSON.stringify(record),
    ]);
    // The run is no longer in flight; a row that only marked it so goes (rows with a start record are the only markers).
    const [started] = await tx.all<{ marker: number | boolean }>(`UPDATE runs SET start_record = NULL WHERE run_id = ? AND start_record IS NOT NULL RETURNING (${MARKER}) AS marker`, [record.runId]);
    if (started?.marker) await tx.run(`DELETE FROM runs WHERE run_id = ? AND ${MARKER}`, [record.runId]);
  }

  /** A run's start record joins its row (an operation's or a job's, made before it starts), or makes the row of a run without a key. */
  private async started(tx: SqlEngine, record: RunStartRecord): Promise<void> {
    const now = this.context.now();
    await tx.run(
      `INSERT INTO runs (id, mode, subject, token_id, run_id, provider, model, state, cursor, cancel_requested, owner, start_record, created_at, updated_at, bytes)
       VALUES (?, 'attached', ?, ?, ?, ?, ?, 'running', 0, 0, ?, ?, ?, ?, 0) ON CONFLICT (run_id) DO UPDATE SET start_record = excluded.start_record`,
      [record.runId, record.subject, record.tokenId ?? null, record.runId, record.provider, record.model, this.context.owner(), JSON.stringify(record), now, now],
    );
  }
}
