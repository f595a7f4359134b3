/**
 * Checkpoints of background runs that wait for a person (feature `interactive-jobs`): while a
 * job waits for an approval decision or an application tool's result, its state (conversation,
 * remaining calls, counters, usage so far) is a row here, and the run holds no worker and no
 * admission slot. Its `runs` row is `waiting` and, like the approval or ticket it waits for,
 * owned by the checkpoint (`CHECKPOINT_OWNER`): no replica's death reaps it. The decision or
 * result, committed on any replica, queues the run again in the same transaction (`wake`); a
 * worker on any replica claims it, takes the approval or ticket back as its own, and goes on
 * from the checkpoint. A checkpoint with a deadline (the approval's expiry, the idle timeout)
 * is queued again once it passes (`due`), so the run ends as a connected one would.
 */
import { DriverError } from '../../../protocol/errors.js';
import type { CheckpointHolds, CheckpointStore, CheckpointWait } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import { CHECKPOINT_OWNER, rowLock } from '../ownership.js';
import type { Migrations, TableContext } from '../table.js';
import { RUN_CHANGES } from './runs.js';

const CHECKPOINTS = `CREATE TABLE run_checkpoints (
     id TEXT PRIMARY KEY, run_id TEXT NOT NULL, waiting_kind TEXT NOT NULL, waiting_id TEXT NOT NULL,
     wake_at BIGINT, checkpoint TEXT NOT NULL, created_at BIGINT NOT NULL);
   CREATE INDEX run_checkpoints_wake ON run_checkpoints (wake_at) WHERE wake_at IS NOT NULL`;
/**
 * What the waiting run holds besides what it waits for, handed to the checkpoint with it: the
 * session whose turn it is, and its idempotency record (the run id of that record's row).
 */
const CHECKPOINT_HOLDS = `ALTER TABLE run_checkpoints ADD COLUMN session_id TEXT;
   ALTER TABLE run_checkpoints ADD COLUMN record_run_id TEXT`;

/** The table a wait is on, and its key column. */
const WAITS = {
  approval: { table: 'approvals', key: 'approval_id' },
  ticket: { table: 'tool_tickets', key: 'execution_id' },
} as const;

export class CheckpointTable implements CheckpointStore {
  static readonly migrations: Migrations = { sqlite: [CHECKPOINTS, CHECKPOINT_HOLDS], postgres: [CHECKPOINTS, CHECKPOINT_HOLDS] };

  constructor(private readonly context: TableContext) {}

  /**
   * Commits the checkpoint of a job this replica runs, and hands what it waits for to the
   * checkpoint. When the answer already arrived (the approval was decided, the result posted, a
   * cancel requested, before this commit), the job is queued again at once. Fenced like every
   * write of the job: fails once it is no longer this replica's running job. What the run
   * holds (its session's turn, its idempotency record) goes to the checkpoint with it.
   */
  async park(id: string, wait: CheckpointWait, checkpoint: unknown, wakeAt: number | undefined, holds: CheckpointHolds = {}): Promise<void> {
    const { engine, now } = this.context;
    const owner = this.context.owner();
    await engine.transaction(async (tx) => {
      const [job] = await tx.all<{ run_id: string; cancel_requested: number | boolean }>(
        // Locked: a cancel committing meanwhile is seen here, or sees the job waiting.
        `SELECT run_id, cancel_requested FROM runs WHERE mode = 'background' AND id = ? AND owner = ? AND state = 'running' ${rowLock(engine)}`,
        [id, owner],
      );
      if (!job) throw new DriverError('JOB_LEASE_LOST', "This job is no longer this host replica's to run.", { outcome: 'uncertain' });
      const { table, key } = WAITS[wait.kind];
      const handed = await tx.run(`UPDATE ${table} SET owner = ? WHERE ${key} = ? AND state = 'pending' AND owner = ?`, [CHECKPOINT_OWNER, wait.id, owner]);
      await tx.run('DELETE FROM run_checkpoints WHERE id = ?', [id]);
      await tx.run('INSERT INTO run_checkpoints (id, run_id, waiting_kind, waiting_id, wake_at, checkpoint, created_at, session_id, record_run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        id,
        job.run_id,
        wait.kind,
        wait.id,
        wakeAt ?? null,
        JSON.stringify(checkpoint),
        now(),
        holds.session ?? null,
        holds.record ?? null,
      ]);
      await handHeld(tx, { session_id: holds.session ?? null, record_run_id: holds.record ?? null }, owner, CHECKPOINT_OWNER);
      const answered = handed.changes === 0 || Number(job.cancel_requested) === 1;
      if (answered) await requeue(tx, id, now());
      else await tx.run("UPDATE runs SET state = 'waiting', owner = ?, updated_at = ? WHERE id = ?", [CHECKPOINT_OWNER, now(), id]);
    });
  }

  /** The checkpoint a claimed job goes on from (undefined: it starts from the beginning). */
  async read(id: string): Promise<{ wait: CheckpointWait; checkpoint: unknown } | undefined> {
    const [row] = await this.context.engine.all<{ waiting_kind: CheckpointWait['kind']; waiting_id: string; checkpoint: string }>(
      'SELECT waiting_kind, waiting_id, checkpoint FROM run_checkpoints WHERE id = ?',
      [id],
    );
    return row && { wait: { kind: row.waiting_kind, id: row.waiting_id }, checkpoint: JSON.parse(row.checkpoint) as unknown };
  }

  /**
   * Waiting jobs whose deadline passed by `at` (the host's clock, which set the deadline) are
   * queued again, to end as a connected run would; returns how many.
   */
  async due(at: number): Promise<number> {
    const { engine, now } = this.context;
    const select = `SELECT c.id FROM run_checkpoints c JOIN runs r ON r.id = c.id WHERE c.wake_at IS NOT NULL AND c.wake_at <= ? AND r.state = 'waiting'`;
    // Read first: most looks find nothing due, and then take no write transaction.
    if ((await engine.all(select, [at])).length === 0) return 0;
    return engine.transaction(async (tx) => {
      const due = await tx.all<{ id: string }>(`${select} ${rowLock(engine)}`, [at]);
      let woken = 0;
      for (const { id } of due) woken += await requeue(tx, id, now());
      return woken;
    });
  }

  /** Waiting jobs (every replica's), for metrics and tests. */
  async waiting(): Promise<number> {
    const [row] = await this.context.engine.all<{ count: number | string }>("SELECT COUNT(*) AS count FROM runs WHERE mode = 'background' AND state = 'waiting'");
    return Number(row?.count ?? 0);
  }
}

/**
 * Inside the transaction that commits an answer (a decision, a tool result) for something a
 * checkpoint owns: the run waiting for it is queued again, announced to every replica's workers.
 */
export async function wake(tx: SqlEngine, runId: string, now: number): Promise<void> {
  const [job] = await tx.all<{ id: string }>("SELECT id FROM runs WHERE mode = 'background' AND run_id = ? AND state = 'waiting'", [runId]);
  if (job) await requeue(tx, job.id, now);
}

/**
 * Queues a checkpointed job again (1), announced to every replica's workers; 0 when it was not
 * waiting. It stays the checkpoint's until a worker claims it: owned by nobody, its run's start
 * record would be reaped as the record of a run whose replica died.
 */
async function requeue(tx: SqlEngine, id: string, now: number): Promise<number> {
  const queued = await tx.run("UPDATE runs SET state = 'queued', owner = ?, updated_at = ? WHERE id = ? AND state IN ('waiting', 'running')", [CHECKPOINT_OWNER, now, id]);
  if (queued.changes > 0) await tx.publish(RUN_CHANGES, JSON.stringify({ kind: 'queued', id }));
  return queued.changes;
}

/**
 * Inside the transaction that ends a job: its checkpoint goes, and what it still waited for (a
 * job refused when it was about to go on, one whose log overflowed) is left to nobody, so the
 * next reaping closes it, audited, as `interrupted`.
 */
export async function dropCheckpoint(tx: SqlEngine, id: string): Promise<void> {
  const [row] = await tx.all<CheckpointHeld & { waiting_kind: CheckpointWait['kind']; waiting_id: string }>(
    'DELETE FROM run_checkpoints WHERE id = ? RETURNING waiting_kind, waiting_id, session_id, record_run_id',
    [id],
  );
  if (!row) return;
  const { table, key } = WAITS[row.waiting_kind];
  await tx.run(`UPDATE ${table} SET owner = NULL WHERE ${key} = ? AND state = 'pending'`, [row.waiting_id]);
  await handHeld(tx, row, undefined, null);
}

/**
 * Inside a claim: a job going on from a checkpoint takes what it waits for back as this
 * replica's own (so that, should this replica die, the reaper closes it with the run); given
 * back (`to` the checkpoint) when the claim is undone. True when the job has a checkpoint.
 */
export async function handOver(tx: SqlEngine, id: string, from: string, to: string): Promise<boolean> {
  const [row] = await tx.all<CheckpointHeld & { waiting_kind: CheckpointWait['kind']; waiting_id: string }>(
    'SELECT waiting_kind, waiting_id, session_id, record_run_id FROM run_checkpoints WHERE id = ?',
    [id],
  );
  if (!row) return false;
  const { table, key } = WAITS[row.waiting_kind];
  await tx.run(`UPDATE ${table} SET owner = ? WHERE ${key} = ? AND owner = ?`, [to, row.waiting_id, from]);
  await handHeld(tx, row, from, to);
  return true;
}

/** What a checkpointed run holds besides what it waits for: its session's turn, its idempotency record. */
interface CheckpointHeld {
  session_id: string | null;
  record_run_id: string | null;
}

/**
 * Hands the run's session turn and its idempotency record (the keyed row of that run id) from `from` (any owner when undefined) to `to` (NULL: to nobody, so the reaper ends
 * them as it ends its run); only while they are still running.
 */
async function handHeld(tx: SqlEngine, held: CheckpointHeld, from: string | undefined, to: string | null): Promise<void> {
  const owned = from === undefined ? '' : ' AND owner = ?';
  const fromArgs = from === undefined ? [] : [from];
  if (held.session_id !== null) await tx.run(`UPDATE sessions SET owner = ? WHERE id = ? AND state = 'running'${owned}`, [to, held.session_id, ...fromArgs]);
  if (held.record_run_id !== null) {
    await tx.run(`UPDATE runs SET owner = ? WHERE mode = 'attached' AND run_key IS NOT NULL AND run_id = ? AND state = 'running'${owned}`, [to, held.record_run_id, ...fromArgs]);
  }
}
