/** SQL fragments for ownership by replica: whose lease is alive, and what no live replica owns. */
import type { SqlEngine } from './engine.js';

/** Owned by nobody alive: no owner, or an owner without a replica row. */
export const ORPHAN = 'owner IS NULL OR NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = owner)';

/** The row's owner holds a lease that has not lapsed (one `?`: now, epoch ms). */
export const LIVE_OWNER = 'EXISTS (SELECT 1 FROM replicas r WHERE r.id = owner AND r.lease_expires_at > ?)';

/** Locks the rows a read-then-write transaction selects (SQLite serializes its transactions anyway). */
export function rowLock(engine: SqlEngine): string {
  return engine.dialect === 'postgres' ? 'FOR UPDATE' : '';
}
