/**
 * Governance counters (config `limits`, docs/governance.md): for each scope (the host, a
 * subject, a token) and metric, what was used and what runs in flight have reserved, per
 * window. Every check is one conditional update (`used + reserved + need <= limit`), all of a
 * run's charges in one transaction, so the counters hold across replicas. A reservation is a
 * hold row owned by this replica: settled after each step, released at the end, and released by
 * the reaper when its replica died.
 *
 * A fixed window (a minute, a calendar period) is one row. A rolling period keeps its usage in
 * buckets (`window_start` = the bucket's start) and its reservations on the row `window_start =
 * -1`, which is also the lock every check of that counter takes first.
 */
import { DriverError } from '../../../protocol/errors.js';
import type { LimitCharge, LimitCounter, LimitRefusal, LimitStore, LimitUse } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import { ORPHAN, rowLock } from '../ownership.js';
import type { Migrations, TableContext } from '../table.js';

const COUNTERS = `CREATE TABLE limit_counters (
     scope TEXT NOT NULL, metric TEXT NOT NULL, window_start BIGINT NOT NULL,
     used BIGINT NOT NULL DEFAULT 0, reserved BIGINT NOT NULL DEFAULT 0,
     PRIMARY KEY (scope, metric, window_start));
   CREATE TABLE limit_holds (
     hold_id TEXT NOT NULL, scope TEXT NOT NULL, metric TEXT NOT NULL, window_start BIGINT NOT NULL,
     amount BIGINT NOT NULL, owner TEXT,
     PRIMARY KEY (hold_id, scope, metric, window_start));
   CREATE INDEX limit_holds_owner ON limit_holds (owner)`;

/** Adds `used` and `reserved` to a counter, creating it when it is new. */
const UPSERT = `INSERT INTO limit_counters (scope, metric, window_start, used, reserved) VALUES (?, ?, ?, ?, ?)
   ON CONFLICT (scope, metric, window_start) DO UPDATE SET used = limit_counters.used + excluded.used, reserved = limit_counters.reserved + excluded.reserved`;

/** The row a rolling counter keeps its reservations on (and locks). */
const ROLLING_ROW = -1;

/** Rolls the run's charges back; a DriverError, so that the store's guard passes it through as it is. */
class Refused extends DriverError {
  constructor(readonly refusal: LimitRefusal) {
    super('RATE_LIMITED', 'A limit was reached.');
  }
}

interface HoldRow {
  scope: string;
  metric: string;
  window_start: number;
  amount: number;
}

export class LimitTable implements LimitStore {
  static readonly migrations: Migrations = { sqlite: [COUNTERS], postgres: [COUNTERS] };

  constructor(private readonly context: TableContext) {}

  async take(holdId: string, charges: readonly LimitCharge[]): Promise<LimitRefusal | undefined> {
    if (charges.length === 0) return undefined;
    try {
      // Every transaction takes counter rows in one order (scope, metric, window): none waits on another in a cycle.
      const ordered = [...charges].sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
      await this.context.engine.transaction(async (tx) => {
        for (const charge of ordered) await this.charge(tx, holdId, charge);
      });
      return undefined;
    } catch (error) {
      if (error instanceof Refused) return error.refusal;
      throw error;
    }
  }

  async settle(holdId: string, uses: readonly LimitUse[], release: readonly string[]): Promise<void> {
    await this.context.engine.transaction(async (tx) => {
      const changes = release.length > 0 ? await this.takeHolds(tx, holdId, release) : new Map<string, CounterChange>();
      for (const use of uses) if (use.amount > 0) changeOf(changes, use.scope, use.metric, use.window).used += use.amount;
      await applyChanges(tx, changes);
    });
  }

  async release(holdId: string): Promise<void> {
    await this.context.engine.transaction(async (tx) => applyChanges(tx, await this.takeHolds(tx, holdId, undefined)));
  }

  async read(scope: string, metric: string, window: number, since?: number): Promise<LimitCounter> {
    if (since === undefined) {
      const [row] = await this.context.engine.all<{ used: number; reserved: number }>('SELECT used, reserved FROM limit_counters WHERE scope = ? AND metric = ? AND window_start = ?', [scope, metric, window]);
      return { used: Number(row?.used ?? 0), reserved: Number(row?.reserved ?? 0) };
    }
    return rollingTotals(this.context.engine, scope, metric, since);
  }

  async prune(before: number): Promise<void> {
    await this.context.engine.run("DELETE FROM limit_counters WHERE metric IN ('requests', 'tokens-minute') AND window_start < ?", [before]);
  }

  /** Releases what dead replicas reserved. */
  async reap(tx: SqlEngine): Promise<number> {
    const holds = await tx.all<HoldRow>(`SELECT scope, metric, window_start, amount FROM limit_holds WHERE ${ORPHAN} ${rowLock(tx)}`);
    const changes = new Map<string, CounterChange>();
    for (const hold of holds) changeOf(changes, hold.scope, hold.metric, Number(hold.window_start)).reserved -= Number(hold.amount);
    await applyChanges(tx, changes);
    if (holds.length > 0) await tx.run(`DELETE FROM limit_holds WHERE ${ORPHAN}`);
    return holds.length;
  }

  private async charge(tx: SqlEngine, holdId: string, charge: LimitCharge): Promise<void> {
    const { scope, metric, window, limit, need, use, reserve } = charge;
    if (charge.since === undefined) {
      // One upsert: a new row fits when the charge alone does; an existing one when the update's condition holds.
      const rows = need > limit ? [] : await tx.all<{ used: number }>(`${UPSERT} WHERE limit_counters.used + limit_counters.reserved + ? <= ? RETURNING limit_counters.used`, [scope, metric, window, use, reserve, need, limit]);
      if (rows.length === 0) throw new Refused({ charge, ...(await this.counter(tx, scope, metric, window)) });
      if (reserve > 0) await this.hold(tx, holdId, scope, metric, window, reserve);
      return;
    }
    // Rolling: the reservation row is the lock; then the buckets still inside the period are summed.
    await tx.run(UPSERT, [scope, metric, ROLLING_ROW, 0, 0]);
    const totals = await rollingTotals(tx, scope, metric, charge.since);
    if (totals.used + totals.reserved + need > limit) throw new Refused({ charge, ...totals });
    if (use > 0) await tx.run(UPSERT, [scope, metric, window, use, 0]);
    if (reserve > 0) {
      await tx.run(UPSERT, [scope, metric, ROLLING_ROW, 0, reserve]);
      await this.hold(tx, holdId, scope, metric, ROLLING_ROW, reserve);
    }
  }

  private async hold(tx: SqlEngine, holdId: string, scope: string, metric: string, window: number, amount: number): Promise<void> {
    await tx.run(
      `INSERT INTO limit_holds (hold_id, scope, metric, window_start, amount, owner) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (hold_id, scope, metric, window_start) DO UPDATE SET amount = limit_holds.amount + excluded.amount`,
      [holdId, scope, metric, window, amount, this.context.owner()],
    );
  }

  private async counter(tx: SqlEngine, scope: string, metric: string, window: number): Promise<LimitCounter> {
    const [row] = await tx.all<{ used: number; reserved: number }>('SELECT used, reserved FROM limit_counters WHERE scope = ? AND metric = ? AND window_start = ?', [scope, metric, window]);
    return { used: Number(row?.used ?? 0), reserved: Number(row?.reserved ?? 0) };
  }

  /** Deletes a run's holds (those of `metrics`, or all of them) and returns what they reserved, per counter. */
  private async takeHolds(tx: SqlEngine, holdId: string, metrics: readonly string[] | undefined): Promise<Map<string, CounterChange>> {
    const holds = await tx.all<HoldRow>(`SELECT scope, metric, window_start, amount FROM limit_holds WHERE hold_id = ? ${rowLock(tx)}`, [holdId]);
    const changes = new Map<string, CounterChange>();
    for (const hold of holds) {
      if (metrics && !metrics.includes(hold.metric)) continue;
      changeOf(changes, hold.scope, hold.metric, Number(hold.window_start)).reserved -= Number(hold.amount);
      await tx.run('DELETE FROM limit_holds WHERE hold_id = ? AND scope = ? AND metric = ? AND window_start = ?', [holdId, hold.scope, hold.metric, hold.window_start]);
    }
    return changes;
  }
}

interface CounterChange {
  scope: string;
  metric: string;
  window: number;
  used: number;
  reserved: number;
}

type CounterKey = [string, string, number];

function keyOf(counter: { scope: string; metric: string; window: number }): CounterKey {
  return [counter.scope, counter.metric, counter.window];
}

function compareKeys(a: CounterKey, b: CounterKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return a[2] - b[2];
}

function changeOf(changes: Map<string, CounterChange>, scope: string, metric: string, window: number): CounterChange {
  const id = `${scope}\u0000${metric}\u0000${window}`;
  let change = changes.get(id);
  if (!change) changes.set(id, (change = { scope, metric, window, used: 0, reserved: 0 }));
  return change;
}

/** Applies counter changes in the one lock order. */
async function applyChanges(tx: SqlEngine, changes: Map<string, CounterChange>): Promise<void> {
  const ordered = [...changes.values()].sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
  for (const { scope, metric, window, used, reserved } of ordered) await tx.run(UPSERT, [scope, metric, window, used, reserved]);
}

async function rollingTotals(engine: SqlEngine, scope: string, metric: string, since: number): Promise<LimitCounter> {
  const [row] = await engine.all<{ used: number | string | null; reserved: number | string | null }>(
    `SELECT COALESCE(SUM(CASE WHEN window_start >= ? THEN used ELSE 0 END), 0) AS used,
            COALESCE(SUM(CASE WHEN window_start = ? THEN reserved ELSE 0 END), 0) AS reserved
     FROM limit_counters WHERE scope = ? AND metric = ?`,
    [since, ROLLING_ROW, scope, metric],
  );
  return { used: Number(row?.used ?? 0), reserved: Number(row?.reserved ?? 0) };
}
