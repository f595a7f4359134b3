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

/** What an active run is waiting for: a person's decision on an approval, or an application's tool result. */
export const OperatorWaiting = Type.Object(
  {
    kind: Type.Union([Type.Literal('approval'), Type.Literal('tool')]),
    /** When the wait began (the `approval.requested` or `tool.execution.requested` event). */
    since: Timestamp,
    /** The tool the wait is for. */
    tool: Type.String({ minLength: 1 }),
    /** The pending approval's or tool execution's id. */
    id: Type.Optional(Type.String({ minLength: 1 })),
  },
  { ...open, $id: 'OperatorWaiting' },
);

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
    /** How long a finished run took. */
    durationMs: Type.Optional(Type.Number({ minimum: 0 })),
    /** Steps started so far. */
    steps: Count,
    /** Tokens reported so far (a lower bound while the run is active). */
    usage: Type.Ref(Usage),
    /** The error code of a run that did not complete. */
    errorCode: Type.Optional(Type.String({ minLength: 1 })),
    /** Why a run did not complete, in words, from its status and error code (never its error message, which may quote the run's content). */
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
    /** `uncertain` for an interrupted run: what its provider or tools did (and how many steps it took) is unknown. */
    outcome: Type.Optional(Type.Literal('uncertain')),
    /** Set while an active run waits for a person or an application. */
    waiting: Type.Optional(Type.Ref(OperatorWaiting)),
    /** The durable job that runs it, if any. */
    jobId: Type.Optional(Uuid),
  },
  { ...open, $id: 'OperatorRun' },
);

export const OperatorRunsRequest = Type.Object(
  {
    /** How many finished runs to list per page (default 20). */
    finished: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    /** The previous page's `nextBefore`: only finished runs older than the last one listed. */
    before: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
    /** Only runs in this state (`running`: active runs only; any other: finished runs only). */
    state: Type.Optional(OperatorRunState),
    /** Only runs of this subject. */
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** Only runs on this provider. */
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** Only runs whose id, subject, provider or model contains this text (case-insensitive). */
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { ...strict, $id: 'OperatorRunsRequest' },
);

export const OperatorRunList = Type.Object(
  {
    /** Runs any replica is serving now, and background runs waiting checkpointed for a person (oldest first, at most 1,000). */
    active: Type.Array(Type.Ref(OperatorRun), { maxItems: 100_000 }),
    /** Finished runs (any replica), newest first: one page. */
    finished: Type.Array(Type.Ref(OperatorRun), { maxItems: 100 }),
    /** Pass as `before` for the next (older) page of finished runs; absent on the last page. */
    nextBefore: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
  },
  { ...open, $id: 'OperatorRunList' },
);

/** One tool call of a run, as the run's events told it. */
export const OperatorToolCall = Type.Object(
  {
    callId: Type.String({ minLength: 1 }),
    name: Type.String({ minLength: 1 }),
    calledAt: Timestamp,
    /** From the call to its result; absent while it has none. */
    durationMs: Type.Optional(Type.Number({ minimum: 0 })),
    /** The call's interactive approval, if it needed one. */
    approval: Type.Optional(
      Type.Object(
        {
          requestedAt: Timestamp,
          resolvedAt: Type.Optional(Timestamp),
          /** `approved`, `denied`, `expired` or `cancelled`; absent while pending. */
          outcome: Type.Optional(Type.String({ minLength: 1 })),
        },
        open,
      ),
    ),
    /** When the call was handed to the application (an application tool). */
    executionRequestedAt: Type.Optional(Timestamp),
  },
  { ...open, $id: 'OperatorToolCall' },
);

/** One model step of a run: when it began, how long it took, its tokens and the tools it called. */
export const OperatorStep = Type.Object(
  {
    step: Type.Integer({ minimum: 1 }),
    startedAt: Timestamp,
    /** Until the next step or the run's end; absent while the step runs. */
    durationMs: Type.Optional(Type.Number({ minimum: 0 })),
    usage: Type.Ref(Usage),
    tools: Type.Array(Type.Ref(OperatorToolCall), { maxItems: 1000 }),
  },
  { ...open, $id: 'OperatorStep' },
);

export const OperatorRunDetail = Type.Object(
  {
    run: Type.Ref(OperatorRun),
    /**
     * The run's steps as its events told them: present when this replica served the run
     * (while it is active, and for its most recently finished runs); absent when only the
     * usage record is left.
     */
    steps: Type.Optional(Type.Array(Type.Ref(OperatorStep), { maxItems: 10_000 })),
  },
  { ...open, $id: 'OperatorRunDetail' },
);

/**
 * One change to what an operator sees, on `GET /v1/operator/updates`. The stream starts
 * with a `snapshot`; then `run` (an active run started, changed or ended: this replica's as it
 * happens, another replica's when the store is next read),
 * `finished` (finished runs were recorded: with `run` when this replica recorded it, without
 * when another replica did), `approvals` (the number of pending approvals changed) and
 * `jobs` (some job changed).
 */
export const OperatorUpdate = Type.Object(
  {
    /** `snapshot`, `run`, `finished`, `approvals` or `jobs`; a reader ignores a type it does not know (more may come). */
    type: Type.String({ minLength: 1, maxLength: 64 }),
    at: HostTimestamp,
    /** `snapshot`: the active runs (every replica's, as last read). */
    active: Type.Optional(Type.Array(Type.Ref(OperatorRun), { maxItems: 100_000 })),
    /** `run`, `finished`: the run. */
    run: Type.Optional(Type.Ref(OperatorRun)),
    /** `snapshot`, `approvals`: how many approvals are pending (every subject, every replica). */
    pendingApprovals: Type.Optional(Count),
  },
  { ...open, $id: 'OperatorUpdate' },
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
    /** Group by subject, provider, model, UTC day (`2026-12-01`) or UTC hour (`2026-12-01T14`). */
    by: Type.Optional(Type.Union([Type.Literal('subject'), Type.Literal('provider'), Type.Literal('model'), Type.Literal('day'), Type.Literal('hour')])),
    /** Only runs that finished at or after this time. */
    since: Type.Optional(HostTimestamp),
  },
  { ...strict, $id: 'OperatorUsageRequest' },
);

/** Sums over stored usage records (the same totals `agenticdriver usage` prints). */
export const UsageTotals = Type.Object(
  {
    /** The group: a subject, provider, `provider/model`, UTC day or UTC hour; absent when not grouped. */
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

export const OperatorLimitsRequest = Type.Object(
  {
    /** Only this subject's limits (its own rule, else the `*` default's, with its own counters); absent: every configured scope. */
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { ...strict, $id: 'OperatorLimitsRequest' },
);

/** One budget of a scope as it stands now (the same figures `agenticdriver usage` prints). */
export const BudgetStatus = Type.Object(
  {
    /** `usd` (amounts in US dollars) or `tokens` (input + output). */
    unit: Type.Union([Type.Literal('usd'), Type.Literal('tokens')]),
    /** `day`, `week`, `month` or `rolling-<ms>`. */
    period: Type.String({ minLength: 1, maxLength: 64 }),
    limit: Type.Number({ minimum: 0 }),
    used: Type.Number({ minimum: 0 }),
    /** Held by runs in flight for their next step. */
    reserved: Type.Number({ minimum: 0 }),
    remaining: Type.Number({ minimum: 0 }),
    /** When the period resets (rolling: when its oldest counted bucket stops counting). */
    resetsAt: HostTimestamp,
  },
  { ...open, $id: 'BudgetStatus' },
);

/** One scope's limits (the host, a subject, a token, a provider instance): its rate limits as configured and its budgets now. */
export const ScopeLimits = Type.Object(
  {
    scope: Type.Union([Type.Literal('host'), Type.Literal('subject'), Type.Literal('token'), Type.Literal('provider')]),
    /** The subject, token id or provider id; absent for the host. */
    name: Type.Optional(Type.String({ minLength: 1 })),
    requestsPerMinute: Type.Optional(Count),
    tokensPerMinute: Type.Optional(Count),
    concurrentRuns: Type.Optional(Count),
    budgets: Type.Array(Type.Ref(BudgetStatus), { maxItems: 16 }),
  },
  { ...open, $id: 'ScopeLimits' },
);

/** The host's configured limits (config `limits`) and where each budget stands; empty when none are configured. */
export const OperatorLimits = Type.Object({ limits: Type.Array(Type.Ref(ScopeLimits), { maxItems: 100_000 }) }, { ...open, $id: 'OperatorLimits' });

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

export type OperatorWaiting = Static<typeof OperatorWaiting>;
export type OperatorRun = Static<typeof OperatorRun>;
export type OperatorToolCall = Static<typeof OperatorToolCall>;
export type OperatorStep = Static<typeof OperatorStep>;
export type OperatorRunDetail = Static<typeof OperatorRunDetail>;
export type OperatorUpdate = Static<typeof OperatorUpdate>;
export type OperatorRunsRequest = Static<typeof OperatorRunsRequest>;
export type OperatorRunList = Static<typeof OperatorRunList>;
export type OperatorListRequest = Static<typeof OperatorListRequest>;
export type OperatorApproval = Static<typeof OperatorApproval>;
export type OperatorApprovalList = Static<typeof OperatorApprovalList>;
export type OperatorJobsRequest = Static<typeof OperatorJobsRequest>;
export type OperatorJob = Static<typeof OperatorJob>;
export type OperatorJobList = Static<typeof OperatorJobList>;
export type OperatorUsageRequest = Static<typeof OperatorUsageRequest>;
export type UsageTotals = Static<typeof UsageTotals>;
export type OperatorUsage = Static<typeof OperatorUsage>;
export type OperatorLimitsRequest = Static<typeof OperatorLimitsRequest>;
export type BudgetStatus = Static<typeof BudgetStatus>;
export type ScopeLimits = Static<typeof ScopeLimits>;
export type OperatorLimits = Static<typeof OperatorLimits>;
export type OperatorAuditRequest = Static<typeof OperatorAuditRequest>;
export type AuditEntry = Static<typeof AuditEntry>;
export type OperatorAuditPage = Static<typeof OperatorAuditPage>;
