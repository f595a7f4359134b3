/**
 * `GET /v1/runs/{id}/stream`: a run's committed events as SSE with `id:` = sequence, resumed
 * after `Last-Event-ID` on any replica, until the terminal event. The follower wakes on the
 * store's announcement that the run's events grew (an attached run's record or journal, a job's
 * log), and ends after a quiet re-read if the run finished without a terminal event.
 */
import type { RunEvent } from '../../protocol/schemas.js';
import { followLog } from '../../http/follow.js';
import type { RunRecordRow, StateStore } from '../../store/store.js';
import { MAX_PAGE_BYTES, MAX_PAGE_EVENTS } from './service.js';

type Followed = Pick<StateStore, 'runs'> & { jobs: Pick<StateStore['jobs'], 'onChange'> };

const ACTIVE: ReadonlySet<string> = new Set(['queued', 'running', 'waiting']);

/** Committed events after `after`, as they are committed (on any replica), until the terminal one or `signal`. */
export function follow(store: Followed, row: Pick<RunRecordRow, 'id' | 'runId'>, after: number, signal: AbortSignal, fallbackMs?: number): AsyncGenerator<RunEvent> {
  const log = {
    read: (cursor: number) => store.runs.events(row, cursor, MAX_PAGE_EVENTS, MAX_PAGE_BYTES),
    watch: (grown: () => void) => {
      const stops = [
        store.runs.onChange((id) => id === row.id && grown()),
        store.jobs.onChange((change) => change.kind === 'events' && change.id === row.id && grown()),
      ];
      return () => stops.forEach((stop) => stop());
    },
    // A quiet record may have ended without a terminal event (an idempotent run's journal cut off by its replica's death).
    ended: async (cursor: number) => {
      const current = await store.runs.read(row.runId);
      return !current || (!ACTIVE.has(current.state) && current.cursor <= cursor);
    },
  };
  return followLog(log, after, signal, fallbackMs);
}
