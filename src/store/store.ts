/**
 * The state seam. The host keeps everything durable behind this interface so that the
 * embedded SQLite store and a shared PostgreSQL store are interchangeable.
 */
import type { AuditRecord } from '../extensions/audit.js';
import type { UsageRecord } from '../runtime/usage-record.js';

export interface UsageSummary {
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
}

export interface StateStore {
  readonly kind: string;
  recordUsage(record: UsageRecord): Promise<void>;
  usageSummary(): Promise<UsageSummary>;
  /** Appends one approval audit record durably, or throws. */
  appendAudit(record: AuditRecord): Promise<void>;
  /** The newest audit records first. */
  readAudit(limit: number): Promise<AuditRecord[]>;
  close(): Promise<void>;
}
