/**
 * Application tools: functions that live in the calling application. The run hands out a
 * single-use ticket (`tool.execution.requested`); the application reports progress and
 * delivers exactly one result. Malformed, forged or mismatched submissions never consume
 * a ticket; every run end invalidates the run's tickets. Tickets are rows in the store, so the
 * result may be posted to any replica: it is checked there, committed, and signalled to the
 * replica whose run waits for it.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { ToolExecution, ToolExecutionIdentity, ToolExecutionReceipt, ToolExecutionResult } from '../../protocol/schemas.js';
import { compileSchema } from '../../runtime/json-schema.js';
import { MAX_APPLICATION_TOOL_BYTES, type ExecutionOutcome, type ToolExecutionService } from '../../runtime/services.js';
import { hasUnsafeKeys, jsonBytes } from '../../shared/json-identity.js';
import type { StateStore, TicketResult, TicketRow } from '../../store/store.js';
import { MissedSignalPoll } from '../../store/missed-signals.js';
import { allows, type Principal } from '../../http/access.js';

export interface ApplicationToolPolicy {
  enabled: true;
  /** Review every application tool call unless a token grant lowers it (default true). */
  requireApproval?: boolean;
  /** Dispatched tickets across the host (default 1000). */
  maxPending?: number;
}

/** Who delivers a result: the ticket's subject, with its provider and application-tool grants. */
type Executor = Pick<Principal, 'subject' | 'providers' | 'grants'>;

export type { ExecutionOutcome };
export { MAX_APPLICATION_TOOL_BYTES };

/** The store methods tickets need (the host's StateStore). */
export type TicketStore = Pick<StateStore, 'tickets' | 'replica'>;

/** A run on this replica waiting for its ticket's result. */
interface Waiter {
  name: string;
  onProgress(): void;
  settle(outcome: ExecutionOutcome): void;
}

export class ToolExecutionRegistry implements ToolExecutionService {
  private readonly waiters = new Map<string, Waiter>();
  private readonly maxPending: number;
  private readonly missed = new MissedSignalPoll(() => this.waiters.keys(), (id) => this.wake(id));

  constructor(
    readonly policy: ApplicationToolPolicy,
    private readonly store: TicketStore,
  ) {
    this.maxPending = policy.maxPending ?? 1000;
    store.replica.onSignal((signal) => {
      if (signal.kind === 'progress') this.waiters.get(signal.id)?.onProgress();
      if (signal.kind === 'ticket') void this.wake(signal.id);
    });
  }

  /** Tickets waiting on this replica. */
  get size(): number {
    return this.waiters.size;
  }

  async dispatch(args: Parameters<ToolExecutionService['dispatch']>[0]): ReturnType<ToolExecutionService['dispatch']> {
    if (this.waiters.size >= this.maxPending) {
      throw new DriverError('TOOL_EXECUTOR_CAPACITY', 'Too many application tool executions are pending on this host.', { retryable: true });
    }
    const execution = await this.open(args);
    let settle!: (outcome: ExecutionOutcome) => void;
    const outcome = new Promise<ExecutionOutcome>((resolve) => (settle = resolve));
    this.waiters.set(execution.executionId, { name: args.call.name, onProgress: args.onProgress, settle });
    this.missed.watch();
    return {
      execution: structuredClone(execution),
      outcome,
      invalidate: () => {
        this.waiters.delete(execution.executionId);
        this.close(execution.executionId);
      },
    };
  }

  /** A ticket of a background run that checkpoints while it waits: its result wakes the run from the store, on any replica. */
  async dispatchDetached(args: Parameters<ToolExecutionService['dispatchDetached']>[0]): Promise<ToolExecution> {
    return structuredClone(await this.open(args));
  }

  async outcome(executionId: string, tool: string): Promise<ExecutionOutcome | undefined> {
    const result = await this.store.tickets.result(executionId);
    return result && this.outcomeOf(tool, result);
  }

  close(executionId: string): void {
    void this.store.tickets.close(executionId).catch(() => undefined);
  }

  private async open(args: Parameters<ToolExecutionService['dispatchDetached']>[0]): Promise<ToolExecution> {
    if (jsonBytes(args.call) > MAX_APPLICATION_TOOL_BYTES || hasUnsafeKeys(args.call.arguments)) {
      throw new DriverError('INVALID_TOOL_CALL', 'The tool call is too large or not plain JSON.');
    }
    const execution: ToolExecution = { executionId: randomUUID(), runId: args.runId, call: structuredClone(args.call) };
    await this.store.tickets.open({
      executionId: execution.executionId,
      runId: args.runId,
      callId: args.call.id,
      subject: args.subject,
      provider: args.provider,
      tool: args.call.name,
      outputSchema: args.outputSchema,
    });
    return execution;
  }

  async progress(identity: ToolExecutionIdentity, executor: Executor): Promise<ToolExecutionReceipt> {
    await this.find(identity, executor);
    const local = this.waiters.get(identity.executionId);
    if (local) local.onProgress();
    else await this.store.tickets.progress(identity.executionId);
    return { ...pickIdentity(identity), status: 'progress' };
  }

  /** Consumes the ticket. An output the tool's contract rejects fails the run (outcome uncertain) and the sender. */
  async complete(result: ToolExecutionResult, executor: Executor): Promise<ToolExecutionReceipt> {
    if ('output' in result && hasUnsafeKeys(result.output)) {
      throw new DriverError('INVALID_TOOL_EXECUTION', 'The tool output is not plain JSON.');
    }
    const ticket = await this.find(result, executor);
    const rejection = 'error' in result ? undefined : this.checkOutput(ticket, result.output ?? null);
    const stored: TicketResult =
      'error' in result ? { error: true } : rejection ? { rejected: { code: rejection.code, message: rejection.message } } : { output: result.output ?? null };
    if (!(await this.store.tickets.settle(ticket.executionId, stored))) throw await this.gone(ticket.executionId);
    this.wakeWith(ticket.executionId, stored);
    if (rejection) throw rejection;
    return { ...pickIdentity(result), status: 'accepted' };
  }

  private checkOutput(ticket: TicketRow, output: unknown): DriverError | undefined {
    if (jsonBytes(output) > MAX_APPLICATION_TOOL_BYTES) {
      return new DriverError('TOOL_OUTPUT_LIMIT', `The tool output exceeds ${MAX_APPLICATION_TOOL_BYTES} bytes of JSON.`, { outcome: 'uncertain' });
    }
    const problem = ticket.outputSchema === undefined ? undefined : compileSchema(ticket.outputSchema).check(output);
    return problem ? new DriverError('INVALID_TOOL_OUTPUT', `The tool output does not match its output schema: ${problem}.`, { outcome: 'uncertain' }) : undefined;
  }

  /** A signal from the store: a ticket of a run here was settled (perhaps on another replica). */
  private async wake(executionId: string): Promise<void> {
    if (!this.waiters.has(executionId)) return;
    const result = await this.store.tickets.result(executionId).catch(() => undefined);
    if (result) this.wakeWith(executionId, result);
  }

  private wakeWith(executionId: string, result: TicketResult): void {
    const waiter = this.waiters.get(executionId);
    if (!waiter) return;
    this.waiters.delete(executionId);
    waiter.settle(this.outcomeOf(waiter.name, result));
  }

  private outcomeOf(name: string, result: TicketResult): ExecutionOutcome {
    if ('rejected' in result) return { failure: new DriverError(result.rejected.code, result.rejected.message, { outcome: 'uncertain' }) };
    if ('error' in result) {
      return { failure: new DriverError('APPLICATION_TOOL_FAILED', `Application tool ${name} reported a failure.`, { outcome: 'uncertain' }) };
    }
    return { output: result.output };
  }

  private async find(identity: ToolExecutionIdentity, executor: Executor): Promise<TicketRow> {
    const ticket = await this.store.tickets.read(identity.executionId);
    if (!ticket || ticket.subject !== executor.subject || (ticket.state !== 'pending' && ticket.state !== 'interrupted')) {
      throw notFound();
    }
    if (!executor.providers.has(ticket.provider) || !allows(executor, 'applicationTools', ticket.tool)) {
      throw new DriverError('FORBIDDEN', 'This token may not execute this application tool.');
    }
    if (identity.runId !== ticket.runId || identity.callId !== ticket.callId) {
      throw new DriverError('TOOL_EXECUTION_MISMATCH', 'The run or call does not match the execution ticket.');
    }
    if (ticket.state === 'interrupted' || !ticket.ownerAlive) throw interrupted();
    return ticket;
  }

  private async gone(executionId: string): Promise<DriverError> {
    const now = await this.store.tickets.read(executionId);
    return now?.state === 'interrupted' || (now?.state === 'pending' && !now.ownerAlive) ? interrupted() : notFound();
  }
}

const notFound = () => new DriverError('TOOL_EXECUTION_NOT_FOUND', 'No such pending tool execution.');
const interrupted = () =>
  new DriverError('TOOL_OUTCOME_UNCERTAIN', 'The run that issued this ticket ended when its host stopped; the result cannot be delivered.', { outcome: 'uncertain' });

function pickIdentity(identity: ToolExecutionIdentity): ToolExecutionIdentity {
  return { executionId: identity.executionId, runId: identity.runId, callId: identity.callId };
}
