/**
 * What the host tells the extensions that watch it (metrics, tracing, the operator's run
 * monitor): every run's events on their way out, every usage record, refusals at admission,
 * event streams opening, usage-sink failures. An observer never changes what it watches.
 */
import type { RunEvent, RunRequest } from '../protocol/schemas.js';
import type { UsageRecord } from '../runtime/usage-record.js';

/** The run being watched. */
export interface ObservedRun {
  request: RunRequest;
  vendor: string | undefined;
  subject: string;
  /** Set for a durable job's run. */
  jobId?: string;
}

export interface HostObserver {
  /** A run's events on their way to the caller or to its job's log; passes them through unchanged. */
  run?(events: AsyncGenerator<RunEvent>, run: ObservedRun): AsyncGenerator<RunEvent>;
  /** Every usage record, runs and embedding calls alike, as it is recorded. */
  usage?(record: UsageRecord): void;
  /** Every usage record once the store has it (a reader of the store now finds it). */
  stored?(record: UsageRecord): void;
  /** A call refused at admission (429 BUSY). */
  admissionRejected?(): void;
  /** A run refused by the host's limits, before a step (RATE_LIMITED, BUDGET_EXCEEDED). */
  limitRefused?(code: string): void;
  /** A run's event stream opened; the function returned is called when it closes. */
  streamOpened?(): () => void;
  /** A usage sink failed (`USAGESTAT_ERROR` / `USAGESTAT_SCHEMA`). */
  usageSinkFailed?(failure: { sink: string; code: string }): void;
}

/** Every observer, told in the order they were added. */
export class Observers implements Required<HostObserver> {
  private readonly observers: HostObserver[] = [];

  add(observer: HostObserver): void {
    this.observers.push(observer);
  }

  run(events: AsyncGenerator<RunEvent>, run: ObservedRun): AsyncGenerator<RunEvent> {
    return this.observers.reduce((watched, observer) => (observer.run ? observer.run(watched, run) : watched), events);
  }

  usage(record: UsageRecord): void {
    for (const observer of this.observers) observer.usage?.(record);
  }

  stored(record: UsageRecord): void {
    for (const observer of this.observers) observer.stored?.(record);
  }

  admissionRejected(): void {
    for (const observer of this.observers) observer.admissionRejected?.();
  }

  limitRefused(code: string): void {
    for (const observer of this.observers) observer.limitRefused?.(code);
  }

  streamOpened(): () => void {
    const closes = this.observers.flatMap((observer) => (observer.streamOpened ? [observer.streamOpened()] : []));
    return () => {
      for (const close of closes) close();
    };
  }

  usageSinkFailed(failure: { sink: string; code: string }): void {
    for (const observer of this.observers) observer.usageSinkFailed?.(failure);
  }
}
