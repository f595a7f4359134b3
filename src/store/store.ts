/**
 * The state seam. The host keeps everything durable behind this interface so that the
 * embedded SQLite store and a shared PostgreSQL store are interchangeable.
 */
import type { AuditRecord } from './audit-record.js';
import type { RunStartRecord, UsageRecord } from '../runtime/usage-record.js';
import type { UsageTotalsQuery, UsageTotalsRow } from './usage-totals.js';

export interface UsageSummary {
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
  interrupted: number;
}

/** What start-up reconciliation closed: runs and approvals a previous process left open. */
export interface ReconcileReport {
  runs: number;
  approvals: number;
}

export interface StateStore {
  readonly kind: string;
  /** Marks a run in flight until its usage record arrives; resolves once durable. */
  recordRunStart(record: RunStartRecord): Promise<void>;
  recordUsage(record: UsageRecord): Promise<void>;
  usageSummary(): Promise<UsageSummary>;
  /** Token, run and cost totals of the stored usage records, optionally since a time and grouped (`agenticdriver usage`). */
  usageTotals(query: UsageTotalsQuery): Promise<UsageTotalsRow[]>;
  /** Appends one approval audit record durably, or throws. */
  appendAudit(record: AuditRecord): Promise<void>;
  /** The newest audit records first. */
  readAudit(limit: number): Promise<AuditRecord[]>;
  /**
   * At host start-up, before serving: every run still in flight gets a usage record
   * `interrupted` (outcome `uncertain`) and every approval still pending an
   * `approval.resolved` audit entry with outcome `interrupted`, both stamped `at`.
   */
  reconcileInterrupted(at: string): Promise<ReconcileReport>;
  close(): Promise<void>;
}
