/**
 * The tool and approval gate of one run: every call the model makes is checked (selected tool,
 * fresh id, arguments against the tool's schema, at most MAX_TOOL_CALLS_PER_STEP a step) before
 * any of them runs, reviewed when its tool needs approval (the host's callback, then a person
 * through an interactive approval), run — a host tool in process, an application tool through a
 * single-use ticket — and recorded as `tool.called` / `tool.completed`.
 */
import { DriverError } from '../protocol/errors.js';
import type { ProviderMessage } from '../providers/contract/v1.js';
import { abortable } from '../shared/abort.js';
import type { IdleTimer } from './idle-timer.js';
import type { PreparedRun } from './prepared-run.js';
import type { ApprovalResolution } from '../protocol/schemas.js';
import type { RunCheckpoint, RunServices } from './services.js';
import { encodeToolOutput, MAX_TOOL_CALLS_PER_STEP, type RunTool } from './tools.js';
import type { EventPayload, RunProgressPhase, ToolCall } from './types.js';

/** What the gate uses of the run it serves. */
export interface GatedRun {
  readonly prepared: PreparedRun;
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly idle: IdleTimer;
  /** Sends an event on (and waits for the journal to commit it, when the run has one). */
  commit(event: EventPayload): Promise<void>;
  /** A progress reporter for one wait (resets the idle timer; `run.progress` at most once per interval). */
  progress(phase: RunProgressPhase): () => void;
  /** Ends the run as cancelled. */
  cancel(reason: DriverError): void;
}

/** A call that waits for a person while its run checkpoints instead of holding on. */
export interface Parked {
  parked: RunCheckpoint['waiting'];
  /** When the approval expires (epoch ms). */
  expiresAt?: number;
  /** The approval's idle policy is `pause`. */
  pausesIdle: boolean;
}

type ToolMessage = Extract<ProviderMessage, { role: 'tool' }>;

export class ToolGate {
  /** Whether a tool is running now: a run that ends meanwhile has an uncertain outcome. */
  pending = false;
  private readonly usedCallIds = new Set<string>();
  private readonly services: RunServices;

  constructor(private readonly run: GatedRun) {
    this.services = run.prepared.services;
  }

  /**
   * For agents that call tools in the middle of a step (CLI agents through the MCP
   * bridge): each call gets the same checks, approvals, events and per-step limit.
   */
  midStepCaller(): (call: ToolCall) => Promise<string> {
    let calls = 0;
    return async (call) => {
      calls += 1;
      if (calls > MAX_TOOL_CALLS_PER_STEP) {
        throw new DriverError('TOOL_LIMIT', `The model requested more than ${MAX_TOOL_CALLS_PER_STEP} tool calls in one step.`);
      }
      const [checked] = this.validate([call]);
      // Not parkable: a call in the middle of a step waits in process.
      return ((await this.execute(call, checked!.tool)) as ToolMessage).content;
    };
  }

  /** Every call of a step is checked before any of them runs. */
  validate(calls: ToolCall[]): { call: ToolCall; tool: RunTool }[] {
    if (calls.length > MAX_TOOL_CALLS_PER_STEP) {
      throw new DriverError('TOOL_LIMIT', `The model requested ${calls.length} tool calls in one step; the limit is ${MAX_TOOL_CALLS_PER_STEP}.`);
    }
    const selected = new Map(this.run.prepared.tools.map((tool) => [tool.name, tool]));
    return calls.map((call) => {
      const tool = selected.get(call.name);
      if (!tool) throw new DriverError('TOOL_NOT_ALLOWED', `The model called ${JSON.stringify(call.name)}, which this run did not select.`);
      if (typeof call.id !== 'string' || call.id === '' || call.id.length > 256 || this.usedCallIds.has(call.id)) {
        throw new DriverError('INVALID_TOOL_CALL', 'The model produced a tool call with a missing or repeated id.');
      }
      this.usedCallIds.add(call.id);
      if (call.arguments === null || typeof call.arguments !== 'object' || Array.isArray(call.arguments)) {
        throw new DriverError('INVALID_TOOL_ARGUMENTS', `The arguments for ${call.name} are not a JSON object.`);
      }
      const problem = tool.input.check(call.arguments);
      if (problem) throw new DriverError('INVALID_TOOL_ARGUMENTS', `The arguments for ${call.name} do not match its schema: ${problem}.`);
      return { call, tool };
    });
  }

  /** Every call id seen so far, for a checkpoint. */
  usedIds(): string[] {
    return [...this.usedCallIds];
  }

  restoreIds(ids: readonly string[]): void {
    for (const id of ids) this.usedCallIds.add(id);
  }

  /** A checkpoint's remaining calls with their tools (checked when they were made). */
  resumed(calls: ToolCall[]): { call: ToolCall; tool: RunTool }[] {
    const selected = new Map(this.run.prepared.tools.map((tool) => [tool.name, tool]));
    return calls.map((call) => {
      const tool = selected.get(call.name);
      if (!tool) throw new DriverError('TOOL_NOT_ALLOWED', `The model called ${JSON.stringify(call.name)}, which this run did not select.`);
      return { call, tool };
    });
  }

  /**
   * Runs one checked call: `tool.called`, the approval gate when the tool needs it, the tool,
   * `tool.completed`. `parkable`: a wait for a person checkpoints the run instead (the answer
   * is `Parked`); `waiting`: the call was started before a checkpoint and waits for this.
   */
  async execute(call: ToolCall, tool: RunTool, options: { parkable?: boolean; waiting?: RunCheckpoint['waiting'] } = {}): Promise<ToolMessage | Parked> {
    const { parkable = false, waiting } = options;
    if (waiting?.kind === 'approval') {
      const still = await this.reviewResumed(call, waiting);
      if (still) return still;
    } else if (!waiting) {
      this.run.signal.throwIfAborted();
      await this.run.commit({ type: 'tool.called', call: structuredClone(call) });
      if (tool.requiresApproval) {
        const parked = await this.review(call, parkable);
        if (parked) return parked;
      }
    }
    let output: unknown;
    if (waiting?.kind === 'ticket') {
      const outcome = await this.resumedTicket(call, waiting.executionId);
      if (!outcome) return { parked: waiting, pausesIdle: false };
      output = outcome.output;
    } else {
      this.run.signal.throwIfAborted();
      if (tool.kind === 'application' && parkable) return this.dispatchDetached(call, tool);
      output = tool.kind === 'host' ? await this.executeHostTool(call, tool) : await this.dispatchApplicationTool(call, tool);
    }
    const encoded = encodeToolOutput(output);
    this.pending = false;
    this.run.idle.touch();
    await this.run.commit({ type: 'tool.completed', callId: call.id, output: encoded.value });
    return { role: 'tool', callId: call.id, name: call.name, content: encoded.json };
  }

  private async executeHostTool(call: ToolCall, tool: Extract<RunTool, { kind: 'host' }>): Promise<unknown> {
    this.pending = true;
    try {
      return await abortable(
        Promise.resolve().then(() =>
          tool.tool.execute(structuredClone(call.arguments), {
            runId: this.run.runId,
            subject: this.run.prepared.subject,
            signal: this.run.signal,
            reportProgress: this.run.progress('tool'),
          }),
        ),
        this.run.signal,
      );
    } catch (error) {
      if (this.run.signal.aborted) throw error;
      throw new DriverError('TOOL_FAILED', `Tool ${call.name} failed.`, { outcome: 'uncertain', cause: error });
    }
  }

  /** Hands the call to the application through a ticket whose result wakes the checkpointed run (on any replica). */
  private async dispatchDetached(call: ToolCall, tool: Extract<RunTool, { kind: 'application' }>): Promise<Parked> {
    const execution = await this.services.toolExecutions!.dispatchDetached({
      runId: this.run.runId,
      subject: this.run.prepared.subject,
      provider: this.run.prepared.request.provider,
      call,
      outputSchema: tool.outputSchema,
    });
    this.pending = true;
    await this.run.commit({ type: 'tool.execution.requested', execution });
    return { parked: { kind: 'ticket', executionId: execution.executionId }, pausesIdle: false };
  }

  /** A resumed run's ticket: its result (the ticket is then closed), or undefined while none arrived and the run goes on waiting. */
  private async resumedTicket(call: ToolCall, executionId: string): Promise<{ output: unknown } | undefined> {
    const tickets = this.services.toolExecutions!;
    this.pending = true;
    const outcome = await tickets.outcome(executionId, call.name);
    if (!outcome && !this.run.signal.aborted) return undefined;
    // Ended (a cancel, a lapsed idle deadline) or answered: the ticket is used up either way.
    tickets.close(executionId);
    this.run.signal.throwIfAborted();
    if ('failure' in outcome!) throw outcome.failure;
    return outcome;
  }

  /** Hands the call to the application through a single-use ticket and waits for its one result. */
  private async dispatchApplicationTool(call: ToolCall, tool: Extract<RunTool, { kind: 'application' }>): Promise<unknown> {
    const ticket = await this.services.toolExecutions!.dispatch({
      runId: this.run.runId,
      subject: this.run.prepared.subject,
      provider: this.run.prepared.request.provider,
      call,
      outputSchema: tool.outputSchema,
      onProgress: this.run.progress('tool'),
    });
    this.pending = true;
    await this.run.commit({ type: 'tool.execution.requested', execution: ticket.execution });
    try {
      const outcome = await abortable(ticket.outcome, this.run.signal);
      if ('failure' in outcome) throw outcome.failure;
      return outcome.output;
    } finally {
      ticket.invalidate();
    }
  }

  /**
   * The approval gate: the host's callback first (it can only say no), then, when the run
   * opted in, a person through an interactive approval. With neither, fail closed.
   */
  async review(call: ToolCall, parkable = false): Promise<Parked | undefined> {
    const approve = this.services.approve;
    if (approve) {
      const approved = await abortable(
        Promise.resolve().then(() => approve(structuredClone(call), { runId: this.run.runId, subject: this.run.prepared.subject, signal: this.run.signal })),
        this.run.signal,
      );
      if (approved !== true) throw new DriverError('APPROVAL_REQUIRED', `Tool ${call.name} requires approval, which the host did not give.`);
    }
    const interactive = this.run.prepared.request.approvals;
    if (!interactive) {
      if (!approve) throw new DriverError('APPROVAL_REQUIRED', `Tool ${call.name} requires approval, and this run did not ask for interactive approvals.`);
      return undefined;
    }
    if (parkable) {
      const approval = await this.services.approvals!.openDetached({
        runId: this.run.runId,
        subject: this.run.prepared.subject,
        provider: this.run.prepared.request.provider,
        call,
        idlePolicy: interactive.idlePolicy,
        ...(interactive.expiresAfterMs !== undefined ? { expiresAfterMs: interactive.expiresAfterMs } : {}),
      });
      await this.run.commit({ type: 'approval.requested', approval });
      return {
        parked: { kind: 'approval', approvalId: approval.approvalId },
        pausesIdle: interactive.idlePolicy === 'pause',
        ...(approval.expiresAt ? { expiresAt: Date.parse(approval.expiresAt) } : {}),
      };
    }
    const pending = await this.services.approvals!.open({
      runId: this.run.runId,
      subject: this.run.prepared.subject,
      provider: this.run.prepared.request.provider,
      call,
      idlePolicy: interactive.idlePolicy,
      ...(interactive.expiresAfterMs !== undefined ? { expiresAfterMs: interactive.expiresAfterMs } : {}),
    });
    await this.run.commit({ type: 'approval.requested', approval: pending.approval });
    const pause = interactive.idlePolicy === 'pause';
    if (pause) this.run.idle.pause();
    let settlement;
    try {
      settlement = await abortable(pending.settled, this.run.signal);
    } catch (error) {
      const resolution = await pending.cancel();
      if (resolution) await this.run.commit({ type: 'approval.resolved', resolution });
      throw error;
    } finally {
      if (pause) this.run.idle.resume();
    }
    if ('failure' in settlement) throw settlement.failure;
    await this.resolved(call, settlement.resolution);
    return undefined;
  }

  /**
   * A resumed run's approval: its resolution, as a connected run would have received it. Still
   * pending, the run was woken to end (a cancel, a lapsed idle deadline): the approval is
   * cancelled first, as when a connected run ends while it waits.
   */
  private async reviewResumed(call: ToolCall, waiting: Extract<RunCheckpoint['waiting'], { kind: 'approval' }>): Promise<Parked | undefined> {
    const approvals = this.services.approvals!;
    let resolution = await approvals.settlement(waiting.approvalId);
    if (this.run.signal.aborted) {
      resolution ??= await approvals.cancel(waiting.approvalId);
      if (resolution) await this.run.commit({ type: 'approval.resolved', resolution });
      this.run.signal.throwIfAborted();
    }
    // Woken before anything was decided (an early wake-up): it waits on.
    if (!resolution) return { parked: waiting, pausesIdle: this.run.prepared.request.approvals?.idlePolicy === 'pause' };
    await this.resolved(call, resolution);
    return undefined;
  }

  private async resolved(call: ToolCall, resolution: ApprovalResolution): Promise<void> {
    await this.run.commit({ type: 'approval.resolved', resolution });
    if (resolution.outcome === 'denied') throw new DriverError('APPROVAL_DENIED', `The call to ${call.name} was denied.`);
    if (resolution.outcome === 'expired') throw new DriverError('APPROVAL_EXPIRED', `The approval for ${call.name} expired before a decision.`);
    if (resolution.outcome === 'cancelled') this.run.cancel(new DriverError('CANCELLED', 'The run was cancelled at an approval.'));
  }
}
