/** Operator endpoints (`/v1/operator/...`, tokens with the `operator` grant): the console's view of the host. */
import { Type, type Static } from '@sinclair/typebox';
import { HostTimestamp, Timestamp, Usage, Uuid } from './common.js';
import { ApprovalRequest } from './interactive.js';
import { JobInfo, JobState } from './jobs.js';
import { Count, open, strict } from './shape.js';

export const OperatorRunState = Type.Union([
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('interrupted'),
]);

/** One run as an operator sees it: who, where, how far, and (once finished) how it ended. */
export const OperatorRun = Type.Object(
  {
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    subject: Type.String({ minLength: 1 }),
    provider: Type.String({ minLength: 1 }),
    model: Type.String({ minLength: 1 }),
    state: OperatorRunState,
    startedAt: Timestamp,
    finishedAt: Type.Optional(Timestamp),
    /** Steps started so far. */
    steps: Count,
    /** Tokens reported so far (a lower bound while the run is active). */
    usage: Type.Ref(Usage),
    /** The error code of a run that did not complete. */
    errorCode: Type.Optional(Type.String({ minLength: 1 })),
    /** The durable job that runs it, if any. */
    jobId: Type.Optional(Uuid),
  },
  { ...open, $id: 'OperatorRun' },
);

export const OperatorRunsRequest = Type.Object(
  { /** How many of the most recently finished runs to list (default 20). */ finished: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })) },
  { ...strict, $id: 'OperatorRunsRequest' },
);

export const OperatorRunList = Type.Object(
  {
    /** Runs this host replica is serving now. */
    active: Type.Array(Type.Ref(OperatorRun), { maxItems: 100_000 }),
    /** The most recently finished runs (any replica), newest first. */
    finished: Type.Array(Type.Ref(OperatorRun), { maxItems: 100 }),
  },
  { ...open, $id: 'OperatorRunList' },
);

export const OperatorListRequest = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) },
  { ...strict, $id: 'OperatorListRequest' },
);

export const OperatorApproval = Type.Object(
  { approval: Type.Ref(ApprovalRequest), subject: Type.String({ minLength: 1 }), provider: Type.String({ minLength: 1 }) },
  { ...open, $id: 'OperatorApproval' },
);

export const OperatorApprovalList = Type.Object(
  { approvals: Type.Array(Type.Ref(OperatorApproval), { maxItems: 100 }) },
  { ...open, $id: 'OperatorApprovalList' },
);

export const OperatorJobsRequest = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })), state: Type.Optional(JobState) },
  { ...strict, $id: 'OperatorJobsRequest' },
);

export const OperatorJob = Type.Object({ job: Type.Ref(JobInfo), subject: Type.String({ minLength: 1 }) }, { ...open, $id: 'OperatorJob' });

export const OperatorJobList = Type.Object({ jobs: Type.Array(Type.Ref(OperatorJob), { maxItems: 100 }) }, { ...open, $id: 'OperatorJobList' });

export const OperatorUsageRequest = Type.Object(
  {
    by: Type.Optional(Type.Union([Type.Literal('subject'), Type.Literal('provider'), Type.Literal('model'), Type.Literal('day')])),
    /** Only runs that finished at or after this time. */
    since: Type.Optional(HostTimestamp),
  },
  { ...strict, $id: 'OperatorUsageRequest' },
);

/** Sums over stored usage records (the same totals `agenticdriver usage` prints). */
export const UsageTotals = Type.Object(
  {
    /** The group: a subject, provider, `provider/model` or UTC day; absent when not grouped. */
    key: Type.Optional(Type.String()),
    runs: Count,
    completed: Count,
    failed: Count,
    cancelled: Count,
    interrupted: Count,
    incompleteRuns: Count,
    inputTokens: Count,
    outputTokens: Count,
    cachedInputTokens: Count,
    reasoningTokens: Count,
    durationMs: Type.Number({ minimum: 0 }),
    costUsd: Type.Number({ minimum: 0 }),
    apiEquivalentCostUsd: Type.Number({ minimum: 0 }),
  },
  { ...open, $id: 'UsageTotals' },
);

export const OperatorUsage = Type.Object({ totals: Type.Array(Type.Ref(UsageTotals), { maxItems: 100_000 }) }, { ...open, $id: 'OperatorUsage' });

export const OperatorAuditRequest = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    /** Only records older than this id (the previous page's `nextBefore`). */
    before: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { ...strict, $id: 'OperatorAuditRequest' },
);

export const AuditEntry = Type.Object(
  {
    id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    kind: Type.Union([Type.Literal('approval.requested'), Type.Literal('approval.resolved'), Type.Literal('approval.rejected')]),
    at: Timestamp,
    /** The subject of the run (requested, resolved) or of the token that sent the refused decision. */
    subject: Type.String({ minLength: 1 }),
    tokenId: Type.Optional(Type.String({ minLength: 1 })),
    /** Set when an operator token decided: that token's subject. */
    operator: Type.Optional(Type.String({ minLength: 1 })),
    approvalId: Type.Optional(Type.String({ minLength: 1 })),
    runId: Type.Optional(Type.String({ minLength: 1 })),
    provider: Type.Optional(Type.String({ minLength: 1 })),
    tool: Type.Optional(Type.String({ minLength: 1 })),
    outcome: Type.Optional(Type.String({ minLength: 1 })),
    code: Type.Optional(Type.String({ minLength: 1 })),
  },
  { ...open, $id: 'AuditEntry' },
);

export const OperatorAuditPage = Type.Object(
  {
    records: Type.Array(Type.Ref(AuditEntry), { maxItems: 500 }),
    /** Pass as `before` for the next (older) page; absent on the last page. */
    nextBefore: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { ...open, $id: 'OperatorAuditPage' },
);

export type OperatorRun = Static<typeof OperatorRun>;
export type OperatorRunsRequest = Static<typeof OperatorRunsRequest>;
export type OperatorRunList = Static<typeof OperatorRunList>;
export type OperatorListRequest = Static<typeof OperatorListRequest>;
export type OperatorApproval = Static<typeof OperatorApproval>;
export type OperatorApprovalList = Static<typeof OperatorApprovalList>;
export type OperatorJob = Static<typeof OperatorJob>;
export type OperatorJobsRequest = Static<typeof OperatorJobsRequest>;
export type OperatorJobList = Static<typeof OperatorJobList>;
export type OperatorUsageRequest = Static<typeof OperatorUsageRequest>;
export type OperatorUsage = Static<typeof OperatorUsage>;
export type UsageTotals = Static<typeof UsageTotals>;
export type OperatorAuditRequest = Static<typeof OperatorAuditRequest>;
export type AuditEntry = Static<typeof AuditEntry>;
export type OperatorAuditPage = Static<typeof OperatorAuditPage>;
