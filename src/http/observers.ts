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

/**
 * What an observer does with one run's events: a call per event, no generator of its own (every
 * tap of a run shares one pass over its events).
 */
export interface RunTap {
  /** An event on its way out. A promise holds it, and the run's next events, until it settles. */
  event(event: RunEvent): void | Promise<void>;
  /** The events ended, after the terminal one or before it (`failure`: they threw). */
  end?(failure?: { error: unknown }): void;
}

export interface HostObserver {
  /** Taps a run's events on their way to the caller or to its job's log (undefined: not this run). */
  tap?(run: ObservedRun): RunTap | undefined;
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
export class Observers implements Required<Omit<HostObserver, 'tap'>> {
  private readonly observers: HostObserver[] = [];

  add(observer: HostObserver): void {
    this.observers.push(observer);
  }

  /** `events` watched by every observer; `first` taps them before the observers do. */
  run(events: AsyncGenerator<RunEvent>, run: ObservedRun, first?: RunTap): AsyncGenerator<RunEvent> {
    return first || this.observers.some((observer) => observer.tap) ? tap(events, run, this.observers, first) : events;
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

/** One pass over a run's events for every tap; the taps are made when the events start. */
async function* tap(events: AsyncGenerator<RunEvent>, run: ObservedRun, observers: readonly HostObserver[], first: RunTap | undefined): AsyncGenerator<RunEvent> {
  const taps: RunTap[] = first ? [first] : [];
  for (const observer of observers) {
    const made = observer.tap?.(run);
    if (made) taps.push(made);
  }
  let failure: { error: unknown } | undefined;
  try {
    for await (const event of events) {
      for (const each of taps) {
        const held = each.event(event);
        if (held) await held;
      }
      yield event;
    }
  } catch (error) {
    failure = { error };
    throw error;
  } finally {
    for (const each of taps) each.end?.(failure);
  }
}
