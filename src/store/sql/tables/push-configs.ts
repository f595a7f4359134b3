/**
 * A2A push-notification configs: where to tell a client that its task (a background run) ended
 * or waits for input (its last event asks for an approval or an application tool's result). They live in the store beside the run, so any replica may take a
 * delivery: what is due is read from the run's row and its last event, not from a process. A
 * delivery is claimed under a lease (the same column holds off a retry until its backoff
 * passed); a replica that dies mid-delivery leaves a lease that lapses, and another replica
 * delivers again — at least once. A config remembers the last point it was told of: the run's
 * cursor, and `:end` once the run ended (a run reaped as interrupted ends with no new event).
 */
import type { PushConfigRow, PushConfigStore, PushDue } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import type { Migrations, TableContext } from '../table.js';

const PUSH_CONFIGS = `CREATE TABLE a2a_push_configs (
     task_id TEXT NOT NULL, config_id TEXT NOT NULL, subject TEXT NOT NULL, wire TEXT NOT NULL, config TEXT NOT NULL,
     created_at BIGINT NOT NULL, delivered TEXT, settled INTEGER NOT NULL, lease_owner TEXT, lease_until BIGINT,
     attempts INTEGER NOT NULL, PRIMARY KEY (task_id, config_id));
   CREATE INDEX a2a_push_configs_open ON a2a_push_configs (task_id) WHERE settled = 0`;

interface PushColumns {
  task_id: string;
  config_id: string;
  subject: string;
  wire: string;
  config: string;
  created_at: number;
}

const ENDED = "r.state IN ('completed', 'failed', 'cancelled', 'interrupted')";
/** The point a config is told of: the cursor, marked once the run ended. */
const POINT = `CASE WHEN ${ENDED} THEN CAST(r.cursor AS TEXT) || ':end' ELSE CAST(r.cursor AS TEXT) END`;

export class PushConfigTable implements PushConfigStore {
  static readonly migrations: Migrations = { sqlite: [PUSH_CONFIGS], postgres: [PUSH_CONFIGS] };

  constructor(private readonly context: TableContext) {}

  private get engine(): SqlEngine {
    return this.context.engine;
  }

  /** Sets (or replaces) a task's config; refused past `max` configs per task. Returns false when full. */
  async put(row: PushConfigRow, max: number): Promise<boolean> {
    return this.engine.transaction(async (tx) => {
      const [{ count } = { count: 0 }] = await tx.all<{ count: number }>('SELECT COUNT(*) AS count FROM a2a_push_configs WHERE task_id = ? AND config_id <> ?', [row.taskId, row.configId]);
      if (Number(count) >= max) return false;
      await tx.run('DELETE FROM a2a_push_configs WHERE task_id = ? AND config_id = ?', [row.taskId, row.configId]);
      await tx.run(
        `INSERT INTO a2a_push_configs (task_id, config_id, subject, wire, config, created_at, delivered, settled, lease_owner, lease_until, attempts)
         VALUES (?, ?, ?, ?, ?, ?, NULL, 0, NULL, NULL, 0)`,
        [row.taskId, row.configId, row.subject, row.wire, JSON.stringify(row.config), this.context.now()],
      );
      return true;
    });
  }

  async read(taskId: string, configId: string): Promise<PushConfigRow | undefined> {
    const [found] = await this.engine.all<PushColumns>('SELECT * FROM a2a_push_configs WHERE task_id = ? AND config_id = ?', [taskId, configId]);
    return found && rowOf(found);
  }

  async list(taskId: string): Promise<PushConfigRow[]> {
    const rows = await this.engine.all<PushColumns>('SELECT * FROM a2a_push_configs WHERE task_id = ? ORDER BY created_at, config_id', [taskId]);
    return rows.map(rowOf);
  }

  async delete(taskId: string, configId: string): Promise<boolean> {
    return (await this.engine.run('DELETE FROM a2a_push_configs WHERE task_id = ? AND config_id = ?', [taskId, configId])).changes === 1;
  }

  /** Deliveries due now: the run ended or its last event asks for input (an approval, an application tool's result), and the config was not told of that point; none under a lease. */
  async due(limit: number): Promise<PushDue[]> {
    const type = this.engine.dialect === 'postgres' ? "(e.event::jsonb ->> 'type')" : "json_extract(e.event, '$.type')";
    const rows = await this.engine.all<PushColumns & { point: string; attempts: number }>(
      `SELECT p.*, ${POINT} AS point FROM a2a_push_configs p
         JOIN runs r ON r.id = p.task_id AND r.mode = 'background'
         LEFT JOIN run_events e ON e.id = r.id AND e.seq = r.cursor
       WHERE p.settled = 0 AND (p.lease_until IS NULL OR p.lease_until <= ?)
         AND (${ENDED} OR ${type} IN ('approval.requested', 'tool.execution.requested'))
         AND (p.delivered IS NULL OR p.delivered <> ${POINT})
       ORDER BY p.created_at LIMIT ?`,
      [this.context.now(), limit],
    );
    return rows.map((found) => ({ ...rowOf(found), point: found.point, attempts: Number(found.attempts) }));
  }

  /** Takes a due delivery for `leaseMs`; false when another replica took it first (or it is no longer due there). */
  async claim(due: PushDue, leaseMs: number): Promise<boolean> {
    const now = this.context.now();
    const taken = await this.engine.run(
      `UPDATE a2a_push_configs SET lease_owner = ?, lease_until = ?
       WHERE task_id = ? AND config_id = ? AND settled = 0 AND (lease_until IS NULL OR lease_until <= ?) AND (delivered IS NULL OR delivered <> ?)`,
      [this.context.owner(), now + leaseMs, due.taskId, due.configId, now, due.point],
    );
    return taken.changes === 1;
  }

  /** The point was told (or given up on): a run's end settles the config for good. */
  async delivered(due: PushDue): Promise<void> {
    await this.engine.run(
      `UPDATE a2a_push_configs SET delivered = ?, settled = ?, lease_owner = NULL, lease_until = NULL, attempts = 0
       WHERE task_id = ? AND config_id = ? AND lease_owner = ?`,
      [due.point, due.point.endsWith(':end') ? 1 : 0, due.taskId, due.configId, this.context.owner()],
    );
  }

  /** A failed attempt: the lease is held until `retryAt`, when any replica may try again. */
  async failed(due: PushDue, retryAt: number): Promise<void> {
    await this.engine.run(
      'UPDATE a2a_push_configs SET lease_owner = NULL, lease_until = ?, attempts = attempts + 1 WHERE task_id = ? AND config_id = ? AND lease_owner = ?',
      [retryAt, due.taskId, due.configId, this.context.owner()],
    );
  }

  /** Removes the configs of runs that retention erased (their tombstones have no request). */
  async prune(): Promise<number> {
    const removed = await this.engine.run(
      "DELETE FROM a2a_push_configs WHERE task_id IN (SELECT id FROM runs WHERE mode = 'background' AND request IS NULL) OR task_id NOT IN (SELECT id FROM runs)",
    );
    return removed.changes;
  }
}

function rowOf(found: PushColumns): PushConfigRow {
  return { taskId: found.task_id, configId: found.config_id, subject: found.subject, wire: found.wire, config: JSON.parse(found.config) as PushConfigRow['config'] };
}
