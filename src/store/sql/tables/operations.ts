/**
 * Operation records of idempotent runs: one row per (subject, key), claimed by the replica that
 * runs it, and the run's compact event log, appended only by that owner while it holds its lease.
 */
import { DriverError } from '../../../protocol/errors.js';
import type { JournalEntry, OperationClaim, OperationRecord, OperationState, OperationStore } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import { LIVE_OWNER, ORPHAN } from '../ownership.js';
import type { Migrations, Reaped, TableContext } from '../table.js';

interface OperationColumns {
  subject: string;
  key: string;
  fingerprint: string;
  run_id: string | null;
  provider: string;
  model: string;
  state: OperationState;
  owner: string | null;
  owner_alive: number | boolean;
}

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

export class OperationTable implements OperationStore, Reaped {
  static readonly migrations: Migrations = { sqlite: [OPERATIONS], postgres: [OPERATIONS] };

  constructor(private readonly context: TableContext) {}

  async find(subject: string, key: string): Promise<OperationRecord | undefined> {
    const { engine } = this.context;
    const [row] = await engine.all<OperationColumns>(`SELECT *, ${LIVE_OWNER} AS owner_alive FROM operations WHERE subject = ? AND key = ?`, [this.context.now(), subject, key]);
    if (!row) return undefined;
    const events = await engine.all<{ at: string; event: string }>('SELECT at, event FROM operation_events WHERE subject = ? AND key = ? ORDER BY seq', [subject, key]);
    return {
      subject: row.subject,
      key: row.key,
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
      `INSERT INTO operations (subject, key, fingerprint, run_id, provider, model, state, owner, bytes, created_at, updated_at)
       VALUES (?, ?, ?, NULL, ?, ?, 'running', ?, 0, ?, ?) ON CONFLICT DO NOTHING`,
      [claim.subject, claim.key, claim.fingerprint, claim.provider, claim.model, this.context.owner(), now, now],
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
      const updated = await tx.run(
        `UPDATE operations SET bytes = bytes + ?, updated_at = ?, state = ?, run_id = ?
         WHERE subject = ? AND key = ? AND owner = ? AND state = 'running' AND (run_id IS NULL OR run_id = ?) AND (? = 1 OR bytes + ? <= ?)`,
        [bytes, this.context.now(), options.state ?? 'running', runId, subject, key, owner, runId, terminal ? 1 : 0, bytes, options.maxBytes],
      );
      if (updated.changes === 0) {
        const [row] = await tx.all<{ state: string; owner: string | null }>('SELECT state, owner FROM operations WHERE subject = ? AND key = ?', [subject, key]);
        if (row?.state === 'running' && row.owner === owner) {
          throw new DriverError('OPERATION_RECORD_LIMIT', `The operation record would exceed ${options.maxBytes} bytes.`, { outcome: 'uncertain' });
        }
        throw storeError('The operation record is no longer this host replica\'s to write (its lease lapsed).');
      }
      await tx.run(
        'INSERT INTO operation_events (subject, key, seq, at, event) VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM operation_events WHERE subject = ? AND key = ?), ?, ?)',
        [subject, key, subject, key, entry.at, json],
      );
    });
  }

  async expire(before: number): Promise<number> {
    return this.context.engine.transaction(async (tx) => {
      const expired = await tx.all<{ subject: string; key: string }>("DELETE FROM operations WHERE state <> 'running' AND updated_at < ? RETURNING subject, key", [before]);
      for (const { subject, key } of expired) await tx.run('DELETE FROM operation_events WHERE subject = ? AND key = ?', [subject, key]);
      return expired.length;
    });
  }

  /** A running record whose owner died is uncertain: it replays as such, and is never run again. */
  async reap(tx: SqlEngine, now: number): Promise<number> {
    const operations = await tx.run(`UPDATE operations SET state = 'uncertain', updated_at = ? WHERE state = 'running' AND (${ORPHAN})`, [now]);
    return operations.changes;
  }
}

function storeError(message: string): DriverError {
  return new DriverError('OPERATION_STORE_ERROR', message, { retryable: false, outcome: 'uncertain' });
}
