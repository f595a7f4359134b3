/**
 * Pending interactive approvals, owned by the replica whose run waits for them. A decision on any
 * replica resolves the row (with its audit record, in one transaction) and signals the owner;
 * an approval whose owner died is reaped as `interrupted`, and audited so.
 */
import type { ApprovalRequest, ApprovalResolution } from '../../../protocol/schemas.js';
import type { AuditRecord } from '../../audit-record.js';
import type { ApprovalRow, ApprovalStore } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import { CHECKPOINT_OWNER, LIVE_OWNER, ORPHAN } from '../ownership.js';
import type { Migrations, Reaped, TableContext } from '../table.js';
import type { AuditTable } from './audit.js';
import { wake } from './run-checkpoints.js';
import type { ReplicaTable } from './replicas.js';

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

/** Pending approvals read for the operator's list before sorting (they are bounded per replica by approvals.maxPending). */
const MAX_PENDING_LISTED = 10_000;

const APPROVALS = `CREATE TABLE approvals (
     approval_id TEXT PRIMARY KEY, subject TEXT NOT NULL, run_id TEXT NOT NULL, provider TEXT NOT NULL,
     tool TEXT NOT NULL, call_json TEXT NOT NULL, request TEXT NOT NULL, expires_at BIGINT, owner TEXT,
     state TEXT NOT NULL, resolution TEXT);
   CREATE INDEX approvals_open ON approvals (owner) WHERE state = 'pending'`;

export class ApprovalTable implements ApprovalStore, Reaped {
  static readonly migrations: Migrations = {
    sqlite: [
      // Approvals still open in the audit log of the first versions, before they had rows of their own.
      `CREATE TABLE open_approvals (approval_id TEXT PRIMARY KEY, record TEXT NOT NULL);
   INSERT OR IGNORE INTO open_approvals (approval_id, record)
     SELECT requested.approval_id, requested.record FROM approval_audit AS requested
     WHERE requested.kind = 'approval.requested' AND requested.approval_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM approval_audit AS resolved
                       WHERE resolved.kind = 'approval.resolved' AND resolved.approval_id = requested.approval_id)`,
      // Approvals left open there have no owner, so the next start reaps them as interrupted.
      `${APPROVALS};
   INSERT INTO approvals (approval_id, subject, run_id, provider, tool, call_json, request, expires_at, owner, state)
     SELECT approval_id, json_extract(record, '$.subject'), coalesce(json_extract(record, '$.runId'), ''),
            coalesce(json_extract(record, '$.provider'), ''), coalesce(json_extract(record, '$.tool'), ''),
            '', '{}', NULL, NULL, 'pending'
     FROM open_approvals;
   DROP TABLE open_approvals`,
    ],
    postgres: [APPROVALS],
  };

  constructor(
    private readonly context: TableContext,
    private readonly audit: AuditTable,
    private readonly replica: ReplicaTable,
  ) {}

  async open(row: Omit<ApprovalRow, 'state' | 'resolution' | 'ownerAlive'>, audit: AuditRecord): Promise<void> {
    await this.context.engine.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO approvals (approval_id, subject, run_id, provider, tool, call_json, request, expires_at, owner, state)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
        [row.approval.approvalId, row.subject, row.approval.runId, row.provider, row.approval.call.name, row.call, JSON.stringify(row.approval), row.expiresAt ?? null, this.context.owner()],
      );
      await this.audit.insert(tx, audit);
    });
  }

  async read(approvalId: string): Promise<ApprovalRow | undefined> {
    const [row] = await this.context.engine.all<ApprovalColumns>(`SELECT *, ${LIVE_OWNER} AS owner_alive FROM approvals WHERE approval_id = ?`, [this.context.now(), approvalId]);
    return row && approvalRow(row);
  }

  async pendingCount(): Promise<number> {
    const [row] = await this.context.engine.all<{ count: number | string }>(`SELECT COUNT(*) AS count FROM approvals WHERE state = 'pending' AND ${LIVE_OWNER}`, [this.context.now()]);
    return Number(row?.count ?? 0);
  }

  async pending(limit: number): Promise<ApprovalRow[]> {
    const now = this.context.now();
    const rows = await this.context.engine.all<ApprovalColumns>(`SELECT *, ${LIVE_OWNER} AS owner_alive FROM approvals WHERE state = 'pending' AND ${LIVE_OWNER} LIMIT ?`, [
      now,
      now,
      MAX_PENDING_LISTED,
    ]);
    // Oldest first by when they were requested (kept in the row's JSON, the same on both engines).
    const pending = rows.map(approvalRow).sort((a, b) => a.approval.requestedAt.localeCompare(b.approval.requestedAt) || a.approval.approvalId.localeCompare(b.approval.approvalId));
    return pending.slice(0, limit);
  }

  async resolve(resolution: ApprovalResolution, audit: AuditRecord): Promise<boolean> {
    return this.context.engine.transaction(async (tx) => {
      const [row] = await tx.all<{ owner: string }>(
        `UPDATE approvals SET state = ?, resolution = ? WHERE approval_id = ? AND state = 'pending' AND ${LIVE_OWNER} RETURNING owner`,
        [resolution.outcome, JSON.stringify(resolution), resolution.approvalId, this.context.now()],
      );
      if (!row) return false;
      await this.audit.insert(tx, audit);
      // A checkpointed background run waits for it: queued again to go on, on any replica.
      if (row.owner === CHECKPOINT_OWNER) await wake(tx, resolution.runId, this.context.now());
      else await this.replica.publish(tx, row.owner, { kind: 'approval', id: resolution.approvalId });
      return true;
    });
  }

  async reap(tx: SqlEngine, now: number): Promise<number> {
    const at = new Date(now).toISOString();
    const approvals = await tx.all<{ approval_id: string; subject: string; run_id: string; provider: string; tool: string }>(
      `UPDATE approvals SET state = 'interrupted' WHERE state = 'pending' AND (${ORPHAN}) RETURNING approval_id, subject, run_id, provider, tool`,
    );
    for (const row of approvals) {
      await this.audit.insert(tx, {
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
    return approvals.length;
  }
}

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
