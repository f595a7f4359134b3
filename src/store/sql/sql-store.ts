/**
 * The durable store, written once over an SqlEngine (SQLite or PostgreSQL). Ownership and
 * fencing: every replica holds a lease row; everything a run leaves open (its in-flight
 * marker, operation record, pending approvals and tickets) names its replica as owner. Once a
 * lease lapses, any replica reaps that owner's work (interrupted / uncertain) with guarded
 * updates, and the lapsed replica's own writes — guarded on `state = 'running'|'pending'` and
 * its id — can never commit again.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { ApprovalRequest, ApprovalResolution } from '../../protocol/schemas.js';
import { interruptedRecord, type RunStartRecord, type UsageRecord } from '../../runtime/usage-record.js';
import { sumUsage, type UsageTotalsQuery, type UsageTotalsRow } from '../usage-totals.js';
import type { AuditRecord } from '../audit-record.js';
import type {
  ApprovalRow,
  FinishedRunsPage,
  FinishedRunsQuery,
  JournalEntry,
  OperationClaim,
  OperationRecord,
  OperationState,
  OperatorMarks,
  ReconcileReport,
  StateStore,
  StoreSignal,
  TicketResult,
  TicketRow,
  UsageSummary,
} from '../store.js';
import type { SqlEngine, SqlValue } from './engine.js';
import { JobTable } from './job-table.js';
import { SessionTable } from './session-table.js';
import { RetrievalTable, type RetrievalCapacity } from './retrieval-table.js';
import { migrate } from './migrations.js';
import { LIVE_OWNER, ORPHAN } from './ownership.js';

const SIGNALS = 'agenticdriver_signals';

type PendingWrite =
  | { kind: 'start'; record: RunStartRecord; done: (error?: unknown) => void }
  | { kind: 'usage'; record: UsageRecord; done: (error?: unknown) => void };

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

interface ApprovalColumns {
  subject: string;
  provider: string;
  call_json: string;
  request: string;
  expires_at: number | null;
  state: ApprovalRow['state'];
  resolution: string | null;
  owner_alive: number | boolean;
}

interface TicketColumns {
  execution_id: string;
  run_id: string;
  call_id: string;
  subject: string;
  provider: string;
  tool: string;
  output_schema: string | null;
  state: TicketRow['state'];
  owner_alive: number | boolean;
}

export interface SqlStoreOptions {
  /** Bounds of the retrieval index across all corpora (default 20,000 chunks, 128 MiB). */
  retrievalCapacity?: RetrievalCapacity;
}

export class SqlStateStore implements StateStore {
  private id = randomUUID();
  /** Run starts and usage records, written together in one transaction per turn of the event loop. */
  private pendingWrites: PendingWrite[] = [];
  private signalHandlers: ((signal: StoreSignal) => void)[] = [];
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  private leaseMs = 15_000;
  private closed = false;

  readonly jobs: JobTable;
  readonly sessions: SessionTable;
  readonly retrieval: RetrievalTable;

  private constructor(
    private readonly engine: SqlEngine,
    private readonly now: () => number,
    options: SqlStoreOptions,
  ) {
    this.jobs = new JobTable(engine, () => this.id, now);
    this.sessions = new SessionTable(engine, () => this.id, now);
    this.retrieval = new RetrievalTable(engine, options.retrievalCapacity);
  }

  get replicaId(): string {
    return this.id;
  }

  get kind(): 'sqlite' | 'postgres' {
    return this.engine.dialect;
  }

  /** Migrates the schema and listens for signals addressed to this replica. */
  static async open(engine: SqlEngine, now: () => number = Date.now, options: SqlStoreOptions = {}): Promise<SqlStateStore> {
    const store = new SqlStateStore(guarded(engine), now, options);
    await migrate(engine);
    await engine.subscribe(SIGNALS, (payload) => store.deliver(payload));
    return store;
  }

  async start(options: { leaseMs: number; onLeaseLost(): void; onError?(error: unknown): void }): Promise<ReconcileReport> {
    this.leaseMs = options.leaseMs;
    const now = this.now();
    await this.engine.run('INSERT INTO replicas (id, started_at, lease_expires_at) VALUES (?, ?, ?)', [this.replicaId, now, now + this.leaseMs]);
    // SQLite is one process's file: whatever another replica id left there is dead.
    const report = await this.reap(this.engine.dialect === 'sqlite');
    this.renewTimer = setInterval(() => {
      void this.tick().then(
        (kept) => {
          if (!kept) options.onLeaseLost();
        },
        (error: unknown) => options.onError?.(error),
      );
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref();
    return report;
  }

  /** Renews the lease (false when it was lost), then reaps replicas whose lease lapsed. */
  private async tick(): Promise<boolean> {
    if (this.closed) return true;
    const now = this.now();
    const renewed = await this.engine.run('UPDATE replicas SET lease_expires_at = ? WHERE id = ? AND lease_expires_at > ?', [now + this.leaseMs, this.replicaId, now]);
    if (renewed.changes === 0) {
      // Reaped (or about to be): start over under a new lease so that new work can commit.
      await this.engine.run('DELETE FROM replicas WHERE id = ?', [this.replicaId]);
      this.id = randomUUID();
      await this.engine.run('INSERT INTO replicas (id, started_at, lease_expires_at) VALUES (?, ?, ?)', [this.replicaId, now, now + this.leaseMs]);
      await this.reap(false);
      return false;
    }
    await this.reap(false);
    return true;
  }

  /**
   * Closes what dead replicas left open. Every row is taken by one guarded statement, so two
   * replicas reaping at once never record the same run twice.
   */
  private async reap(everyOtherReplica: boolean): Promise<ReconcileReport> {
    const now = this.now();
    const at = new Date(now).toISOString();
    return this.engine.transaction(async (tx) => {
      if (everyOtherReplica) await tx.run('DELETE FROM replicas WHERE id <> ?', [this.replicaId]);
      else await tx.run('DELETE FROM replicas WHERE lease_expires_at <= ?', [now]);
      const runs = await tx.all<{ record: string }>(`DELETE FROM runs_in_flight WHERE ${ORPHAN} RETURNING record`);
      for (const row of runs) {
        const start = JSON.parse(row.record) as RunStartRecord;
        // The duration is only an upper bound: the replica died somewhere between start and now.
        await this.insertUsage(tx, interruptedRecord(start, at));
      }
      const approvals = await tx.all<{ approval_id: string; subject: string; run_id: string; provider: string; tool: string }>(
        `UPDATE approvals SET state = 'interrupted' WHERE state = 'pending' AND (${ORPHAN}) RETURNING approval_id, subject, run_id, provider, tool`,
      );
      for (const row of approvals) {
        await this.insertAudit(tx, {
          kind: 'approval.resolved',
          at,
          subject: row.subject,
          approvalId: row.approval_id,
          ...(row.run_id ? { runId: row.run_id } : {}),
          ...(row.provider ? { provider: row.provider } : {}),
          ...(row.tool ? { tool: row.tool } : {}),
          outcome: 'interrupted',
        });
      }
      const tickets = await tx.run(`UPDATE tool_tickets SET state = 'interrupted' WHERE state = 'pending' AND (${ORPHAN})`);
      const operations = await tx.run(`UPDATE operations SET state = 'uncertain', updated_at = ? WHERE state = 'running' AND (${ORPHAN})`, [now]);
      const jobs = await this.jobs.interrupt(tx, false);
      const sessions = await this.sessions.interrupt(tx);
      return { runs: runs.length, approvals: approvals.length, tickets: tickets.changes, operations: operations.changes, jobs, sessions };
    });
  }

  async interruptOwnJobs(): Promise<number> {
    return this.engine.transaction((tx) => this.jobs.interrupt(tx, true));
  }

  // --- usage and audit ---------------------------------------------------------------------

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
      if (this.pendingWrites.length === 0) setImmediate(() => void this.flushWrites());
      this.pendingWrites.push(entry((error) => (error === undefined ? resolve() : reject(error))));
    });
  }

  private async flushWrites(): Promise<void> {
    const batch = this.pendingWrites;
    this.pendingWrites = [];
    if (batch.length === 0) return;
    try {
      await this.engine.transaction(async (tx) => {
        for (const entry of batch) {
          if (entry.kind === 'start') {
            await tx.run('INSERT INTO runs_in_flight (run_id, record, owner) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [entry.record.runId, JSON.stringify(entry.record), this.replicaId]);
          } else {
            await this.insertUsage(tx, entry.record);
          }
        }
      });
      for (const entry of batch) entry.done();
    } catch (error) {
      for (const entry of batch) entry.done(error);
    }
  }

  private async insertUsage(tx: SqlEngine, record: UsageRecord): Promise<void> {
    await tx.run('INSERT INTO usage_records (run_id, subject, provider, model, status, finished_at, record) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [
      record.runId,
      record.subject,
      record.provider,
      record.model,
      record.status,
      record.finishedAt,
      JSON.stringify(record),
    ]);
    await tx.run('DELETE FROM runs_in_flight WHERE run_id = ?', [record.runId]);
  }

  async usageSummary(): Promise<UsageSummary> {
    const rows = await this.engine.all<{ status: string; count: number }>('SELECT status, COUNT(*) AS count FROM usage_records GROUP BY status');
    const summary: UsageSummary = { runs: 0, completed: 0, failed: 0, cancelled: 0, interrupted: 0 };
    for (const { status, count } of rows) {
      summary.runs += Number(count);
      if (status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'interrupted') summary[status] = Number(count);
    }
    return summary;
  }

  async usageTotals(query: UsageTotalsQuery): Promise<UsageTotalsRow[]> {
    const rows = await this.engine.all<{ record: string }>('SELECT record FROM usage_records WHERE finished_at >= ?', [query.since ?? '']);
    return sumUsage(
      rows.map((row) => JSON.parse(row.record) as UsageRecord),
      query.by,
    );
  }

  async appendAudit(record: AuditRecord): Promise<void> {
    await this.insertAudit(this.engine, record);
  }

  private async insertAudit(tx: SqlEngine, record: AuditRecord): Promise<void> {
    await tx.run('INSERT INTO approval_audit (at, kind, subject, approval_id, record) VALUES (?, ?, ?, ?, ?)', [
      record.at,
      record.kind,
      record.subject,
      record.approvalId ?? null,
      JSON.stringify(record),
    ]);
  }

  async readAudit(limit: number): Promise<AuditRecord[]> {
    const rows = await this.engine.all<{ record: string }>('SELECT record FROM approval_audit ORDER BY id DESC LIMIT ?', [limit]);
    return rows.map((row) => JSON.parse(row.record) as AuditRecord);
  }

  async auditPage(limit: number, before?: number): Promise<{ id: number; record: AuditRecord }[]> {
    const rows = await this.engine.all<{ id: number; record: string }>('SELECT id, record FROM approval_audit WHERE id < ? ORDER BY id DESC LIMIT ?', [
      before ?? Number.MAX_SAFE_INTEGER,
      limit,
    ]);
    return rows.map((row) => ({ id: Number(row.id), record: JSON.parse(row.record) as AuditRecord }));
  }

  async finishedRuns(query: FinishedRunsQuery): Promise<FinishedRunsPage> {
    const where: string[] = [this.engine.dialect === 'postgres' ? "(record::jsonb ->> 'operation') IS NULL" : "json_extract(record, '$.operation') IS NULL"];
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
    const rows = await this.engine.all<{ record: string }>(`SELECT record FROM usage_records WHERE ${where.join(' AND ')} ORDER BY finished_at DESC, run_id LIMIT ?`, [
      ...params,
      query.limit + 1,
    ]);
    const records = rows.slice(0, query.limit).map((row) => JSON.parse(row.record) as UsageRecord);
    const last = records.at(-1);
    return { records, ...(rows.length > query.limit && last ? { next: { finishedAt: last.finishedAt, runId: last.runId } } : {}) };
  }

  async operatorMarks(): Promise<OperatorMarks> {
    const [approvals] = await this.engine.all<{ count: number | string }>(`SELECT COUNT(*) AS count FROM approvals WHERE state = 'pending' AND ${LIVE_OWNER}`, [this.now()]);
    const [usage] = await this.engine.all<{ last: string | null }>('SELECT MAX(finished_at) AS last FROM usage_records');
    const [jobs] = await this.engine.all<{ count: number | string; updated: number | string | null }>('SELECT COUNT(*) AS count, MAX(updated_at) AS updated FROM jobs');
    return {
      pendingApprovals: Number(approvals?.count ?? 0),
      lastFinishedAt: usage?.last ?? undefined,
      jobs: `${Number(jobs?.count ?? 0)}:${jobs?.updated ?? ''}`,
    };
  }

  // --- operation records (idempotency) -------------------------------------------------------

  async findOperation(subject: string, key: string): Promise<OperationRecord | undefined> {
    const [row] = await this.engine.all<OperationColumns>(`SELECT *, ${LIVE_OWNER} AS owner_alive FROM operations WHERE subject = ? AND key = ?`, [this.now(), subject, key]);
    if (!row) return undefined;
    const events = await this.engine.all<{ at: string; event: string }>('SELECT at, event FROM operation_events WHERE subject = ? AND key = ? ORDER BY seq', [subject, key]);
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

  async claimOperation(claim: OperationClaim): Promise<{ claimed: true } | { claimed: false; existing: OperationRecord }> {
    const now = this.now();
    const inserted = await this.engine.run(
      `INSERT INTO operations (subject, key, fingerprint, run_id, provider, model, state, owner, bytes, created_at, updated_at)
       VALUES (?, ?, ?, NULL, ?, ?, 'running', ?, 0, ?, ?) ON CONFLICT DO NOTHING`,
      [claim.subject, claim.key, claim.fingerprint, claim.provider, claim.model, this.replicaId, now, now],
    );
    if (inserted.changes === 1) return { claimed: true };
    const existing = await this.findOperation(claim.subject, claim.key);
    if (!existing) throw storeError('The operation record vanished while it was being claimed.');
    return { claimed: false, existing };
  }

  async appendOperation(
    subject: string,
    key: string,
    runId: string,
    entry: JournalEntry,
    options: { maxBytes: number; state?: Exclude<OperationState, 'running'> },
  ): Promise<void> {
    const json = JSON.stringify(entry.event);
    const bytes = Buffer.byteLength(json);
    const terminal = options.state !== undefined;
    await this.engine.transaction(async (tx) => {
      const updated = await tx.run(
        `UPDATE operations SET bytes = bytes + ?, updated_at = ?, state = ?, run_id = ?
         WHERE subject = ? AND key = ? AND owner = ? AND state = 'running' AND (run_id IS NULL OR run_id = ?) AND (? = 1 OR bytes + ? <= ?)`,
        [bytes, this.now(), options.state ?? 'running', runId, subject, key, this.replicaId, runId, terminal ? 1 : 0, bytes, options.maxBytes],
      );
      if (updated.changes === 0) {
        const [row] = await tx.all<{ state: string; owner: string | null }>('SELECT state, owner FROM operations WHERE subject = ? AND key = ?', [subject, key]);
        if (row?.state === 'running' && row.owner === this.replicaId) {
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

  async expireOperations(before: number): Promise<number> {
    return this.engine.transaction(async (tx) => {
      const expired = await tx.all<{ subject: string; key: string }>("DELETE FROM operations WHERE state <> 'running' AND updated_at < ? RETURNING subject, key", [before]);
      for (const { subject, key } of expired) await tx.run('DELETE FROM operation_events WHERE subject = ? AND key = ?', [subject, key]);
      return expired.length;
    });
  }

  // --- pending approvals ---------------------------------------------------------------------

  async openApproval(row: Omit<ApprovalRow, 'state' | 'resolution' | 'ownerAlive'>, audit: AuditRecord): Promise<void> {
    await this.engine.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO approvals (approval_id, subject, run_id, provider, tool, call_json, request, expires_at, owner, state)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
        [row.approval.approvalId, row.subject, row.approval.runId, row.provider, row.approval.call.name, row.call, JSON.stringify(row.approval), row.expiresAt ?? null, this.replicaId],
      );
      await this.insertAudit(tx, audit);
    });
  }

  async readApproval(approvalId: string): Promise<ApprovalRow | undefined> {
    const [row] = await this.engine.all<ApprovalColumns>(`SELECT *, ${LIVE_OWNER} AS owner_alive FROM approvals WHERE approval_id = ?`, [this.now(), approvalId]);
    return row && approvalRow(row);
  }

  async pendingApprovals(limit: number): Promise<ApprovalRow[]> {
    const rows = await this.engine.all<ApprovalColumns>(
      `SELECT *, ${LIVE_OWNER} AS owner_alive FROM approvals WHERE state = 'pending' AND ${LIVE_OWNER} LIMIT ?`,
      [this.now(), this.now(), MAX_PENDING_LISTED],
    );
    // Oldest first by when they were requested (kept in the row's JSON, the same on both engines).
    const pending = rows.map(approvalRow).sort((a, b) => a.approval.requestedAt.localeCompare(b.approval.requestedAt) || a.approval.approvalId.localeCompare(b.approval.approvalId));
    return pending.slice(0, limit);
  }

  async resolveApproval(resolution: ApprovalResolution, audit: AuditRecord): Promise<boolean> {
    return this.engine.transaction(async (tx) => {
      const [row] = await tx.all<{ owner: string }>(
        `UPDATE approvals SET state = ?, resolution = ? WHERE approval_id = ? AND state = 'pending' AND ${LIVE_OWNER} RETURNING owner`,
        [resolution.outcome, JSON.stringify(resolution), resolution.approvalId, this.now()],
      );
      if (!row) return false;
      await this.insertAudit(tx, audit);
      await this.signal(tx, row.owner, { kind: 'approval', id: resolution.approvalId });
      return true;
    });
  }

  // --- application-tool tickets ----------------------------------------------------------------

  async openTicket(row: Omit<TicketRow, 'state' | 'ownerAlive'>): Promise<void> {
    await this.engine.run(
      `INSERT INTO tool_tickets (execution_id, run_id, call_id, subject, provider, tool, output_schema, owner, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
      [row.executionId, row.runId, row.callId, row.subject, row.provider, row.tool, row.outputSchema === undefined ? null : JSON.stringify(row.outputSchema), this.replicaId],
    );
  }

  async readTicket(executionId: string): Promise<TicketRow | undefined> {
    const [row] = await this.engine.all<TicketColumns>(`SELECT *, ${LIVE_OWNER} AS owner_alive FROM tool_tickets WHERE execution_id = ?`, [this.now(), executionId]);
    if (!row) return undefined;
    return {
      executionId: row.execution_id,
      runId: row.run_id,
      callId: row.call_id,
      subject: row.subject,
      provider: row.provider,
      tool: row.tool,
      outputSchema: row.output_schema === null ? undefined : (JSON.parse(row.output_schema) as unknown),
      state: row.state,
      ownerAlive: Boolean(row.owner_alive),
    };
  }

  async settleTicket(executionId: string, result: TicketResult): Promise<boolean> {
    return this.engine.transaction(async (tx) => {
      const [row] = await tx.all<{ owner: string }>(
        `UPDATE tool_tickets SET state = 'accepted', result = ? WHERE execution_id = ? AND state = 'pending' AND ${LIVE_OWNER} RETURNING owner`,
        [JSON.stringify(result), executionId, this.now()],
      );
      if (!row) return false;
      await this.signal(tx, row.owner, { kind: 'ticket', id: executionId });
      return true;
    });
  }

  async ticketResult(executionId: string): Promise<TicketResult | undefined> {
    const [row] = await this.engine.all<{ result: string | null }>("SELECT result FROM tool_tickets WHERE execution_id = ? AND state = 'accepted'", [executionId]);
    return row?.result ? (JSON.parse(row.result) as TicketResult) : undefined;
  }

  async closeTicket(executionId: string): Promise<void> {
    await this.engine.run("UPDATE tool_tickets SET state = 'closed' WHERE execution_id = ? AND state = 'pending'", [executionId]);
  }

  async signalProgress(executionId: string): Promise<void> {
    const [row] = await this.engine.all<{ owner: string | null }>("SELECT owner FROM tool_tickets WHERE execution_id = ? AND state = 'pending'", [executionId]);
    if (row?.owner) await this.signal(this.engine, row.owner, { kind: 'progress', id: executionId });
  }

  // --- signals -------------------------------------------------------------------------------

  onSignal(handler: (signal: StoreSignal) => void): void {
    this.signalHandlers.push(handler);
  }

  signalOwner(owner: string, signal: StoreSignal): Promise<void> {
    return this.signal(this.engine, owner, signal);
  }

  private async signal(tx: SqlEngine, to: string, signal: StoreSignal): Promise<void> {
    await tx.publish(SIGNALS, JSON.stringify({ to, ...signal }));
  }

  private deliver(payload: string): void {
    let message: { to?: unknown; kind?: unknown; id?: unknown };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (message.to !== this.replicaId || typeof message.id !== 'string') return;
    if (message.kind !== 'approval' && message.kind !== 'ticket' && message.kind !== 'progress' && message.kind !== 'session') return;
    for (const handler of this.signalHandlers) handler({ kind: message.kind, id: message.id });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewTimer);
    await this.flushWrites();
    // A clean stop gives up the lease at once; what is still open is reaped by whoever is left
    // (on SQLite, by the next start).
    await this.engine.run('DELETE FROM replicas WHERE id = ?', [this.replicaId]).catch(() => undefined);
    await this.engine.close();
  }
}

/**
 * A database that fails (disk full, server down, connection lost) is a typed 503 for whoever
 * asked, never a 500; errors the store raises itself pass through. A failed transaction
 * rolled back, so nothing is half written.
 */
function approvalRow(row: ApprovalColumns): ApprovalRow {
  return {
    approval: JSON.parse(row.request) as ApprovalRequest,
    subject: row.subject,
    provider: row.provider,
    call: row.call_json,
    expiresAt: row.expires_at ?? undefined,
    state: row.state,
    resolution: row.resolution ? (JSON.parse(row.resolution) as ApprovalResolution) : undefined,
    ownerAlive: Boolean(row.owner_alive),
  };
}

/** Pending approvals read for the operator's list before sorting (they are bounded per replica by approvals.maxPending). */
const MAX_PENDING_LISTED = 10_000;

function guarded(engine: SqlEngine): SqlEngine {
  const wrap = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof DriverError) throw error;
      throw new DriverError('OPERATION_STORE_ERROR', 'The state store is unavailable.', { retryable: true, cause: error });
    }
  };
  return {
    dialect: engine.dialect,
    all: (sql, params) => wrap(() => engine.all(sql, params)),
    run: (sql, params) => wrap(() => engine.run(sql, params)),
    exec: (sql) => wrap(() => engine.exec(sql)),
    transaction: (body) => wrap(() => engine.transaction(body)),
    publish: (channel, payload) => wrap(() => engine.publish(channel, payload)),
    subscribe: (channel, handler) => wrap(() => engine.subscribe(channel, handler)),
    close: () => engine.close(),
  };
}

function storeError(message: string): DriverError {
  return new DriverError('OPERATION_STORE_ERROR', message, { retryable: false, outcome: 'uncertain' });
}
