/**
 * The ergonomic layer over approval decisions and application-tool results: answer an
 * `approval.requested` or a `tool.execution.requested` event with one call, and run a
 * map of application functions while streaming. Nothing runs unless the application
 * registered it under that exact tool name.
 */
import { DriverError } from '../protocol/errors.js';
import type {
  ApprovalDecision,
  ApprovalRequest,
  ApprovalResolution,
  RunEvent,
  RunEventOf,
  RunRequest,
  ToolCall,
  ToolExecution,
  ToolExecutionIdentity,
  ToolExecutionReceipt,
  ToolExecutionResult,
} from '../protocol/schemas.js';

export interface CallOptions {
  signal?: AbortSignal;
}

/** The three host calls the layer is built on (implemented by AgenticClient). */
export interface InteractiveCalls {
  decideApproval(decision: ApprovalDecision, options?: CallOptions): Promise<ApprovalResolution>;
  reportToolProgress(identity: ToolExecutionIdentity, options?: CallOptions): Promise<ToolExecutionReceipt>;
  completeTool(result: ToolExecutionResult, options?: CallOptions): Promise<ToolExecutionReceipt>;
}

/** One pending approval; each answer echoes the exact run and call the host asked about. */
export class PendingApproval {
  readonly approval: ApprovalRequest;

  constructor(
    private readonly calls: InteractiveCalls,
    source: RunEventOf<'approval.requested'> | ApprovalRequest,
  ) {
    this.approval = 'approval' in source ? source.approval : source;
  }

  get call(): ToolCall {
    return this.approval.call;
  }

  approve(options?: CallOptions): Promise<ApprovalResolution> {
    return this.decide('approve', options);
  }

  deny(options?: CallOptions): Promise<ApprovalResolution> {
    return this.decide('deny', options);
  }

  /** Cancels the whole run (the host ends it with `run.cancelled`). */
  cancel(options?: CallOptions): Promise<ApprovalResolution> {
    return this.decide('cancel', options);
  }

  decide(decision: ApprovalDecision['decision'], options?: CallOptions): Promise<ApprovalResolution> {
    const { approvalId, runId, call } = this.approval;
    return this.calls.decideApproval({ approvalId, runId, call: { id: call.id, name: call.name, arguments: call.arguments }, decision }, options);
  }
}

/** One dispatched application-tool call: report progress, then deliver exactly one result or failure. */
export class PendingExecution {
  readonly execution: ToolExecution;
  readonly identity: ToolExecutionIdentity;

  constructor(
    private readonly calls: InteractiveCalls,
    source: RunEventOf<'tool.execution.requested'> | ToolExecution,
  ) {
    this.execution = 'execution' in source ? source.execution : source;
    this.identity = { executionId: this.execution.executionId, runId: this.execution.runId, callId: this.execution.call.id };
  }

  get call(): ToolCall {
    return this.execution.call;
  }

  /** Call after real work was done, never on a timer: it resets the run's idle timer. */
  progress(options?: CallOptions): Promise<ToolExecutionReceipt> {
    return this.calls.reportToolProgress(this.identity, options);
  }

  /** Delivers the function's JSON output; the host checks it against the tool's output schema. */
  complete(output: unknown, options?: CallOptions): Promise<ToolExecutionReceipt> {
    return this.calls.completeTool({ ...this.identity, output }, options);
  }

  /** Reports that the function failed; the run then fails with APPLICATION_TOOL_FAILED. */
  fail(options?: CallOptions): Promise<ToolExecutionReceipt> {
    return this.calls.completeTool({ ...this.identity, error: 'APPLICATION_TOOL_FAILED' }, options);
  }
}

export interface ToolContext {
  execution: ToolExecution;
  /** Aborted when the stream ends or the caller's signal aborts. */
  signal: AbortSignal;
  /** Reports real progress to the host (resets the run's idle timer). */
  progress(): Promise<ToolExecutionReceipt>;
}

/** One application function: the call's arguments and its context in, JSON output out. A throw reports a failure. */
export type ToolFunction = (args: Record<string, unknown>, context: ToolContext) => unknown;

/** Application functions by tool name, for `streamWithTools`. */
export type ToolFunctions = Record<string, ToolFunction>;

/** @deprecated Renamed to ToolFunctions, the name every client uses (removed in 0.2). */
export type ApplicationToolFunctions = ToolFunctions;

/**
 * Passes every event of `events` through and, after yielding a `tool.execution.requested`
 * whose tool is registered in `functions`, runs that function and delivers its output (or
 * its failure). Executions of unregistered tools are left to the caller.
 */
export async function* runApplicationTools(
  calls: InteractiveCalls,
  request: RunRequest,
  functions: ToolFunctions,
  open: (signal: AbortSignal) => AsyncIterable<RunEvent>,
  options: CallOptions = {},
): AsyncGenerator<RunEvent, void, undefined> {
  const declared = new Set(request.applicationTools?.map((tool) => tool.name));
  const undeclared = Object.keys(functions).filter((name) => !declared.has(name));
  if (undeclared.length > 0) {
    throw new DriverError('INVALID_ARGUMENT', `Functions were registered for tools the request does not declare in applicationTools: ${undeclared.join(', ')}.`);
  }
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  try {
    for await (const event of open(signal)) {
      yield event;
      if (event.type !== 'tool.execution.requested') continue;
      const name = event.execution.call.name;
      const run = Object.hasOwn(functions, name) ? functions[name] : undefined;
      if (run) await execute(new PendingExecution(calls, event), run, signal);
    }
  } finally {
    stop.abort();
  }
}

async function execute(pending: PendingExecution, run: ToolFunction, signal: AbortSignal): Promise<void> {
  const context: ToolContext = { execution: pending.execution, signal, progress: () => pending.progress({ signal }) };
  let output: unknown;
  try {
    // A copy, so the function cannot change the arguments the stream reported.
    output = await run(structuredClone(pending.call.arguments), context);
  } catch {
    await pending.fail({ signal });
    return;
  }
  await pending.complete(output === undefined ? null : output, { signal });
}
