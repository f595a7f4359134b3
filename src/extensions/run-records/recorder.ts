/**
 * Records an attached run's events as they go out (an observer: it never changes them). Each
 * event is queued for the store's next commit, shared with every run's events queued meanwhile;
 * only the first and the terminal event wait for theirs (bounded), so that the run can be read
 * back as soon as its caller knows its id, and its outcome as soon as the caller has it. A run
 * whose events stop without a terminal one (its client went away) is closed `run.cancelled`.
 * Background runs are recorded by their job's log, idempotent ones by their journal.
 */
import { DriverError, toDriverError } from '../../protocol/errors.js';
import type { ErrorInfo, RunEvent } from '../../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { isoTimestamp, type Clock } from '../../shared/clock.js';
import type { RunRecordStore } from '../../store/store.js';
import type { ObservedRun } from '../../http/observers.js';

export interface Recording {
  store: Pick<RunRecordStore, 'record'>;
  retentionMs: number;
  clock: Clock;
  /** Told once per run when its record could not be written. */
  onError(error: unknown): void;
  /** How long a run waits for its first and terminal events' commit before it goes on regardless (default 2 s). */
  commitWaitMs?: number;
}

const COMMIT_WAIT_MS = 2000;

/** Waits for `work`, but never longer than `ms`: a store that hangs does not hold the run. */
async function bounded(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export async function* recordAttached(events: AsyncGenerator<RunEvent>, run: ObservedRun, recording: Recording): AsyncGenerator<RunEvent> {
  if (run.jobId !== undefined || run.request.idempotencyKey !== undefined) return yield* events;
  let failed = false;
  const record = (event: RunEvent): Promise<void> =>
    recording.store
      .record({ runId: event.runId, subject: run.subject, provider: run.request.provider, model: run.request.model, event, retentionMs: recording.retentionMs })
      .catch((error: unknown) => {
        if (failed) return;
        failed = true;
        recording.onError(error);
      });
  let last: RunEvent | undefined;
  // The run's end as the record tells it when no terminal event came through.
  let ending: { type: 'run.cancelled' | 'run.failed'; error: ErrorInfo } = {
    type: 'run.cancelled',
    error: new DriverError('CANCELLED', 'The client went away before the run ended.').toJSON(),
  };
  try {
    for await (const event of events) {
      last = event;
      const committed = record(event);
      // The run is readable from its start on any replica, and its outcome once its caller has it.
      if (event.sequence === 1 || TERMINAL_EVENT_TYPES.has(event.type)) await bounded(committed, recording.commitWaitMs ?? COMMIT_WAIT_MS);
      yield event;
    }
  } catch (error) {
    ending = { type: 'run.failed', error: toDriverError(error).toJSON() };
    throw error;
  } finally {
    if (last && !TERMINAL_EVENT_TYPES.has(last.type)) {
      void record({ ...ending, runId: last.runId, sequence: last.sequence + 1, timestamp: isoTimestamp(recording.clock) } as RunEvent);
    }
  }
}
