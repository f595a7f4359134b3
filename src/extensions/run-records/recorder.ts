/**
 * Records an attached run's events as they go out (an observer: it never changes them). Each
 * event is queued for the store's next commit, shared with every run's events queued meanwhile
 * (a few milliseconds: `RECORD_FLUSH_MS`); only the terminal event waits for its commit (bounded),
 * so that the outcome can be read back as soon as the caller has it. A run whose events stop
 * without a terminal one (its client went away) is closed `run.cancelled`.
 * Background runs are recorded by their job's log, idempotent ones by their journal.
 */
import { DriverError, toDriverError } from '../../protocol/errors.js';
import type { RunEvent } from '../../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { isoTimestamp, type Clock } from '../../shared/clock.js';
import type { RunRecordStore } from '../../store/store.js';
import type { ObservedRun, RunTap } from '../../http/observers.js';

export interface Recording {
  store: Pick<RunRecordStore, 'record'>;
  retentionMs: number;
  clock: Clock;
  /** Told once per run when its record could not be written. */
  onError(error: unknown): void;
  /** How long a run waits for its terminal event's commit before it goes on regardless (default 2 s). */
  commitWaitMs?: number;
}

const COMMIT_WAIT_MS = 2000;

/** Waits for `work`, but never longer than `ms`: a store that hangs does not hold the run. */
async function bounded(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** The tap recording one attached run (undefined for a job's run or an idempotent one). */
export function recordAttached(run: ObservedRun, recording: Recording): RunTap | undefined {
  if (run.jobId !== undefined || run.request.idempotencyKey !== undefined) return undefined;
  const { provider, model } = run.request;
  let failed = false;
  const failure = (error?: unknown) => {
    if (error === undefined || failed) return;
    failed = true;
    recording.onError(error);
  };
  const record = (event: RunEvent, done = failure) => recording.store.record({ runId: event.runId, subject: run.subject, provider, model, event, retentionMs: recording.retentionMs }, done);
  let last: RunEvent | undefined;
  return {
    event: (event) => {
      last = event;
      if (!TERMINAL_EVENT_TYPES.has(event.type)) return record(event);
      // The outcome is readable on any replica once the caller has it.
      return bounded(new Promise<void>((resolve) => record(event, (error) => resolve(failure(error)))), recording.commitWaitMs ?? COMMIT_WAIT_MS);
    },
    // No terminal event came through: the client went away, unless the events failed.
    end: (thrown) => {
      if (!last || TERMINAL_EVENT_TYPES.has(last.type)) return;
      const ending =
        thrown === undefined
          ? { type: 'run.cancelled', error: new DriverError('CANCELLED', 'The client went away before the run ended.').toJSON() }
          : { type: 'run.failed', error: toDriverError(thrown.error).toJSON() };
      record({ ...ending, runId: last.runId, sequence: last.sequence + 1, timestamp: isoTimestamp(recording.clock) } as RunEvent);
    },
  };
}
