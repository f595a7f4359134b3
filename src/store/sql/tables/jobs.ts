/**
 * Durable jobs — background runs — in the SQL store: their rows of the one record of runs
 * (`runs.ts`, mode `background`), their committed event logs, fair claiming, fencing by the
 * owning replica's lease, and tombstones after retention. Written once for both engines; on
 * PostgreSQL a claim skips rows another replica is claiming (`FOR UPDATE SKIP LOCKED`), so each
 * queued job starts on exactly one replica.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../../protocol/errors.js';
import type { ErrorInfo, JobInfo, JobState, RunEvent, RunRequest } from '../../../protocol/schemas.js';
import type { JobChange, JobFilter, JobRow, JobStore, JobSubmission } from '../../store.js';
import type { SqlEngine, SqlValue } from '../engine.js';
import { CHECKPOINT_OWNER, ORPHAN, rowLock } from '../ownership.js';
import type { Migrations, Reaped } from '../table.js';
import { dropCheckpoint, handOver } from './run-checkpoints.js';
import { RUN_CHANGES, RUN_COLUMNS, type RunColumns } from './runs.js';

/** The first step (released): the former `jobs` and `job_events` tables. */
const JOBS = `CREATE TABLE jobs (
     id TEXT PRIMARY KEY, subject TEXT NOT NULL, job_key TEXT NOT NULL, fingerprint TEXT NOT NULL, token_id TEXT NOT NULL,
     request TEXT, run_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, state TEXT NOT NULL,
     cursor BIGINT NOT NULL, cancel_requested INTEGER NOT NULL, owner TEXT, created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL, expires_at BIGINT, retention_ms BIGINT NOT NULL, bytes BIGINT NOT NULL,
     UNIQUE (subject, job_key));
   CREATE INDEX jobs_queued ON jobs (created_at) WHERE state = 'queued';
   CREATE INDEX jobs_running ON jobs (owner) WHERE state = 'running';
   CREATE TABLE job_events (job_id TEXT NOT NULL, seq BIGINT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (job_id, seq))`;

/** The jobs' rows and events move to the one record of runs (`runs.ts`); `timestamp` reads an event's time. */
function movedToRuns(timestamp: string): string {
  return `INSERT INTO runs (${RUN_COLUMNS})
     SELECT id, 'background', subject, job_key, fingerprint, token_id, request, run_id, provider, model, state, cursor, cancel_requested, owner, NULL, created_at, updated_at, expires_at, retention_ms, bytes FROM jobs;
   INSERT INTO run_events (id, seq, at, event) SELECT job_id, seq, COALESCE(${timestamp}, ''), event FROM job_events;
   DROP TABLE job_events;
   DROP TABLE jobs`;
}

/** A background run's rows: every statement of this module reads and writes only those. */
const BACKGROUND = "mode = 'background'";

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

/**
 * A background run's row: these columns are always set. `waiting` (a checkpointed run waiting
 * for a person, `run-checkpoints.ts`) is a state of the store only: on the wire it is `running`.
 */
type JobColumns = RunColumns & { state: JobState | 'waiting'; run_key: string; fingerprint: string; token_id: string; run_id: string; retention_ms: number };

/** The row has a checkpoint (it waited for a person, and goes on from there). */
const CHECKPOINTED = 'EXISTS (SELECT 1 FROM run_checkpoints c WHERE c.id = runs.id)';

export class JobTable implements JobStore, Reaped {
  static readonly migrations: Migrations = {
    sqlite: [JOBS, movedToRuns("json_extract(event, '$.timestamp')")],
    postgres: [JOBS, movedToRuns("event::jsonb ->> 'timestamp'")],
  };

  private readonly listeners = new Set<(change: JobChange) => void>();

  constructor(
    private readonly engine: SqlEngine,
    private readonly owner: () => string,
    private readonly now: () => number,
  ) {}

  /** Listens for the changes every replica publishes (the store does this once, when it opens). */
  async listen(): Promise<void> {
    await this.engine.subscribe(RUN_CHANGES, (payload) => {
      let change: JobChange;
      try {
        change = JSON.parse(payload) as JobChange;
      } catch {
        return;
      }
      for (const listener of this.listeners) listener(change);
    });
  }

  onChange(listener: (change: JobChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Announces a change through `tx`: it leaves at the commit, and not at all after a rollback. */
  private announce(tx: SqlEngine, change: JobChange): Promise<void> {
    return tx.publish(RUN_CHANGES, JSON.stringify(change));
  }

  async submit(submission: JobSubmission): Promise<{ job: JobRow; created: boolean }> {
    return this.engine.transaction(async (tx) => {
      const existing = () => tx.all<JobColumns>(`SELECT * FROM runs WHERE ${BACKGROUND} AND subject = ? AND run_key = ?`, [submission.subject, submission.key]);
      const same = (found: JobColumns) => {
        if (found.fingerprint !== submission.fingerprint) throw new DriverError('IDEMPOTENCY_CONFLICT', 'This job key was used with a different request.');
        return { job: row(found), created: false };
      };
      const [before] = await existing();
      if (before) return same(before);
      const [{ total } = { total: 0 }] = await tx.all<{ total: number }>(`SELECT COUNT(*) AS total FROM runs WHERE ${BACKGROUND}`);
      const [{ mine } = { mine: 0 }] = await tx.all<{ mine: number }>(`SELECT COUNT(*) AS mine FROM runs WHERE ${BACKGROUND} AND subject = ?`, [submission.subject]);
      if (Number(total) >= submission.maxJobs || Number(mine) >= submission.maxJobsPerSubject) {
        throw new DriverError('JOB_STORE_FULL', 'The job store is full; finished jobs leave it when their retention ends.', { retryable: true });
      }
      const now = this.now();
      const request = JSON.stringify(submission.request);
      const id = randomUUID();
      // A submission of the same key committing meanwhile wins; this one then returns that job.
      const inserted = await tx.run(
        `INSERT INTO runs (id, mode, subject, run_key, fingerprint, token_id, request, run_id, provider, model, state, cursor, cancel_requested, owner, created_at, updated_at, expires_at, retention_ms, bytes)
         VALUES (?, 'background', ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, 0, NULL, ?, ?, NULL, ?, ?) ON CONFLICT (subject, mode, run_key) DO NOTHING`,
        [id, submission.subject, submission.key, submission.fingerprint, submission.tokenId, request, randomUUID(), submission.request.provider, submission.request.model, now, now, submission.retentionMs, Buffer.byteLength(request)],
      );
      const [after] = await existing();
      if (!after) throw new DriverError('JOB_STORE_ERROR', 'The job could not be recorded.', { retryable: true });
      if (inserted.changes !== 1) return same(after);
      await this.announce(tx, { kind: 'queued', id });
      return { job: row(after), created: true };
    });
  }

  async read(id: string): Promise<JobRow | undefined> {
    const [found] = await this.engine.all<JobColumns>(`SELECT * FROM runs WHERE ${BACKGROUND} AND id = ?`, [id]);
    return found && row(found);
  }

  async list(limit: number, filter: JobFilter = {}): Promise<JobRow[]> {
    if (filter.providers?.length === 0) return [];
    const conditions: string[] = [BACKGROUND];
    const values: SqlValue[] = [];
    const add = (condition: string, ...params: SqlValue[]) => {
      conditions.push(condition);
      values.push(...params);
    };
    if (filter.state === 'running') add("state IN ('running', 'waiting')");
    else if (filter.state) add('state = ?', filter.state);
    if (filter.subject !== undefined) add('subject = ?', filter.subject);
    if (filter.providers) add(`provider IN (${filter.providers.map(() => '?').join(', ')})`, ...filter.providers);
    const rows = await this.engine.all<JobColumns>(`SELECT * FROM runs WHERE ${conditions.join(' AND ')} ORDER BY updated_at DESC, id LIMIT ?`, [...values, limit]);
    return rows.map(row);
  }

  async events(id: string, after: number, limit: number, maxBytes: number): Promise<RunEvent[]> {
    const rows = await this.engine.all<{ event: string }>('SELECT event FROM run_events WHERE id = ? AND seq > ? ORDER BY seq LIMIT ?', [id, after, limit]);
    const events: RunEvent[] = [];
    let bytes = 0;
    for (const { event } of rows) {
      bytes += Buffer.byteLength(event);
      if (events.length > 0 && bytes > maxBytes) break;
      events.push(JSON.parse(event) as RunEvent);
    }
    return events;
  }

  private get lock(): string {
    return rowLock(this.engine);
  }

  /**
   * Starts the next queued job on this replica, fairly: the subject with the fewest running
   * jobs first, then the oldest job; none of `skipSubjects` (at their admission cap here).
   * Undefined when nothing is queued.
   */
  async claim(skipSubjects: readonly string[] = []): Promise<JobRow | undefined> {
    const lock = this.engine.dialect === 'postgres' ? 'FOR UPDATE OF j SKIP LOCKED' : '';
    const skip = skipSubjects.length > 0 ? `AND j.subject NOT IN (${skipSubjects.map(() => '?').join(', ')})` : '';
    return this.engine.transaction(async (tx) => {
      // Each subject's running count is computed once, not once per queued row: a long queue
      // (1,000 jobs woken by their approvals at once) made a correlated count quadratic.
      const [next] = await tx.all<{ id: string }>(
        `SELECT j.id FROM runs j
           LEFT JOIN (SELECT subject, COUNT(*) AS running FROM runs WHERE mode = 'background' AND state = 'running' GROUP BY subject) r ON r.subject = j.subject
         WHERE j.mode = 'background' AND j.state = 'queued' ${skip}
         ORDER BY COALESCE(r.running, 0), j.created_at, j.id
         LIMIT 1 ${lock}`,
        [...skipSubjects],
      );
      if (!next) return undefined;
      const [started] = await tx.all<JobColumns>(
        `UPDATE runs SET state = 'running', owner = ?, updated_at = ? WHERE ${BACKGROUND} AND id = ? AND state = 'queued' RETURNING *`,
        [this.owner(), this.now(), next.id],
      );
      if (started) await handOver(tx, next.id, CHECKPOINT_OWNER, this.owner());
      return started && row(started);
    });
  }

  /**
   * Gives back a job this replica claimed but could not start (no admission slot was left by
   * then): queued again as it was, or cancelled if a cancel arrived meanwhile.
   */
  async requeue(id: string): Promise<void> {
    await this.engine.transaction(async (tx) => {
      const [job] = await tx.all<JobColumns>(`SELECT * FROM runs WHERE ${BACKGROUND} AND id = ? AND owner = ? AND state = 'running' AND (cursor = 0 OR ${CHECKPOINTED}) ${this.lock}`, [id, this.owner()]);
      if (!job) return;
      // A checkpointed job goes on from its checkpoint, which ends what it waits for even when cancelled.
      const checkpointed = await handOver(tx, id, this.owner(), CHECKPOINT_OWNER);
      await tx.run("UPDATE runs SET state = 'queued', owner = ? WHERE id = ?", [checkpointed ? CHECKPOINT_OWNER : null, id]);
      if (Number(job.cancel_requested) === 1 && !checkpointed) await this.finish(tx, row(job), 'cancelled', new DriverError('CANCELLED', 'The job was cancelled before it started.').toJSON());
      else await this.announce(tx, { kind: 'queued', id });
    });
  }

  /**
   * Commits the next event of a job this replica runs (sequence = cursor + 1); a terminal
   * event sets the final state and the retention deadline. Fenced: fails once the job is no
   * longer this replica's running job.
   */
  async append(id: string, event: RunEvent, maxJobBytes: number): Promise<void> {
    const json = JSON.stringify(event);
    const bytes = Buffer.byteLength(json);
    const terminal = event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.cancelled';
    const state: JobState | undefined = terminal ? (event.type === 'run.completed' ? 'completed' : event.type === 'run.failed' ? 'failed' : 'cancelled') : undefined;
    await this.engine.transaction(async (tx) => {
      const now = this.now();
      const updated = await tx.run(
        `UPDATE runs SET cursor = cursor + 1, bytes = bytes + ?, updated_at = ?, state = ?, expires_at = CASE WHEN ? = 1 THEN ? + retention_ms ELSE expires_at END
         WHERE ${BACKGROUND} AND id = ? AND owner = ? AND state = 'running' AND cursor = ? AND (? = 1 OR bytes + ? <= ?)`,
        [bytes, now, state ?? 'running', terminal ? 1 : 0, now, id, this.owner(), event.sequence - 1, terminal ? 1 : 0, bytes, maxJobBytes],
      );
      if (terminal) await dropCheckpoint(tx, id);
      if (updated.changes === 0) {
        const [current] = await tx.all<{ state: string; owner: string | null; cursor: number }>(`SELECT state, owner, cursor FROM runs WHERE ${BACKGROUND} AND id = ?`, [id]);
        if (current?.state === 'running' && current.owner === this.owner() && Number(current.cursor) === event.sequence - 1) {
          throw new DriverError('JOB_RECORD_LIMIT', `The job's record would exceed ${maxJobBytes} bytes.`, { outcome: 'uncertain' });
        }
        throw new DriverError('JOB_LEASE_LOST', 'This job is no longer this host replica\'s to run.', { outcome: 'uncertain' });
      }
      await tx.run('INSERT INTO run_events (id, seq, at, event) VALUES (?, ?, ?, ?)', [id, event.sequence, event.timestamp, json]);
      await this.announce(tx, { kind: 'events', id });
    });
  }

  /** Cancels a queued job at once (its log gets run.started + run.cancelled); a running one is flagged for its owner. */
  async cancel(id: string): Promise<JobRow | undefined> {
    return this.engine.transaction(async (tx) => {
      const [job] = await tx.all<JobColumns>(`SELECT * FROM runs WHERE ${BACKGROUND} AND id = ? ${this.lock}`, [id]);
      if (!job) return undefined;
      const [checkpoint] = await tx.all('SELECT 1 FROM run_checkpoints WHERE id = ?', [id]);
      if (job.state === 'queued' && !checkpoint) {
        await this.finish(tx, row(job), 'cancelled', new DriverError('CANCELLED', 'The job was cancelled before it started.').toJSON());
      } else if (job.state === 'waiting' || job.state === 'queued') {
        // A checkpointed job is queued again to end there: what it waits for is cancelled as a connected run's would be.
        await tx.run("UPDATE runs SET cancel_requested = 1, state = 'queued', owner = ?, updated_at = ? WHERE id = ?", [CHECKPOINT_OWNER, Math.max(this.now(), Number(job.updated_at)), id]);
        await this.announce(tx, { kind: 'queued', id });
      } else if (job.state === 'running') {
        await tx.run('UPDATE runs SET cancel_requested = 1, updated_at = ? WHERE id = ?', [Math.max(this.now(), Number(job.updated_at)), id]);
        await this.announce(tx, { kind: 'cancel', id });
      }
      const [after] = await tx.all<JobColumns>('SELECT * FROM runs WHERE id = ?', [id]);
      return after && row(after);
    });
  }

  /** Ids of this replica's running jobs that a cancel was requested for. */
  async cancelRequested(): Promise<string[]> {
    const rows = await this.engine.all<{ id: string }>(`SELECT id FROM runs WHERE ${BACKGROUND} AND owner = ? AND state = 'running' AND cancel_requested = 1`, [this.owner()]);
    return rows.map((found) => found.id);
  }

  /** Fails a job whose dispatch was refused (queued or running) with the cause's code. */
  async fail(id: string, error: ErrorInfo, state: 'failed' | 'interrupted' = 'failed'): Promise<void> {
    await this.engine.transaction(async (tx) => {
      const [job] = await tx.all<JobColumns>(`SELECT * FROM runs WHERE ${BACKGROUND} AND id = ? AND state IN ('queued', 'running') ${this.lock}`, [id]);
      if (job) await this.finish(tx, row(job), state, error);
    });
  }

  /**
   * Running jobs whose owner is gone (or, with `mine`, this replica's own at a clean stop)
   * become `interrupted`: a `run.failed` JOB_INTERRUPTED barrier, outcome uncertain, closes
   * their log. They are never run again. Returns how many.
   */
  private async interrupt(tx: SqlEngine, mine: boolean): Promise<number> {
    const jobs = await tx.all<JobColumns>(`SELECT * FROM runs WHERE ${BACKGROUND} AND state = 'running' AND (${mine ? 'owner = ?' : ORPHAN}) ${this.lock}`, mine ? [this.owner()] : []);
    const error = new DriverError('JOB_INTERRUPTED', 'The host running this job stopped; what it did after its last event is uncertain, and it is not run again.', { outcome: 'uncertain' }).toJSON();
    for (const job of jobs) await this.finish(tx, row(job), 'interrupted', error);
    return jobs.length;
  }

  reap(tx: SqlEngine): Promise<number> {
    return this.interrupt(tx, false);
  }

  /** At a clean stop: this replica's running jobs become interrupted (never re-run); queued ones stay queued. */
  interruptOwn(): Promise<number> {
    return this.engine.transaction((tx) => this.interrupt(tx, true));
  }

  async changeMark(): Promise<string> {
    const [row] = await this.engine.all<{ count: number | string; updated: number | string | null }>(`SELECT COUNT(*) AS count, MAX(updated_at) AS updated FROM runs WHERE ${BACKGROUND}`);
    return `${Number(row?.count ?? 0)}:${row?.updated ?? ''}`;
  }

  async queued(): Promise<number> {
    const [found] = await this.engine.all<{ count: number }>(`SELECT COUNT(*) AS count FROM runs WHERE ${BACKGROUND} AND state = 'queued'`);
    return Number(found?.count ?? 0);
  }

  /** Erases the request and events of jobs whose retention ended; the row stays as a tombstone. */
  async expire(): Promise<number> {
    return this.engine.transaction(async (tx) => {
      const expired = await tx.all<{ id: string }>(`UPDATE runs SET request = NULL, bytes = 0 WHERE ${BACKGROUND} AND expires_at IS NOT NULL AND expires_at <= ? AND request IS NOT NULL RETURNING id`, [this.now()]);
      for (const { id } of expired) await tx.run('DELETE FROM run_events WHERE id = ?', [id]);
      return expired.length;
    });
  }

  /** Closes a job's log with its terminal event (and a run.started first when it never started). */
  private async finish(tx: SqlEngine, job: JobRow, state: JobState, error: ErrorInfo): Promise<void> {
    const now = Math.max(this.now(), Date.parse(job.info.updatedAt));
    const at = new Date(now).toISOString();
    const base = { runId: job.info.runId, timestamp: at };
    let cursor = job.info.cursor;
    const events: RunEvent[] = [];
    if (cursor === 0) events.push({ ...base, type: 'run.started', sequence: ++cursor, provider: job.info.provider, model: job.info.model } as RunEvent);
    events.push({ ...base, type: state === 'cancelled' ? 'run.cancelled' : 'run.failed', sequence: ++cursor, error } as RunEvent);
    for (const event of events) await tx.run('INSERT INTO run_events (id, seq, at, event) VALUES (?, ?, ?, ?)', [job.info.id, event.sequence, at, JSON.stringify(event)]);
    await dropCheckpoint(tx, job.info.id);
    await tx.run('UPDATE runs SET state = ?, cursor = ?, updated_at = ?, expires_at = ? + retention_ms WHERE id = ?', [state, cursor, now, now, job.info.id]);
    await this.announce(tx, { kind: 'events', id: job.info.id });
  }
}

function row(columns: JobColumns): JobRow {
  const info: JobInfo = {
    id: columns.id,
    runId: columns.run_id,
    provider: columns.provider,
    model: columns.model,
    state: columns.state === 'waiting' ? 'running' : columns.state,
    cursor: Number(columns.cursor),
    cancelRequested: Boolean(Number(columns.cancel_requested)),
    createdAt: new Date(Number(columns.created_at)).toISOString(),
    updatedAt: new Date(Number(columns.updated_at)).toISOString(),
  };
  if (TERMINAL.has(columns.state) && columns.expires_at !== null) info.expiresAt = new Date(Number(columns.expires_at)).toISOString();
  return {
    info,
    subject: columns.subject,
    tokenId: columns.token_id,
    fingerprint: columns.fingerprint,
    request: columns.request === null ? undefined : (JSON.parse(columns.request) as RunRequest),
    expired: columns.request === null,
    owner: columns.owner ?? undefined,
  };
}
