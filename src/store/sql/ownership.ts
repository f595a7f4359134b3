/** SQL fragments for ownership by replica: whose lease is alive, and what no live replica owns. */
import type { SqlEngine } from './engine.js';

/**
 * The owner of what a checkpointed background run left waiting (its row, its pending approval or
 * ticket): no replica holds it, and it is never reaped; it lives until a decision or a result
 * wakes the run, whose next worker takes it back (`run-checkpoints.ts`).
 */
export const CHECKPOINT_OWNER = '(checkpoint)';

/** Owned by nobody alive: no owner, or an owner without a replica row (a checkpoint is nobody's to reap). */
export const ORPHAN = `owner IS NULL OR (owner <> '${CHECKPOINT_OWNER}' AND NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = owner))`;

/** The row's owner holds a lease that has not lapsed, or is a checkpoint (one `?`: now, epoch ms). */
export const LIVE_OWNER = `(owner = '${CHECKPOINT_OWNER}' OR EXISTS (SELECT 1 FROM replicas r WHERE r.id = owner AND r.lease_expires_at > ?))`;

/** Locks the rows a read-then-write transaction selects (SQLite serializes its transactions anyway). */
export function rowLock(engine: SqlEngine): string {
  return engine.dialect === 'postgres' ? 'FOR UPDATE' : '';
}
