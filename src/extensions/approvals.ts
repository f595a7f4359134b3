/**
 * Interactive approvals: a run pauses before a tool that needs review, a person decides
 * through `POST /v1/approvals/decisions`, and every step is audited. Decisions are bound
 * to the exact run and call; each pending approval is decided at most once.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../protocol/errors.js';
import type { ApprovalDecision, ApprovalRequest, ApprovalResolution, ToolCall } from '../protocol/schemas.js';
import { isoTimestamp, type Clock } from '../shared/clock.js';
import type { AuditRecord, AuditSink } from '../store/audit-record.js';
import type { ApprovalService, ApprovalSettlement, OpenApproval } from '../runtime/services.js';
import { canonicalJson, hasUnsafeKeys, jsonBytes } from '../shared/json-identity.js';

export interface ApprovalPolicy {
  interactive: true;
  /** Whether runs may ask for `idlePolicy: "pause"` (default true). */
  allowIdlePause?: boolean;
  /** Pending approvals across the host (default 1000). */
  maxPending?: number;
}

export interface Decider {
  subject: string;
  tokenId?: string;
  providers: ReadonlySet<string>;
  approveTools: ReadonlySet<string>;
}

export type { ApprovalSettlement, OpenApproval };

interface Pending {
  approval: ApprovalRequest;
  subject: string;
  provider: string;
  call: string;
  expiresAt: number | undefined;
  timer: unknown;
  settle(settlement: ApprovalSettlement): void;
}

export const MAX_REVIEWED_CALL_BYTES = 128_000;

export class ApprovalRegistry implements ApprovalService {
  private readonly pending = new Map<string, Pending>();
  private readonly maxPending: number;

  constructor(
    private readonly clock: Clock,
    readonly policy: ApprovalPolicy,
    private readonly audit: AuditSink,
  ) {
    this.maxPending = policy.maxPending ?? 1000;
  }

  get size(): number {
    return this.pending.size;
  }

  async open(args: { runId: string; subject: string; provider: string; call: ToolCall; idlePolicy: 'pause' | 'continue'; expiresAfterMs?: number }): Promise<OpenApproval> {
    if (this.pending.size >= this.maxPending) {
      throw new DriverError('APPROVAL_CAPACITY', 'Too many approvals are pending on this host.', { retryable: true });
    }
    if (hasUnsafeKeys(args.call.arguments) || jsonBytes(args.call) > MAX_REVIEWED_CALL_BYTES) {
      throw new DriverError('INVALID_TOOL_CALL', 'The proposed call cannot be presented for review exactly.');
    }
    const now = this.clock.now();
    const approval: ApprovalRequest = {
      approvalId: randomUUID(),
      runId: args.runId,
      call: structuredClone(args.call),
      requestedAt: isoTimestamp(this.clock),
      idlePolicy: args.idlePolicy,
    };
    const expiresAt = args.expiresAfterMs === undefined ? undefined : now + args.expiresAfterMs;
    if (expiresAt !== undefined) approval.expiresAt = new Date(expiresAt).toISOString();
    await this.record({ kind: 'approval.requested', subject: args.subject, approvalId: approval.approvalId, runId: args.runId, provider: args.provider, tool: args.call.name });

    let settle!: (settlement: ApprovalSettlement) => void;
    const settled = new Promise<ApprovalSettlement>((resolve) => (settle = resolve));
    const entry: Pending = { approval, subject: args.subject, provider: args.provider, call: canonicalJson(args.call), expiresAt, timer: undefined, settle };
    this.pending.set(approval.approvalId, entry);
    if (args.expiresAfterMs !== undefined) {
      entry.timer = this.clock.setTimeout(() => void this.finish(entry, 'expired'), args.expiresAfterMs);
    }
    return {
      approval: structuredClone(approval),
      settled,
      cancel: async () => {
        const settlement = await this.finish(entry, 'cancelled');
        return settlement && 'resolution' in settlement ? settlement.resolution : undefined;
      },
    };
  }

  async decide(decision: ApprovalDecision, decider: Decider): Promise<ApprovalResolution> {
    const reject = async (error: DriverError): Promise<never> => {
      await this.record({ kind: 'approval.rejected', subject: decider.subject, ...(decider.tokenId ? { tokenId: decider.tokenId } : {}), approvalId: decision.approvalId, runId: decision.runId, code: error.code }).catch(() => undefined);
      throw error;
    };
    if (hasUnsafeKeys(decision.call.arguments)) return reject(new DriverError('INVALID_APPROVAL', 'The decision carries arguments that are not plain JSON.'));
    const entry = this.pending.get(decision.approvalId);
    if (!entry || entry.subject !== decider.subject) return reject(notFound());
    if (entry.expiresAt !== undefined && this.clock.now() >= entry.expiresAt) {
      await this.finish(entry, 'expired');
      return reject(notFound());
    }
    if (!decider.providers.has(entry.provider) || !decider.approveTools.has(entry.approval.call.name)) {
      return reject(new DriverError('FORBIDDEN', 'This token may not decide approvals for this tool.'));
    }
    if (decision.runId !== entry.approval.runId || canonicalJson(decision.call) !== entry.call) {
      return reject(new DriverError('APPROVAL_MISMATCH', 'The decision does not match the pending call exactly.'));
    }
    const outcome = decision.decision === 'approve' ? 'approved' : decision.decision === 'deny' ? 'denied' : 'cancelled';
    const settlement = await this.finish(entry, outcome, decider.tokenId);
    if (!settlement) return reject(notFound());
    if ('failure' in settlement) throw settlement.failure;
    return settlement.resolution;
  }

  /**
   * Settles an entry once: audit first, then resolve the waiting run. When the audit
   * fails the run fails with APPROVAL_AUDIT_FAILED and nothing executes.
   */
  private async finish(entry: Pending, outcome: ApprovalResolution['outcome'], tokenId?: string): Promise<ApprovalSettlement | undefined> {
    if (this.pending.get(entry.approval.approvalId) !== entry) return undefined;
    this.pending.delete(entry.approval.approvalId);
    if (entry.timer !== undefined) this.clock.clearTimeout(entry.timer);
    const resolution: ApprovalResolution = {
      approvalId: entry.approval.approvalId,
      runId: entry.approval.runId,
      callId: entry.approval.call.id,
      outcome,
      decidedAt: isoTimestamp(this.clock),
    };
    try {
      await this.record({
        kind: 'approval.resolved',
        subject: entry.subject,
        ...(tokenId ? { tokenId } : {}),
        approvalId: resolution.approvalId,
        runId: resolution.runId,
        provider: entry.provider,
        tool: entry.approval.call.name,
        outcome,
      });
    } catch {
      const failure = { failure: auditFailed() };
      entry.settle(failure);
      return failure;
    }
    entry.settle({ resolution });
    return { resolution };
  }

  private async record(record: Omit<AuditRecord, 'at'>): Promise<void> {
    try {
      await this.audit({ ...record, at: isoTimestamp(this.clock) });
    } catch {
      throw auditFailed();
    }
  }
}

const notFound = () => new DriverError('APPROVAL_NOT_FOUND', 'No such pending approval.');
const auditFailed = () => new DriverError('APPROVAL_AUDIT_FAILED', 'The approval audit record could not be written.', { retryable: false });
