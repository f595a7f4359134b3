/**
 * What a prepared run reaches beyond itself, in one object: the clock, the approval gate,
 * application-tool tickets, the usage sinks and the retry cap. The runtime names only these
 * interfaces; the host (or an in-process caller) wires in the implementations, such as the
 * registries in `src/extensions/`.
 */
import type { DriverError } from '../protocol/errors.js';
import type { ProviderAdapter, ProviderContinuation, ProviderMessage } from '../providers/contract/v1.js';
import type { ApprovalRequest, ApprovalResolution, RetrievalOptions, RetrievalResult, ToolCall, ToolExecution } from '../protocol/schemas.js';
import type { Clock } from '../shared/clock.js';
import type { PreparedContext } from './context.js';
import type { Metering } from './metering.js';
import type { MeterState } from './usage.js';
import type { ApproveCallback } from './tools.js';
import type { EventPayload, Usage } from './types.js';
import type { RunStartRecord, UsageRecord } from './usage-record.js';

/** The largest JSON size of an application tool's definition, call or output. */
export const MAX_APPLICATION_TOOL_BYTES = 128_000;

export type ApprovalSettlement = { resolution: ApprovalResolution } | { failure: DriverError };

export interface OpenApproval {
  approval: ApprovalRequest;
  settled: Promise<ApprovalSettlement>;
  /** Resolves a still-pending approval as `cancelled` (the run is ending); returns that resolution. */
  cancel(): Promise<ApprovalResolution | undefined>;
}

/** Interactive approvals: a person decides a pending call. */
export interface ApprovalService {
  readonly policy: { readonly allowIdlePause?: boolean };
  open(args: { runId: string; subject: string; provider: string; call: ToolCall; idlePolicy: 'pause' | 'continue'; expiresAfterMs?: number }): Promise<OpenApproval>;
  /**
   * Opens an approval for a run that will checkpoint while it waits: nobody on this replica
   * waits for it (the decision wakes the run from the store, on any replica).
   */
  openDetached(args: { runId: string; subject: string; provider: string; call: ToolCall; idlePolicy: 'pause' | 'continue'; expiresAfterMs?: number }): Promise<ApprovalRequest>;
  /**
   * A detached approval as a resumed run finds it: its resolution (resolved `expired` first when
   * its deadline passed), or undefined while it is still pending.
   */
  settlement(approvalId: string): Promise<ApprovalResolution | undefined>;
  /** Resolves a still-pending detached approval as `cancelled` (the resumed run ends); returns that resolution. */
  cancel(approvalId: string): Promise<ApprovalResolution | undefined>;
}

export type ExecutionOutcome = { output: unknown } | { failure: DriverError };

/** Application tools: the calling application executes the call through a single-use ticket. */
export interface ToolExecutionService {
  readonly policy: { readonly requireApproval?: boolean };
  dispatch(args: {
    runId: string;
    subject: string;
    provider: string;
    call: ToolCall;
    /** The tool's output schema as the application declared it (validated at prepare). */
    outputSchema: Record<string, unknown> | undefined;
    onProgress(): void;
  }): Promise<{ execution: ToolExecution; outcome: Promise<ExecutionOutcome>; invalidate(): void }>;
  /** Dispatches a ticket for a run that will checkpoint while it waits: the result wakes the run from the store, on any replica. */
  dispatchDetached(args: { runId: string; subject: string; provider: string; call: ToolCall; outputSchema: Record<string, unknown> | undefined }): Promise<ToolExecution>;
  /** A detached ticket's outcome as a resumed run finds it; undefined while no result arrived. */
  outcome(executionId: string, tool: string): Promise<ExecutionOutcome | undefined>;
  /** The run ended or went on: the ticket can no longer be used. */
  close(executionId: string): void;
}

/**
 * The durable log of one run's compact events (idempotent runs). The run awaits each record
 * before going on: `tool.called` is committed before the tool may run, a tool's confirmed
 * output before the model sees it, the terminal event before the caller does.
 */
export interface RunJournal {
  record(runId: string, event: EventPayload): Promise<void>;
}

/**
 * A background run's state while it waits for a person (an approval decision or an application
 * tool's result), in the store: enough for any replica to go on from there. Only a run that waits
 * between model steps checkpoints; a call made in the middle of a step (a CLI agent's, through
 * its MCP bridge) waits in process, as on a connection.
 */
export interface RunCheckpoint {
  version: 1;
  /** The step whose tool calls are being run. */
  step: number;
  /** The conversation so far, ending with the step's assistant message. */
  messages: ProviderMessage[];
  /** This step's calls not yet run; the first is the one waited for. */
  calls: ToolCall[];
  /** Every call id the run has seen (a repeated id is refused). */
  usedCallIds: string[];
  /** What the first call waits for. */
  waiting: { kind: 'approval'; approvalId: string } | { kind: 'ticket'; executionId: string };
  /** Usage so far (the meter's counters and sums). */
  meter: MeterState;
  /** When the run started (epoch ms): its usage record spans the waits. */
  startedAt: number;
  /** The context items, with retrieved passages, and the retrieval evidence to revalidate. */
  context: PreparedContext;
  retrieved?: RetrievalResult;
  /** The approval's idle policy was `continue` and the run has an idle timeout: when it lapses (epoch ms). */
  idleDeadline?: number;
  /** Epoch ms at which a waiting run must be looked at even without an answer (approval expiry, idle deadline). */
  wakeAt?: number;
}

/** Where a checkpointing run hands its checkpoint (the job worker commits it with the run's state `waiting`). */
export interface RunParking {
  park(checkpoint: RunCheckpoint): Promise<void>;
}

/**
 * Governance at the run's step boundaries (the host's `limits`): a step may be refused before it
 * starts — between steps, never while a tool runs — and each step's usage is settled after it.
 */
export interface StepGate {
  /** Before model step `step` (it may wait, until `signal` aborts); throws a typed error (BUDGET_EXCEEDED, RATE_LIMITED) to end the run there. */
  before(step: number, signal?: AbortSignal): Promise<void>;
  /** After a model step, with the usage it reported. */
  after(usage: Usage | undefined): Promise<void>;
}

export interface ExecuteOptions {
  /** Budgets and rate limits between model steps. */
  steps?: StepGate | undefined;
  /** A background run that may checkpoint while it waits for a person (between model steps). */
  parking?: RunParking | undefined;
  /** Goes on from a checkpoint: the events continue after `sequence`. */
  resume?: { checkpoint: RunCheckpoint; sequence: number } | undefined;
  journal?: RunJournal | undefined;
  /** The run's id when the caller fixed it beforehand (a durable job's, an idempotent run's). */
  runId?: string | undefined;
  /** A native-mode session turn: handed to the run's first model step. */
  continuation?: ProviderContinuation | undefined;
  /**
   * The run's own controller, made by the caller for this run alone, instead of a signal the run
   * follows with a controller of its own: aborting it cancels the run, and the run aborts it when it ends.
   */
  controller?: AbortController | undefined;
}

/** What the journal keeps: everything but streamed text, progress and optional vendor events. */
export function isJournaled(event: EventPayload): boolean {
  return event.type !== 'text.delta' && event.type !== 'run.progress' && !(event as { optional?: boolean }).optional;
}

/** Who asks, for which run, and how real work is reported (resets the run's idle timer). */
export interface RetrievalCallContext {
  subject: string;
  /** The run the search serves (its embedding usage record names it as the parent). */
  runId?: string;
  signal: AbortSignal;
  onProgress?: () => void;
}

/**
 * Scoped retrieval for runs (`retrieval` run option): a search authorized for the subject,
 * and the re-check of that evidence (same corpus index, still authorized, unchanged sources)
 * before the run completes. `src/extensions/retrieval` implements it.
 */
export interface RetrievalContext {
  search(options: RetrievalOptions & { query: string }, context: RetrievalCallContext): Promise<RetrievalResult>;
  /** CONTEXT_NOT_FOUND when any hit is no longer visible at its revision and digest. */
  revalidate(result: RetrievalResult, context: RetrievalCallContext): Promise<void>;
}

export interface RunServices {
  clock: Clock;
  /** Minimum interval between `run.progress` events of one wait. */
  progressIntervalMs: number;
  /** Decides tools that require approval; absent means every such call fails closed. */
  approve?: ApproveCallback | undefined;
  approvals?: ApprovalService | undefined;
  toolExecutions?: ToolExecutionService | undefined;
  /** Told that a run starts, before its provider is called. */
  onRunStarted?: ((record: RunStartRecord) => void | Promise<void>) | undefined;
  /** Host identity, labels and prices stamped on every usage record. */
  metering: Metering;
  /** Metering sink, after every run. */
  onUsage?: ((record: UsageRecord) => void | Promise<void>) | undefined;
  /** Told the unmasked cause whenever a run ends INTERNAL_ERROR. */
  onInternalError?: ((error: unknown, runId: string) => void) | undefined;
  /** The host's cap on provider attempts per step. */
  maxAttempts?: number | undefined;
  /** Scoped retrieval for the `retrieval` run option; absent → RETRIEVAL_UNAVAILABLE. */
  retrieval?: RetrievalContext | undefined;
  /** Marks the run's adapter in use until the run ends (a replaced adapter is closed once idle). */
  hold?: ((adapter: ProviderAdapter) => () => void) | undefined;
}
