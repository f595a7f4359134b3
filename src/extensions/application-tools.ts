/**
 * Application tools: functions that live in the calling application. The run hands out a
 * single-use ticket (`tool.execution.requested`); the application reports progress and
 * delivers exactly one result. Malformed, forged or mismatched submissions never consume
 * a ticket; every run end invalidates the run's tickets.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../protocol/errors.js';
import type { ToolCall, ToolExecution, ToolExecutionIdentity, ToolExecutionReceipt, ToolExecutionResult } from '../protocol/schemas.js';
import type { CompiledSchema } from '../runtime/json-schema.js';
import { MAX_APPLICATION_TOOL_BYTES, type ExecutionOutcome, type ToolExecutionService } from '../runtime/services.js';
import { hasUnsafeKeys, jsonBytes } from '../shared/json-identity.js';

export interface ApplicationToolPolicy {
  enabled: true;
  /** Review every application tool call unless a token grant lowers it (default true). */
  requireApproval?: boolean;
  /** Dispatched tickets across the host (default 1000). */
  maxPending?: number;
}

export interface Executor {
  subject: string;
  providers: ReadonlySet<string>;
  applicationTools: ReadonlySet<string>;
}

export type { ExecutionOutcome };
export { MAX_APPLICATION_TOOL_BYTES };

interface Ticket {
  execution: ToolExecution;
  subject: string;
  provider: string;
  outputSchema: CompiledSchema | undefined;
  onProgress(): void;
  settle(outcome: ExecutionOutcome): void;
}

export class ToolExecutionRegistry implements ToolExecutionService {
  private readonly tickets = new Map<string, Ticket>();
  private readonly maxPending: number;

  constructor(readonly policy: ApplicationToolPolicy) {
    this.maxPending = policy.maxPending ?? 1000;
  }

  get size(): number {
    return this.tickets.size;
  }

  dispatch(args: {
    runId: string;
    subject: string;
    provider: string;
    call: ToolCall;
    outputSchema: CompiledSchema | undefined;
    onProgress(): void;
  }): { execution: ToolExecution; outcome: Promise<ExecutionOutcome>; invalidate(): void } {
    if (this.tickets.size >= this.maxPending) {
      throw new DriverError('TOOL_EXECUTOR_CAPACITY', 'Too many application tool executions are pending on this host.', { retryable: true });
    }
    if (jsonBytes(args.call) > MAX_APPLICATION_TOOL_BYTES || hasUnsafeKeys(args.call.arguments)) {
      throw new DriverError('INVALID_TOOL_CALL', 'The tool call is too large or not plain JSON.');
    }
    const execution: ToolExecution = { executionId: randomUUID(), runId: args.runId, call: structuredClone(args.call) };
    let settle!: (outcome: ExecutionOutcome) => void;
    const outcome = new Promise<ExecutionOutcome>((resolve) => (settle = resolve));
    this.tickets.set(execution.executionId, { execution, subject: args.subject, provider: args.provider, outputSchema: args.outputSchema, onProgress: args.onProgress, settle });
    return { execution: structuredClone(execution), outcome, invalidate: () => void this.tickets.delete(execution.executionId) };
  }

  progress(identity: ToolExecutionIdentity, executor: Executor): ToolExecutionReceipt {
    const ticket = this.find(identity, executor);
    ticket.onProgress();
    return { ...pickIdentity(identity), status: 'progress' };
  }

  /** Consumes the ticket. An output the tool's contract rejects fails the run (outcome uncertain) and the sender. */
  complete(result: ToolExecutionResult, executor: Executor): ToolExecutionReceipt {
    if ('output' in result && hasUnsafeKeys(result.output)) {
      throw new DriverError('INVALID_TOOL_EXECUTION', 'The tool output is not plain JSON.');
    }
    const ticket = this.find(result, executor);
    this.tickets.delete(ticket.execution.executionId);
    if ('error' in result) {
      ticket.settle({ failure: new DriverError('APPLICATION_TOOL_FAILED', `Application tool ${ticket.execution.call.name} reported a failure.`, { outcome: 'uncertain' }) });
      return { ...pickIdentity(result), status: 'accepted' };
    }
    let rejection: DriverError | undefined;
    if (jsonBytes(result.output ?? null) > MAX_APPLICATION_TOOL_BYTES) {
      rejection = new DriverError('TOOL_OUTPUT_LIMIT', `The tool output exceeds ${MAX_APPLICATION_TOOL_BYTES} bytes of JSON.`, { outcome: 'uncertain' });
    } else {
      const problem = ticket.outputSchema?.check(result.output ?? null);
      if (problem) rejection = new DriverError('INVALID_TOOL_OUTPUT', `The tool output does not match its output schema: ${problem}.`, { outcome: 'uncertain' });
    }
    if (rejection) {
      ticket.settle({ failure: rejection });
      throw rejection;
    }
    ticket.settle({ output: result.output ?? null });
    return { ...pickIdentity(result), status: 'accepted' };
  }

  private find(identity: ToolExecutionIdentity, executor: Executor): Ticket {
    const ticket = this.tickets.get(identity.executionId);
    if (!ticket || ticket.subject !== executor.subject) {
      throw new DriverError('TOOL_EXECUTION_NOT_FOUND', 'No such pending tool execution.');
    }
    if (!executor.providers.has(ticket.provider) || !executor.applicationTools.has(ticket.execution.call.name)) {
      throw new DriverError('FORBIDDEN', 'This token may not execute this application tool.');
    }
    if (identity.runId !== ticket.execution.runId || identity.callId !== ticket.execution.call.id) {
      throw new DriverError('TOOL_EXECUTION_MISMATCH', 'The run or call does not match the execution ticket.');
    }
    return ticket;
  }
}

function pickIdentity(identity: ToolExecutionIdentity): ToolExecutionIdentity {
  return { executionId: identity.executionId, runId: identity.runId, callId: identity.callId };
}
