/**
 * Run records: any run read back by its run id, and its committed events paged and followed —
 * over the one record of runs (`runs.ts`), whatever wrote the row: a background run's log
 * (`jobs.ts`), an idempotent run's journal (`operations.ts`), or, written here, the events of an
 * attached run without a key as they were sent (rows with a `retention_ms`; without one, a row
 * is only the usage start record of a run in flight, `usage.ts`).
 *
 * An attached run's events are not written on its request path one by one: they are queued for
 * the store's group commit (`group-commit.ts`), one transaction for every run's events — and the
 * usage and start records — queued within `RECORD_FLUSH_MS` (a terminal event: by the end of its
 * turn) or while the previous commit ran, each run's part fenced on its row being this replica's
 * and still running. Every commit of events — here, to a job's log or to an idempotent run's
 * journal — is announced on the `agenticdriver_runs` channel (a hint: followers also re-read
 * now and then). A run in flight reads back from its start record's row (running, cursor 0)
 * until its first events are committed.
 */
import { DriverError } from '../../../protocol/errors.js';
import type { RunEvent, RunRequest } from '../../../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../../../protocol/terminal-events.js';
import { eventJson } from '../../../shared/event-json.js';
import type { ActiveRunRow, RunRecordRow, RunRecordStore, RunRecordWrite } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import { ORPHAN, rowLock } from '../ownership.js';
import type { GroupCommit, GroupWriter, QueuedWrites } from '../group-commit.js';
import type { Reaped, TableContext } from '../table.js';
import type { RunColumns } from './runs.js';

/** The channel every commit of a run's events is announced on, with the row's id. */
export const RUN_CHANGES = 'agenticdriver_runs';

/** Rows of attached runs without a key that are recorded here (every statement of this module that writes touches only those). */
const RECORDED = "mode = 'attached' AND run_key IS NULL AND retention_ms IS NOT NULL";

/**
 * How long a queued event may wait for the commit it shares with others: a follower sees it at
 * most this much later, and a run of many events costs one transaction per interval, not per event.
 */
export const RECORD_FLUSH_MS = 5;

interface ActiveColumns {
  id: string;
  mode: 'attached' | 'background';
  subject: string;
  run_id: string;
  provider: string;
  model: string;
  state: 'running' | 'waiting';
  created_at: number;
  waiting_kind: 'approval' | 'ticket' | null;
  waiting_id: string | null;
  waiting_since: number | null;
  waiting_tool: string | null;
}

interface PendingWrite {
  write: RunRecordWrite;
  done: ((error?: unknown) => void) | undefined;
}

export class RunRecordTable implements RunRecordStore, Reaped, GroupWriter {
  private readonly listeners = new Set<(id: string) => void>();
  private pending: PendingWrite[] = [];

  constructor(
    private readonly context: TableContext,
    /** The store's shared commit: events share transactions with the usage and start records queued meanwhile. */
    private readonly group: GroupCommit,
  ) {}

  /** Listens for the commits every replica announces (the store does this once, when it opens). */
  async listen(): Promise<void> {
    await this.context.engine.subscribe(RUN_CHANGES, (id) => {
      for (const listener of this.listeners) listener(id);
    });
  }

  onChange(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async read(runId: string): Promise<RunRecordRow | undefined> {
    const [row] = await this.context.engine.all<RunColumns>('SELECT * FROM runs WHERE run_id = ?', [runId]);
    if (!row || row.run_id === null) return undefined;
    return {
      id: row.id,
      runId: row.run_id,
      mode: row.mode,
      keyed: row.mode === 'attached' && row.run_key !== null,
      subject: row.subject,
      tokenId: row.token_id ?? undefined,
      provider: row.provider,
      model: row.model,
      state: row.state,
      cursor: Number(row.cursor),
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
      expiresAt: row.expires_at === null ? undefined : Number(row.expires_at),
      request: row.request === null ? undefined : (JSON.parse(row.request) as RunRequest),
      expired: row.mode === 'background' && row.request === null,
    };
  }

  async active(limit: number): Promise<ActiveRunRow[]> {
    const rows = await this.context.engine.all<ActiveColumns>(
      `SELECT r.id, r.mode, r.subject, r.run_id, r.provider, r.model, r.state, r.created_at,
              c.waiting_kind, c.waiting_id, c.created_at AS waiting_since, COALESCE(a.tool, t.tool) AS waiting_tool
       FROM runs r
       LEFT JOIN run_checkpoints c ON c.id = r.id
       LEFT JOIN approvals a ON c.waiting_kind = 'approval' AND a.approval_id = c.waiting_id
       LEFT JOIN tool_tickets t ON c.waiting_kind = 'ticket' AND t.execution_id = c.waiting_id
       WHERE r.state IN ('running', 'waiting') AND r.run_id IS NOT NULL
       ORDER BY r.created_at, r.id LIMIT ?`,
      [limit],
    );
    return rows.map((row) => ({
      id: row.id,
      runId: row.run_id,
      mode: row.mode,
      subject: row.subject,
      provider: row.provider,
      model: row.model,
      state: row.state,
      createdAt: Number(row.created_at),
      ...(row.state === 'waiting' && row.waiting_kind !== null && row.waiting_id !== null
        ? { waiting: { kind: row.waiting_kind === 'ticket' ? 'tool' : 'approval', id: row.waiting_id, tool: row.waiting_tool ?? 'unknown', since: Number(row.waiting_since) } }
        : {}),
    }));
  }

  /**
   * Committed events after `after`, at most `limit`, stopping before `maxBytes` of JSON (at
   * least one). A journal entry (an idempotent run's) is stamped with the run id, its sequence
   * and the time it was committed, as its replay is. A row of an attached run's record holds the
   * events of one commit, one JSON text a line, keyed by the last one's sequence (the events of
   * a row are consecutive); every other row holds one event.
   */
  async events(row: Pick<RunRecordRow, 'id' | 'runId'>, after: number, limit: number, maxBytes: number): Promise<RunEvent[]> {
    const rows = await this.context.engine.all<{ seq: number; at: string; event: string }>('SELECT seq, at, event FROM run_events WHERE id = ? AND seq > ? ORDER BY seq LIMIT ?', [row.id, after, limit]);
    const events: RunEvent[] = [];
    let bytes = 0;
    for (const found of rows) {
      const lines = found.event.split('\n');
      const last = Number(found.seq);
      for (let index = Math.max(0, lines.length - (last - after)); index < lines.length; index += 1) {
        const text = lines[index]!;
        bytes += Buffer.byteLength(text);
        if (events.length >= limit || (events.length > 0 && bytes > maxBytes)) return events;
        const event = JSON.parse(text) as Partial<RunEvent>;
        events.push({ ...event, runId: row.runId, sequence: last - (lines.length - 1 - index), timestamp: event.timestamp ?? found.at } as RunEvent);
      }
    }
    return events;
  }

  /**
   * Queues one event of an attached run for the next commit; `done` (if given) is told when it
   * is committed, or why not. No promise per event: most callers do not wait.
   */
  record(write: RunRecordWrite, done?: (error?: unknown) => void): void {
    this.pending.push({ write, done });
    this.group.request(TERMINAL_EVENT_TYPES.has(write.event.type), RECORD_FLUSH_MS);
  }

  /** Erases attached runs' records whose retention ended (a run whose usage record is not written yet stays until it is). */
  async expire(): Promise<number> {
    return this.context.engine.transaction(async (tx) => {
      const expired = await tx.all<{ id: string }>(`DELETE FROM runs WHERE ${RECORDED} AND expires_at <= ? AND start_record IS NULL RETURNING id`, [this.context.now()]);
      for (const { id } of expired) await tx.run('DELETE FROM run_events WHERE id = ?', [id]);
      return expired.length;
    });
  }

  /**
   * Recorded runs whose replica died become `interrupted`: a `run.failed` RUN_INTERRUPTED,
   * outcome uncertain, closes their events so that followers end.
   */
  async reap(tx: SqlEngine, now: number): Promise<number> {
    const orphans = await tx.all<RunColumns>(`SELECT * FROM runs WHERE ${RECORDED} AND state = 'running' AND (${ORPHAN}) ${rowLock(tx)}`);
    const error = new DriverError('RUN_INTERRUPTED', 'The host running this run stopped; what it did after its last event is uncertain.', { outcome: 'uncertain' }).toJSON();
    for (const row of orphans) {
      const at = Math.max(now, Number(row.updated_at));
      const sequence = Number(row.cursor) + 1;
      const event = { type: 'run.failed', runId: row.run_id, sequence, timestamp: new Date(at).toISOString(), error };
      await tx.run('INSERT INTO run_events (id, seq, at, event) VALUES (?, ?, ?, ?)', [row.id, sequence, event.timestamp, JSON.stringify(event)]);
      await tx.run("UPDATE runs SET state = 'interrupted', cursor = ?, updated_at = ?, expires_at = ? + retention_ms WHERE id = ?", [sequence, at, at, row.id]);
      await tx.publish(RUN_CHANGES, row.id);
    }
    return orphans.length;
  }

  take(): QueuedWrites | undefined {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return undefined;
    const byRun = new Map<string, RunRecordWrite[]>();
    for (const { write } of batch) {
      const writes = byRun.get(write.runId);
      if (writes) writes.push(write);
      else byRun.set(write.runId, [write]);
    }
    const refused = new Set<string>();
    return {
      write: async (tx) => {
        for (const [runId, writes] of byRun) {
          if (!(await this.append(tx, runId, writes))) refused.add(runId);
        }
      },
      settle: (error) => {
        let fenced: DriverError | undefined;
        for (const { write, done } of batch) {
          if (!done) continue;
          if (error !== undefined || !refused.has(write.runId)) done(error);
          else done((fenced ??= new DriverError('OPERATION_STORE_ERROR', 'The run record is no longer this host replica\'s to write (its lease lapsed, or it was interrupted).', { retryable: false })));
        }
      },
    };
  }

  /** One run's part of a commit: its row (made with its first event), its events, its cursor and state. False when fenced. */
  private async append(tx: SqlEngine, runId: string, writes: RunRecordWrite[]): Promise<boolean> {
    const now = this.context.now();
    const owner = this.context.owner();
    const first = writes[0]!;
    const last = writes.at(-1)!.event;
    const state = !TERMINAL_EVENT_TYPES.has(last.type) ? 'running' : last.type === 'run.completed' ? 'completed' : last.type === 'run.failed' ? 'failed' : 'cancelled';
    const json = writes.map((write) => eventJson(write.event)).join('\n');
    const bytes = Buffer.byteLength(json) - (writes.length - 1);
    const updated =
      first.event.sequence === 1
        ? // The row is made with the first events, or the usage start record made it already (same id) and they join it, fenced as below.
          await tx.run(
            `INSERT INTO runs (id, mode, subject, token_id, run_id, provider, model, state, cursor, cancel_requested, owner, created_at, updated_at, retention_ms, bytes, expires_at)
             VALUES (?, 'attached', ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (run_id) DO UPDATE SET retention_ms = excluded.retention_ms, cursor = excluded.cursor, bytes = runs.bytes + excluded.bytes,
               updated_at = excluded.updated_at, state = excluded.state, expires_at = excluded.expires_at
             WHERE runs.mode = 'attached' AND runs.run_key IS NULL AND runs.owner = excluded.owner AND runs.state = 'running' AND runs.cursor = 0`,
            [runId, first.subject, first.tokenId ?? null, runId, first.provider, first.model, state, last.sequence, owner, now, now, first.retentionMs, bytes, state === 'running' ? null : now + first.retentionMs],
          )
        : await tx.run(
            `UPDATE runs SET cursor = ?, bytes = bytes + ?, updated_at = ?, state = ?, expires_at = CASE WHEN ? = 1 THEN ? + retention_ms ELSE NULL END
             WHERE id = ? AND ${RECORDED} AND owner = ? AND state = 'running' AND cursor < ?`,
            [last.sequence, bytes, now, state, state === 'running' ? 0 : 1, now, runId, owner, first.event.sequence],
          );
    if (updated.changes === 0) return false;
    // One row for the commit's events: the run's row is fenced on its cursor, so they follow the last committed one.
    await tx.run('INSERT INTO run_events (id, seq, at, event) VALUES (?, ?, ?, ?)', [runId, last.sequence, first.event.timestamp, json]);
    await tx.publish(RUN_CHANGES, runId);
    return true;
  }
}
