/**
 * Replicas and their leases, and the signals between them. Every replica holds a lease row;
 * everything a run leaves open names its replica as owner (`../ownership.ts`). A clean stop
 * gives the lease up; a lapsed lease lets any replica reap that owner's work.
 */
import { randomUUID } from 'node:crypto';
import type { ReplicaStore, StoreSignal } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import type { Migrations, TableContext } from '../table.js';

const SIGNALS = 'agenticdriver_signals';
const KINDS: ReadonlySet<unknown> = new Set<StoreSignal['kind']>(['approval', 'ticket', 'progress', 'session', 'mcp-cancel']);
/** The address of a signal to every replica. */
const EVERYONE = '*';
const REPLICAS = 'CREATE TABLE replicas (id TEXT PRIMARY KEY, started_at BIGINT NOT NULL, lease_expires_at BIGINT NOT NULL)';

export class ReplicaTable implements ReplicaStore {
  static readonly migrations: Migrations = { sqlite: [REPLICAS], postgres: [REPLICAS] };

  private current = randomUUID();
  private readonly handlers: ((signal: StoreSignal) => void)[] = [];

  constructor(private readonly context: Omit<TableContext, 'owner'>) {}

  get id(): string {
    return this.current;
  }

  /** Listens for the signals addressed to this replica (whatever its id at the time). */
  async listen(): Promise<void> {
    await this.context.engine.subscribe(SIGNALS, (payload) => this.deliver(payload));
  }

  /** Takes a lease under this replica's id. */
  async register(leaseMs: number): Promise<void> {
    const now = this.context.now();
    await this.context.engine.run('INSERT INTO replicas (id, started_at, lease_expires_at) VALUES (?, ?, ?)', [this.current, now, now + leaseMs]);
  }

  /** Extends the lease; false when it had lapsed (this replica's open work may already be reaped). */
  async renew(leaseMs: number): Promise<boolean> {
    const now = this.context.now();
    const renewed = await this.context.engine.run('UPDATE replicas SET lease_expires_at = ? WHERE id = ? AND lease_expires_at > ?', [now + leaseMs, this.current, now]);
    return renewed.changes > 0;
  }

  /** Starts over under a new id and a new lease, so that new work can commit. */
  async rejoin(leaseMs: number): Promise<void> {
    await this.drop();
    this.current = randomUUID();
    await this.register(leaseMs);
  }

  /** Gives the lease up (a clean stop): what is still open is reaped by whoever is left. */
  async drop(): Promise<void> {
    await this.context.engine.run('DELETE FROM replicas WHERE id = ?', [this.current]);
  }

  /** Forgets replicas whose lease lapsed (or, on SQLite's single process, every other one). */
  async forgetDead(tx: SqlEngine, everyOther: boolean): Promise<void> {
    if (everyOther) await tx.run('DELETE FROM replicas WHERE id <> ?', [this.current]);
    else await tx.run('DELETE FROM replicas WHERE lease_expires_at <= ?', [this.context.now()]);
  }

  signal(owner: string, signal: StoreSignal): Promise<void> {
    return this.publish(this.context.engine, owner, signal);
  }

  broadcast(signal: StoreSignal): Promise<void> {
    return this.publish(this.context.engine, EVERYONE, signal);
  }

  /** Publishes through `tx`: inside a transaction the signal leaves at its commit, and not at all after a rollback. */
  async publish(tx: SqlEngine, to: string, signal: StoreSignal): Promise<void> {
    await tx.publish(SIGNALS, JSON.stringify({ to, ...signal }));
  }

  onSignal(handler: (signal: StoreSignal) => void): void {
    this.handlers.push(handler);
  }

  private deliver(payload: string): void {
    let message: { to?: unknown; kind?: unknown; id?: unknown };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if ((message.to !== this.current && message.to !== EVERYONE) || typeof message.id !== 'string' || !KINDS.has(message.kind)) return;
    for (const handler of this.handlers) handler({ kind: message.kind as StoreSignal['kind'], id: message.id });
  }
}
