/**
 * Interactive approvals: a run pauses before a tool that needs review, a person decides
 * through `POST /v1/approvals/decisions`, and every step is audited. Decisions are bound
 * to the exact run and call; each pending approval is decided at most once.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { ApprovalDecision, ApprovalRequest, ApprovalResolution, ToolCall } from '../../protocol/schemas.js';
import { isoTimestamp, type Clock } from '../../shared/clock.js';
import type { AuditRecord } from '../../store/audit-record.js';
import type { StateStore } from '../../store/store.js';
import type { ApprovalService, ApprovalSettlement, OpenApproval } from '../../runtime/services.js';
import { canonicalJson, hasUnsafeKeys, jsonBytes } from '../../shared/json-identity.js';
import { MissedSignalPoll } from '../../store/missed-signals.js';
import { allows, type Principal } from '../../http/access.js';

export interface ApprovalPolicy {
  interactive: true;
  /** Whether runs may ask for `idlePolicy: "pause"` (default true). */
  allowIdlePause?: boolean;
  /** Pending approvals across the host (default 1000). */
  maxPending?: number;
}


export type { ApprovalSettlement, OpenApproval };

/** A run on this replica waiting for its approval. */
interface Waiter {
  approvalId: string;
  timer: unknown;
  settle(settlement: ApprovalSettlement): void;
}

/** The store methods approvals need (the host's StateStore). */
export type ApprovalStore = Pick<StateStore, 'approvals' | 'audit' | 'replica'>;

export const MAX_REVIEWED_CALL_BYTES = 128_000;

type OpenArgs = Parameters<ApprovalService['open']>[0];

/**
 * Pending approvals are rows in the store, so a decision may reach any replica: it is checked
 * against the row, committed with its audit record in one transaction, and signalled to the
 * replica whose run waits for it.
 */
export class ApprovalRegistry implements ApprovalService {
  private readonly waiters = new Map<string, Waiter>();
  private readonly maxPending: number;
  private readonly missed = new MissedSignalPoll(() => this.waiters.keys(), (id) => this.wake(id));

  constructor(
    private readonly clock: Clock,
    readonly policy: ApprovalPolicy,
    private readonly store: ApprovalStore,
  ) {
    this.maxPending = policy.maxPending ?? 1000;
    store.replica.onSignal((signal) => {
      if (signal.kind === 'approval') void this.wake(signal.id);
    });
  }

  /** Approvals waiting on this replica. */
  get size(): number {
    return this.waiters.size;
  }

  async open(args: OpenArgs): Promise<OpenApproval> {
    if (this.waiters.size >= this.maxPending) {
      throw new DriverError('APPROVAL_CAPACITY', 'Too many approvals are pending on this host.', { retryable: true });
    }
    const approval = await this.insert(args);
    let settle!: (settlement: ApprovalSettlement) => void;
    const settled = new Promise<ApprovalSettlement>((resolve) => (settle = resolve));
    const waiter: Waiter = { approvalId: approval.approvalId, timer: undefined, settle };
    this.waiters.set(approval.approvalId, waiter);
    this.missed.watch();
    if (args.expiresAfterMs !== undefined) {
      waiter.timer = this.clock.setTimeout(() => void this.resolve(approval.approvalId, 'expired').catch(() => undefined), args.expiresAfterMs);
    }
    return {
      approval: structuredClone(approval),
      settled,
      cancel: () => this.resolve(approval.approvalId, 'cancelled').catch(() => undefined),
    };
  }

  /**
   * An approval of a background run that checkpoints while it waits: nobody here waits for it,
   * and its expiry is the checkpoint's wake-up time (bounded by the job store, not by `maxPending`).
   */
  async openDetached(args: OpenArgs): Promise<ApprovalRequest> {
    return structuredClone(await this.insert(args));
  }

  /** A detached approval as its resumed run finds it: resolved, expired now (its deadline passed), or still pending. */
  async settlement(approvalId: string): Promise<ApprovalResolution | undefined> {
    const row = await this.store.approvals.read(approvalId);
    if (!row) throw notFound();
    if (row.resolution) return row.resolution;
    if (row.state === 'pending' && row.expiresAt !== undefined && this.clock.now() >= row.expiresAt) {
      return (await this.resolve(approvalId, 'expired')) ?? (await this.store.approvals.read(approvalId))?.resolution;
    }
    return undefined;
  }

  /** Cancels a detached approval still pending; its resolution, whoever committed it. */
  async cancel(approvalId: string): Promise<ApprovalResolution | undefined> {
    return (await this.resolve(approvalId, 'cancelled').catch(() => undefined)) ?? (await this.store.approvals.read(approvalId).catch(() => undefined))?.resolution;
  }

  private async insert(args: OpenArgs): Promise<ApprovalRequest> {
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
    try {
      await this.store.approvals.open(
        { approval, subject: args.subject, provider: args.provider, call: canonicalJson(args.call), expiresAt },
        this.audit({ kind: 'approval.requested', subject: args.subject, approvalId: approval.approvalId, runId: args.runId, provider: args.provider, tool: args.call.name }),
      );
    } catch {
      throw auditFailed();
    }
    return approval;
  }

  /**
   * Decides a pending approval of the decider's subject, with its provider and `approveTools`
   * grants; `operator`: any subject's, whatever its grants (the operator endpoints).
   */
  async decide(decision: ApprovalDecision, decider: Pick<Principal, 'subject' | 'tokenId' | 'providers' | 'grants'>, { operator = false } = {}): Promise<ApprovalResolution> {
    const reject = async (error: DriverError): Promise<never> => {
      await this.store.audit
        .append(this.audit({ kind: 'approval.rejected', subject: decider.subject, ...(decider.tokenId ? { tokenId: decider.tokenId } : {}), ...(operator ? { operator: decider.subject } : {}), approvalId: decision.approvalId, runId: decision.runId, code: error.code }))
        .catch(() => undefined);
      throw error;
    };
    if (hasUnsafeKeys(decision.call.arguments)) return reject(new DriverError('INVALID_APPROVAL', 'The decision carries arguments that are not plain JSON.'));
    const row = await this.store.approvals.read(decision.approvalId);
    if (!row || (row.subject !== decider.subject && !operator)) return reject(notFound());
    if (row.state === 'interrupted' || (row.state === 'pending' && !row.ownerAlive)) return reject(interrupted());
    if (row.state !== 'pending') return reject(notFound());
    if (row.expiresAt !== undefined && this.clock.now() >= row.expiresAt) {
      await this.resolve(row.approval.approvalId, 'expired').catch(() => undefined);
      return reject(notFound());
    }
    if (!operator && (!decider.providers.has(row.provider) || !allows(decider, 'approveTools', row.approval.call.name))) {
      return reject(new DriverError('FORBIDDEN', 'This token may not decide approvals for this tool.'));
    }
    if (decision.runId !== row.approval.runId || canonicalJson(decision.call) !== row.call) {
      return reject(new DriverError('APPROVAL_MISMATCH', 'The decision does not match the pending call exactly.'));
    }
    const outcome = decision.decision === 'approve' ? 'approved' : decision.decision === 'deny' ? 'denied' : 'cancelled';
    let resolution: ApprovalResolution | undefined;
    try {
      resolution = await this.resolve(row.approval.approvalId, outcome, decider.tokenId, operator ? decider.subject : undefined);
    } catch (error) {
      // Fail closed: the waiting run (when it is here) ends, and nothing executes.
      this.settleLocal(row.approval.approvalId, { failure: auditFailed() });
      throw error;
    }
    if (!resolution) {
      const now = await this.store.approvals.read(row.approval.approvalId);
      return reject(now?.state === 'interrupted' || (now?.state === 'pending' && !now.ownerAlive) ? interrupted() : notFound());
    }
    return resolution;
  }

  /**
   * Commits a resolution once (the store's guarded update decides the race between replicas)
   * and wakes the waiting run when it is on this replica. Undefined when it was not pending.
   */
  private async resolve(approvalId: string, outcome: ApprovalResolution['outcome'], tokenId?: string, operator?: string): Promise<ApprovalResolution | undefined> {
    const row = await this.store.approvals.read(approvalId);
    if (!row || row.state !== 'pending') return undefined;
    const resolution: ApprovalResolution = {
      approvalId,
      runId: row.approval.runId,
      callId: row.approval.call.id,
      outcome,
      decidedAt: isoTimestamp(this.clock),
    };
    let committed: boolean;
    try {
      committed = await this.store.approvals.resolve(
        resolution,
        this.audit({ kind: 'approval.resolved', subject: row.subject, ...(tokenId ? { tokenId } : {}), ...(operator ? { operator } : {}), approvalId, runId: resolution.runId, provider: row.provider, tool: row.approval.call.name, outcome }),
      );
    } catch {
      throw auditFailed();
    }
    if (!committed) return undefined;
    this.settleLocal(approvalId, { resolution });
    return resolution;
  }

  /** A signal from the store: an approval of a run here was resolved (perhaps on another replica). */
  private async wake(approvalId: string): Promise<void> {
    if (!this.waiters.has(approvalId)) return;
    const row = await this.store.approvals.read(approvalId).catch(() => undefined);
    if (row?.resolution) this.settleLocal(approvalId, { resolution: row.resolution });
  }

  private settleLocal(approvalId: string, settlement: ApprovalSettlement): void {
    const waiter = this.waiters.get(approvalId);
    if (!waiter) return;
    this.waiters.delete(approvalId);
    if (waiter.timer !== undefined) this.clock.clearTimeout(waiter.timer);
    waiter.settle(settlement);
  }

  private audit(record: Omit<AuditRecord, 'at'>): AuditRecord {
    return { ...record, at: isoTimestamp(this.clock) } as AuditRecord;
  }
}

const notFound = () => new DriverError('APPROVAL_NOT_FOUND', 'No such pending approval.');
const interrupted = () =>
  new DriverError('OPERATION_UNCERTAIN', 'The run that asked for this approval ended when its host stopped; it cannot continue, and what it did is uncertain.', { outcome: 'uncertain' });
const auditFailed = () => new DriverError('APPROVAL_AUDIT_FAILED', 'The approval audit record could not be written.', { retryable: false });
