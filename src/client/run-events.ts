/**
 * The consumer rules of one run's event stream: `run.started` first and once, sequence +1,
 * one runId, known payloads validated before delivery, unfamiliar types skipped only when
 * `optional` is the boolean `true`, negotiated events only when negotiated, and the first
 * valid terminal event ends the stream.
 */
import { DriverError } from '../protocol/errors.js';
import type { JobInfo, RunEvent, RunEventOf, RunRequest } from '../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../protocol/terminal-events.js';
import { eventValidator, validatorFor } from '../protocol/validate.js';
import {
  checkApprovalRequest,
  checkApprovalResolution,
  checkJobEvent,
  checkRunResult,
  checkRunStarted,
  checkToolExecution,
  type ExecutionLedger,
} from './checks.js';

const validEnvelope = validatorFor<{ type: string; runId: string; sequence: number; optional?: boolean }>('EventEnvelope');

const NEGOTIATED: Record<string, (request: RunRequest) => boolean> = {
  'approval.requested': (request) => request.approvals !== undefined,
  'approval.resolved': (request) => request.approvals !== undefined,
  'tool.execution.requested': (request) => (request.applicationTools?.length ?? 0) > 0,
};

function invalid(message: string): DriverError {
  return new DriverError('INVALID_STREAM', message);
}

export class RunEventChecker {
  private runId: string | undefined;
  private lastSequence = 0;
  private terminal = false;
  private readonly approvals = new Map<string, string>();
  private readonly executions: ExecutionLedger = { executionIds: new Set(), callIds: new Set() };

  constructor(private readonly request: RunRequest) {}

  get finished(): boolean {
    return this.terminal;
  }

  /** Validates one frame's data; returns the event to deliver, or undefined for a skipped optional event. */
  accept(data: string): RunEvent | undefined {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      throw invalid('An event frame is not valid JSON.');
    }
    if (!validEnvelope(value)) throw invalid(`An event envelope is invalid: ${validEnvelope.explain(value)}.`);
    if (value.sequence !== this.lastSequence + 1) throw invalid(`Event sequence ${value.sequence} does not follow ${this.lastSequence}.`);
    if (this.runId === undefined && value.type !== 'run.started') throw invalid('The stream did not begin with run.started.');
    if (this.runId !== undefined && value.type === 'run.started') throw invalid('The stream repeated run.started.');
    if (this.runId !== undefined && value.runId !== this.runId) throw invalid('An event belongs to another run.');
    this.runId = value.runId;
    this.lastSequence = value.sequence;

    const validate = eventValidator(value.type);
    if (!validate) {
      if (value.optional === true) return undefined;
      throw new DriverError('UNSUPPORTED_EVENT', `The host sent event type ${value.type}, which this client does not understand.`);
    }
    const negotiated = NEGOTIATED[value.type];
    if (negotiated && !negotiated(this.request)) {
      throw new DriverError('UNSUPPORTED_EVENT', `The host sent ${value.type}, which this run did not negotiate.`);
    }
    const type = value.type;
    if (!validate(value)) throw invalid(`A ${type} event is invalid: ${validate.explain(value)}.`);
    const event = value as RunEvent;
    const problem = this.crossCheck(event);
    if (problem) throw invalid(`A ${event.type} event is inconsistent: ${problem}.`);
    if (TERMINAL_EVENT_TYPES.has(event.type)) this.terminal = true;
    return event;
  }

  private crossCheck(event: RunEvent): string | undefined {
    const runId = this.runId!;
    switch (event.type) {
      case 'run.started':
        return checkRunStarted(event, this.request);
      case 'run.completed':
        return checkRunResult(event.result, this.request, runId);
      case 'approval.requested': {
        const problem = checkApprovalRequest(event.approval, this.request, runId);
        if (!problem) this.approvals.set(event.approval.approvalId, event.approval.call.id);
        return problem;
      }
      case 'approval.resolved':
        return checkApprovalResolution(event.resolution, this.approvals, runId);
      case 'tool.execution.requested':
        return checkToolExecution((event as RunEventOf<'tool.execution.requested'>).execution, this.request, runId, this.executions);
      default:
        return undefined;
    }
  }
}

/**
 * The consumer rules of a job's live event stream, across reconnections: every event is
 * a known type (an unknown one is refused even when `optional`, since a job's log is
 * replayed as stored), belongs to the job's run and follows the last delivered sequence
 * exactly (no duplicate, no gap), and a terminal event ends the job.
 */
export class JobStreamChecker {
  private terminal = false;

  constructor(
    private readonly job: JobInfo,
    private last: number,
  ) {}

  /** The sequence of the last accepted event (the cursor to resume from). */
  get cursor(): number {
    return this.last;
  }

  get finished(): boolean {
    return this.terminal;
  }

  accept(data: string): RunEvent {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      throw invalid('A job event frame is not valid JSON.');
    }
    if (!validEnvelope(value)) throw invalid(`A job event envelope is invalid: ${validEnvelope.explain(value)}.`);
    const type = value.type;
    const validate = eventValidator(type);
    if (!validate) throw new DriverError('UNSUPPORTED_EVENT', `The job stream sent event type ${type}, which this client does not understand.`);
    if (!validate(value)) throw invalid(`A ${type} event is invalid: ${validate.explain(value)}.`);
    const event = value as RunEvent;
    const problem = checkJobEvent(event, this.job, this.last + 1);
    if (problem) throw invalid(`The job stream is inconsistent: ${problem}.`);
    this.last = event.sequence;
    if (TERMINAL_EVENT_TYPES.has(event.type)) this.terminal = true;
    return event;
  }
}
