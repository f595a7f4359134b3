/**
 * The consumer rules of one run's event stream: `run.started` first and once, sequence +1,
 * one runId, known payloads validated before delivery, unfamiliar types skipped only when
 * `optional` is the boolean `true`, negotiated events only when negotiated, and the first
 * valid terminal event ends the stream.
 */
import { DriverError } from '../protocol/errors.js';
import { describeViolation, evaluateRules } from '../protocol/rule-evaluator.js';
import { STREAM_RULES } from '../protocol/rules.js';
import type { JobInfo, RunEvent, RunInfo, RunRequest } from '../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../protocol/terminal-events.js';
import { eventValidator, validatorFor } from '../protocol/validate.js';

const validEnvelope = validatorFor<{ type: string; runId: string; sequence: number; optional?: boolean }>('EventEnvelope');

/**
 * The envelope rules (order, one run, negotiation) stay code in every client rather than rows of
 * src/protocol/rules.ts: they decide, before the payload is even validated, whether an event is
 * skipped, UNSUPPORTED_EVENT or INVALID_STREAM, and they are the stream reader's own state.
 */
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
  /** What the rules of later events need to know of earlier ones (src/protocol/rules.ts, `runEvent`). */
  private readonly approvals: { approvalId: string; callId: string }[] = [];
  private readonly executions: { executionId: string; callId: string }[] = [];

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
    const broken = evaluateRules(STREAM_RULES.run, { event, request: this.request, runId: this.runId, approvals: this.approvals, executions: this.executions });
    if (broken) throw invalid(`A ${event.type} event is inconsistent: ${describeViolation(broken)}.`);
    if (event.type === 'approval.requested') this.approvals.push({ approvalId: event.approval.approvalId, callId: event.approval.call.id });
    if (event.type === 'tool.execution.requested') this.executions.push({ executionId: event.execution.executionId, callId: event.execution.call.id });
    if (TERMINAL_EVENT_TYPES.has(event.type)) this.terminal = true;
    return event;
  }
}

/** A stream of committed events read across reconnections: the cursor to resume from, and whether it ended. */
export interface LogStreamChecker {
  readonly cursor: number;
  readonly finished: boolean;
  accept(data: string): RunEvent;
}

/**
 * The consumer rules of a committed-event stream (a job's, or any run's followed), across
 * reconnections: every event is a known type (an unknown one is refused even when
 * `optional`, since the log is replayed as stored), passes the record's stream rules (its run,
 * the last delivered sequence + 1: no duplicate, no gap), and a terminal event ends it.
 */
class CommittedEventChecker implements LogStreamChecker {
  private terminal = false;

  constructor(
    private last: number,
    private readonly what: string,
    private readonly rules: string,
    private readonly record: Record<string, unknown>,
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
      throw invalid(`A ${this.what} event frame is not valid JSON.`);
    }
    if (!validEnvelope(value)) throw invalid(`A ${this.what} event envelope is invalid: ${validEnvelope.explain(value)}.`);
    const type = value.type;
    const validate = eventValidator(type);
    if (!validate) throw new DriverError('UNSUPPORTED_EVENT', `The ${this.what} stream sent event type ${type}, which this client does not understand.`);
    if (!validate(value)) throw invalid(`A ${type} event is invalid: ${validate.explain(value)}.`);
    const event = value as RunEvent;
    const broken = evaluateRules(this.rules, { event, ...this.record, sequence: this.last + 1 });
    if (broken) throw invalid(`The ${this.what} stream is inconsistent: ${describeViolation(broken)}.`);
    this.last = event.sequence;
    if (TERMINAL_EVENT_TYPES.has(event.type)) this.terminal = true;
    return event;
  }
}

/** A job's live event stream (tailJob). */
export class JobStreamChecker extends CommittedEventChecker {
  constructor(job: JobInfo, after: number) {
    super(after, 'job', STREAM_RULES.job, { job });
  }
}

/** The events that ask for, or answer, a person's decision or an application's tool result. */
const INTERACTIVE_TYPES: ReadonlySet<string> = new Set(Object.keys(NEGOTIATED));

/**
 * A run followed (followRun): its record's events, attached or background. A background run
 * may ask for approvals and application-tool results only on a host that negotiated it
 * (feature `interactive-jobs`), as a stream's run may only when its request did: anything else
 * is UNSUPPORTED_EVENT, so no handle is ever made for a question nobody may answer.
 */
export class RunRecordChecker extends CommittedEventChecker {
  private readonly refusesInteractive: boolean;

  constructor(run: RunInfo, after: number, interactiveJobs: boolean) {
    super(after, 'run', STREAM_RULES.record, { run });
    this.refusesInteractive = run.mode === 'background' && !interactiveJobs;
  }

  override accept(data: string): RunEvent {
    const event = super.accept(data);
    if (this.refusesInteractive && INTERACTIVE_TYPES.has(event.type)) {
      throw new DriverError('UNSUPPORTED_EVENT', `The host sent ${event.type} on a background run, but did not advertise interactive-jobs.`);
    }
    return event;
  }
}
