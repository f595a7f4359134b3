/**
 * Operation records of idempotent runs: their rows of the one record of runs (`runs.ts`, mode
 * `attached` with a key), one per (subject, key), claimed by the replica that runs it, and the
 * run's compact event log, appended only by that owner while it holds its lease.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../../protocol/errors.js';
import type { JournalEntry, OperationClaim, OperationRecord, OperationState, OperationStore } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import { LIVE_OWNER, ORPHAN } from '../ownership.js';
import type { Migrations, Reaped, TableContext } from '../table.js';
import { RUN_CHANGES } from './run-records.js';
import { RUN_COLUMNS, type RunColumns } from './runs.js';

/** The first step (released): the former `operations` and `operation_events` tables. */
const OPERATIONS = `CREATE TABLE operations (
     subject TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, run_id TEXT,
     provider TEXT NOT NULL, model TEXT NOT NULL, state TEXT NOT NULL, owner TEXT,
     bytes BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
     PRIMARY KEY (subject, key));
   CREATE INDEX operations_running ON operations (owner) WHERE state = 'running';
   CREATE INDEX operations_updated ON operations (updated_at);
   CREATE TABLE operation_events (
     subject TEXT NOT NULL, key TEXT NOT NULL, seq BIGINT NOT NULL, at TEXT NOT NULL, event TEXT NOT NULL,
     PRIMARY KEY (subject, key, seq))`;

/** The operations' rows and events move to the one record of runs; `newId` makes a row id. */
function movedToRuns(newId: string): string {
  return `INSERT INTO runs (${RUN_COLUMNS})
     SELECT ${newId}, 'attached', o.subject, o.key, o.fingerprint, NULL, NULL, o.run_id, o.provider, o.model, o.state,
       (SELECT COALESCE(MAX(e.seq), 0) FROM operation_events e WHERE e.subject = o.subject AND e.key = o.key),
       0, o.owner, NULL, o.created_at, o.updated_at, NULL, NULL, o.bytes FROM operations o;
   INSERT INTO run_events (id, seq, at, event)
     SELECT r.id, e.seq, e.at, e.event FROM operation_events e JOIN runs r ON r.mode = 'attached' AND r.subject = e.subject AND r.run_key = e.key;
   DROP TABLE operation_events;
   DROP TABLE operations`;
}

/** An idempotent attached run's row: every statement of this module reads and writes only those. */
const KEYED = "mode = 'attached' AND run_key IS NOT NULL";

type OperationColumns = RunColumns & { run_key: string; fingerprint: string; state: OperationState; owner_alive: number | boolean };

export class OperationTable implements OperationStore, Reaped {
  static readonly migrations: Migrations = {
    sqlite: [OPERATIONS, movedToRuns('lower(hex(randomblob(16)))')],
    postgres: [OPERATIONS, movedToRuns('gen_random_uuid()::text')],
  };

  constructor(private readonly context: TableContext) {}

  async find(subject: string, key: string): Promise<OperationRecord | undefined> {
    const { engine } = this.context;
    const [row] = await engine.all<OperationColumns>(`SELECT *, ${LIVE_OWNER} AS owner_alive FROM runs WHERE ${KEYED} AND subject = ? AND run_key = ?`, [this.context.now(), subject, key]);
    if (!row) return undefined;
    const events = await engine.all<{ at: string; event: string }>('SELECT at, event FROM run_events WHERE id = ? ORDER BY seq', [row.id]);
    return {
      subject: row.subject,
      key: row.run_key,
      fingerprint: row.fingerprint,
      runId: row.run_id ?? undefined,
      provider: row.provider,
      model: row.model,
      state: row.state,
      owner: row.owner ?? undefined,
      ownerAlive: Boolean(row.owner_alive),
      events: events.map((event) => ({ at: event.at, event: JSON.parse(event.event) as JournalEntry['event'] })),
    };
  }

  async claim(claim: OperationClaim): Promise<{ claimed: true } | { claimed: false; existing: OperationRecord }> {
    const now = this.context.now();
    const inserted = await this.context.engine.run(
      `INSERT INTO runs (id, mode, subject, run_key, fingerprint, run_id, provider, model, state, cursor, cancel_requested, owner, created_at, updated_at, bytes)
       VALUES (?, 'attached', ?, ?, ?, ?, ?, ?, 'running', 0, 0, ?, ?, ?, 0) ON CONFLICT (subject, mode, run_key) DO NOTHING`,
      [randomUUID(), claim.subject, claim.key, claim.fingerprint, claim.runId, claim.provider, claim.model, this.context.owner(), now, now],
    );
    if (inserted.changes === 1) return { claimed: true };
    const existing = await this.find(claim.subject, claim.key);
    if (!existing) throw storeError('The operation record vanished while it was being claimed.');
    return { claimed: false, existing };
  }

  async append(
    subject: string,
    key: string,
    runId: string,
    entry: JournalEntry,
    options: { maxBytes: number; state?: Exclude<OperationState, 'running'> },
  ): Promise<void> {
    const json = JSON.stringify(entry.event);
    const bytes = Buffer.byteLength(json);
    const terminal = options.state !== undefined;
    const owner = this.context.owner();
    await this.context.engine.transaction(async (tx) => {
      const [updated] = await tx.all<{ id: string; cursor: number }>(
        `UPDATE runs SET cursor = cursor + 1, bytes = bytes + ?, updated_at = ?, state = ?
         WHERE ${KEYED} AND subject = ? AND run_key = ? AND owner = ? AND state = 'running' AND run_id = ? AND (? = 1 OR bytes + ? <= ?) RETURNING id, cursor`,
        [bytes, this.context.now(), options.state ?? 'running', subject, key, owner, runId, terminal ? 1 : 0, bytes, options.maxBytes],
      );
      if (!updated) {
        const [row] = await tx.all<{ state: string; owner: string | null; run_id: string | null }>(`SELECT state, owner, run_id FROM runs WHERE ${KEYED} AND subject = ? AND run_key = ?`, [subject, key]);
        if (row?.state === 'running' && row.owner === owner && row.run_id === runId) {
          throw new DriverError('OPERATION_RECORD_LIMIT', `The operation record would exceed ${options.maxBytes} bytes.`, { outcome: 'uncertain' });
        }
        throw storeError('The operation record is no longer this host replica\'s to write (its lease lapsed).');
      }
      await tx.run('INSERT INTO run_events (id, seq, at, event) VALUES (?, ?, ?, ?)', [updated.id, Number(updated.cursor), entry.at, json]);
      // Followers of the run (run records) read on.
      await tx.publish(RUN_CHANGES, updated.id);
    });
  }

  async expire(before: number): Promise<number> {
    return this.context.engine.transaction(async (tx) => {
      // A record whose run is still in flight (its usage record not yet written) stays until it is not.
      const expired = await tx.all<{ id: string }>(`DELETE FROM runs WHERE ${KEYED} AND state <> 'running' AND start_record IS NULL AND updated_at < ? RETURNING id`, [before]);
      for (const { id } of expired) await tx.run('DELETE FROM run_events WHERE id = ?', [id]);
      return expired.length;
    });
  }

  /** A running record whose owner died is uncertain: it replays as such, and is never run again. */
  async reap(tx: SqlEngine, now: number): Promise<number> {
    const operations = await tx.run(`UPDATE runs SET state = 'uncertain', updated_at = ? WHERE ${KEYED} AND state = 'running' AND (${ORPHAN})`, [now]);
    return operations.changes;
  }
}

function storeError(message: string): DriverError {
  return new DriverError('OPERATION_STORE_ERROR', message, { retryable: false, outcome: 'uncertain' });
}
