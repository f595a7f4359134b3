/**
 * The durable store, written once over an SqlEngine (SQLite or PostgreSQL): one object of table
 * modules (`tables/*.ts`, each with its SQL and migrations). Ownership and fencing: every
 * replica holds a lease row; everything a run leaves open (its in-flight marker, operation
 * record, pending approvals and tickets, a running job or session turn) names its replica as
 * owner. Once a lease lapses, any replica reaps that owner's work (interrupted / uncertain)
 * with guarded updates, and the lapsed replica's own writes — guarded on
 * `state = 'running'|'pending'` and its id — can never commit again.
 */
import { DriverError } from '../../protocol/errors.js';
import type { OperatorMarks, ReconcileReport, StateStore } from '../store.js';
import type { SqlEngine } from './engine.js';
import { GroupCommit } from './group-commit.js';
import { migrate } from './migrate.js';
import type { Reaped, TableContext, TableModule } from './table.js';
import { ApprovalTable } from './tables/approvals.js';
import { AuditTable } from './tables/audit.js';
import { JobTable } from './tables/jobs.js';
import { LimitTable } from './tables/limits.js';
import { OperationTable } from './tables/operations.js';
import { PushConfigTable } from './tables/push-configs.js';
import { CheckpointTable } from './tables/run-checkpoints.js';
import { ReplicaTable } from './tables/replicas.js';
import { RetrievalTable } from './tables/retrieval.js';
import { RunRecordTable } from './tables/run-records.js';
import { RUNS_MIGRATIONS } from './tables/runs.js';
import type { RetrievalCapacity } from '../retrieval-capacity.js';
import { SessionTable } from './tables/sessions.js';
import { TicketTable } from './tables/tickets.js';
import { UsageTable } from './tables/usage.js';

/**
 * Every table module, in the order their migrations run (a module may build on those before it):
 * `operations`, `jobs` and then `usage` move their former tables' rows into `runs`, in that
 * order (a run in flight joins the row of its operation or job).
 */
export const TABLES: readonly TableModule[] = [
  { name: 'replicas', migrations: ReplicaTable.migrations },
  { name: 'runs', migrations: RUNS_MIGRATIONS },
  { name: 'audit', migrations: AuditTable.migrations },
  { name: 'approvals', migrations: ApprovalTable.migrations },
  { name: 'tickets', migrations: TicketTable.migrations },
  { name: 'operations', migrations: OperationTable.migrations },
  { name: 'jobs', migrations: JobTable.migrations },
  { name: 'usage', migrations: UsageTable.migrations },
  { name: 'sessions', migrations: SessionTable.migrations },
  { name: 'retrieval', migrations: RetrievalTable.migrations },
  { name: 'run_checkpoints', migrations: CheckpointTable.migrations },
  { name: 'limits', migrations: LimitTable.migrations },
  { name: 'a2a_push_configs', migrations: PushConfigTable.migrations },
];

export interface SqlStoreOptions {
  /** Bounds of the retrieval index across all corpora (default 20,000 chunks, 128 MiB). */
  retrievalCapacity?: RetrievalCapacity;
}

export class SqlStateStore implements StateStore {
  readonly replica: ReplicaTable;
  readonly usage: UsageTable;
  readonly audit: AuditTable;
  readonly operations: OperationTable;
  readonly approvals: ApprovalTable;
  readonly tickets: TicketTable;
  readonly jobs: JobTable;
  readonly checkpoints: CheckpointTable;
  readonly runs: RunRecordTable;
  readonly sessions: SessionTable;
  readonly retrieval: RetrievalTable;
  readonly limits: LimitTable;
  readonly pushConfigs: PushConfigTable;
  /** One transaction for the writes tables queue off the request path (usage and start records, run records' events). */
  private readonly group: GroupCommit;
  /** What reaping closes, by the report's name for it. */
  private readonly reaped: [keyof ReconcileReport, Reaped][];
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  private ticking: Promise<void> | undefined;
  private leaseMs = 15_000;
  private closed = false;

  private constructor(
    private readonly engine: SqlEngine,
    private readonly now: () => number,
    options: SqlStoreOptions,
  ) {
    this.replica = new ReplicaTable({ engine, now });
    const context: TableContext = { engine, now, owner: () => this.replica.id };
    this.group = new GroupCommit(engine);
    this.usage = new UsageTable(context, this.group);
    this.audit = new AuditTable(context);
    this.operations = new OperationTable(context);
    this.approvals = new ApprovalTable(context, this.audit, this.replica);
    this.tickets = new TicketTable(context, this.replica);
    this.jobs = new JobTable(engine, context.owner, now);
    this.checkpoints = new CheckpointTable(context);
    this.runs = new RunRecordTable(context, this.group);
    // Events first: a run's first events join the row its start record made, so that its usage
    // record in the same commit finds a run record (not a bare marker to delete and make again).
    this.group.add(this.runs);
    this.group.add(this.usage);
    this.sessions = new SessionTable(engine, context.owner, now);
    this.retrieval = new RetrievalTable(engine, options.retrievalCapacity);
    this.limits = new LimitTable(context);
    this.pushConfigs = new PushConfigTable(context);
    this.reaped = [
      ['runs', this.usage],
      ['approvals', this.approvals],
      ['tickets', this.tickets],
      ['operations', this.operations],
      ['jobs', this.jobs],
      ['sessions', this.sessions],
      ['records', this.runs],
    ];
  }

  get kind(): 'sqlite' | 'postgres' {
    return this.engine.dialect;
  }

  /** Migrates the schema and listens for signals addressed to this replica, and for job changes. */
  static async open(engine: SqlEngine, now: () => number = Date.now, options: SqlStoreOptions = {}): Promise<SqlStateStore> {
    const store = new SqlStateStore(guarded(engine), now, options);
    await migrate(engine, TABLES);
    await store.replica.listen();
    await store.jobs.listen();
    await store.runs.listen();
    return store;
  }

  async start(options: { leaseMs: number; onLeaseLost(): void; onError?(error: unknown): void }): Promise<ReconcileReport> {
    this.leaseMs = options.leaseMs;
    await this.replica.register(this.leaseMs);
    // SQLite is one process's file: whatever another replica id left there is dead.
    const report = await this.reap(this.engine.dialect === 'sqlite');
    this.renewTimer = setInterval(() => {
      // A tick still waiting on the database is not joined by another (they would pile up on the pool).
      if (this.ticking) return;
      this.ticking = this.tick(options.onLeaseLost)
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => (this.ticking = undefined));
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref();
    return report;
  }

  /** Renews the lease, then reaps replicas whose lease lapsed. A lost lease aborts this replica's runs first. */
  private async tick(onLeaseLost: () => void): Promise<void> {
    if (this.closed) return;
    if (!(await this.replica.renew(this.leaseMs))) {
      onLeaseLost();
      // Reaped (or about to be): start over under a new lease so that new work can commit.
      await this.replica.rejoin(this.leaseMs);
    }
    await this.reap(false);
  }

  /**
   * Closes what dead replicas left open. Every row is taken by one guarded statement, so two
   * replicas reaping at once never record the same run twice.
   */
  private async reap(everyOtherReplica: boolean): Promise<ReconcileReport> {
    const now = this.now();
    return this.engine.transaction(async (tx) => {
      await this.replica.forgetDead(tx, everyOtherReplica);
      const report = { runs: 0, approvals: 0, tickets: 0, operations: 0, jobs: 0, sessions: 0, records: 0 };
      for (const [name, table] of this.reaped) report[name] = await table.reap(tx, now);
      await this.limits.reap(tx);
      return report;
    });
  }

  async operatorMarks(): Promise<OperatorMarks> {
    const [pendingApprovals, lastFinishedAt, jobs] = await Promise.all([this.approvals.pendingCount(), this.usage.lastFinishedAt(), this.jobs.changeMark()]);
    return { pendingApprovals, lastFinishedAt, jobs };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewTimer);
    await this.ticking;
    await this.group.flush();
    // A clean stop gives up the lease at once; what is still open is reaped by whoever is left
    // (on SQLite, by the next start).
    await this.replica.drop().catch(() => undefined);
    await this.engine.close();
  }
}

/**
 * A database that fails (disk full, server down, connection lost) is a typed 503 for whoever
 * asked, never a 500; errors the store raises itself pass through. A failed transaction
 * rolled back, so nothing is half written.
 */
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
