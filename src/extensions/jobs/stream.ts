/**
 * The live job stream (`GET /v1/jobs/{id}/stream`, feature `job-event-stream`; the operator's
 * `GET /v1/operator/jobs/{id}/stream` too): a job's committed events as SSE with `id:` = cursor,
 * resumed after `Last-Event-ID` on any replica, until the terminal event.
 */
import { DriverError } from '../../protocol/errors.js';
import type { RunEvent } from '../../protocol/schemas.js';
import { followLog } from '../../http/follow.js';
import type { JobStore } from '../../store/store.js';
import { MAX_PAGE_BYTES, MAX_PAGE_EVENTS } from './service.js';

/** The cursor must not be past the job's last committed event. */
export function checkCursor(after: number, cursor: number): number {
  if (after > cursor) throw new DriverError('INVALID_JOB_CURSOR', `Last-Event-ID ${after} is past the job's last event (${cursor}).`);
  return after;
}

/** The job's committed events after `after`, as they are committed (on any replica), until the terminal one or `signal`. */
export function follow(jobs: Pick<JobStore, 'events' | 'onChange'>, id: string, after: number, signal: AbortSignal, fallbackMs?: number): AsyncGenerator<RunEvent> {
  const log = {
    read: (cursor: number) => jobs.events(id, cursor, MAX_PAGE_EVENTS, MAX_PAGE_BYTES),
    watch: (grown: () => void) => jobs.onChange((change) => change.kind === 'events' && change.id === id && grown()),
  };
  return followLog(log, after, signal, fallbackMs);
}
