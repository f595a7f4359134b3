/**
 * The live job stream (`GET /v1/jobs/{id}/stream`, feature `job-event-stream`; the operator's
 * `GET /v1/operator/jobs/{id}/stream` too): a job's committed events as SSE with `id:` = cursor,
 * resumed after `Last-Event-ID` on any replica, until the terminal event.
 */
import { DriverError } from '../../protocol/errors.js';
import { MAX_CURSOR } from '../../protocol/endpoints.js';
import type { RunEvent } from '../../protocol/schemas.js';
import { sleep } from '../../shared/abort.js';
import type { JobStore } from '../../store/store.js';
import { MAX_PAGE_BYTES, MAX_PAGE_EVENTS } from './service.js';

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);
/** How often a follower looks for newly committed events (they may come from another replica). */
export const FOLLOW_POLL_MS = 100;

/**
 * `Last-Event-ID`: the cursor the client already has (absent: from the start), checked before
 * the job is looked up. Only a safe integer is a cursor: a larger one would round to a
 * neighbour (2^53 + 1 reads as 2^53).
 */
export function lastEventId(header: string | string[] | undefined): number {
  if (header === undefined) return 0;
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  const after = /^(0|[1-9][0-9]{0,15})$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(after)) {
    throw new DriverError('INVALID_JOB_CURSOR', `Last-Event-ID must be the sequence of the last event received: a whole number from 0 to ${MAX_CURSOR}.`);
  }
  return after;
}

/** The cursor must not be past the job's last committed event. */
export function checkCursor(after: number, cursor: number): number {
  if (after > cursor) throw new DriverError('INVALID_JOB_CURSOR', `Last-Event-ID ${after} is past the job's last event (${cursor}).`);
  return after;
}

/** Committed events after `after`, as they are committed (on any replica), until the terminal one. */
export async function* follow(jobs: Pick<JobStore, 'events'>, id: string, after: number, signal: AbortSignal): AsyncGenerator<RunEvent> {
  let cursor = after;
  while (!signal.aborted) {
    const page = await jobs.events(id, cursor, MAX_PAGE_EVENTS, MAX_PAGE_BYTES);
    for (const event of page) {
      yield event;
      cursor = event.sequence;
      if (TERMINAL.has(event.type)) return;
    }
    if (page.length === 0) await sleep(FOLLOW_POLL_MS, signal).catch(() => undefined);
  }
}

/** Follows until the client goes away. */
export function followUntilClosed(jobs: Pick<JobStore, 'events'>, id: string, after: number, response: { on(event: 'close', listener: () => void): unknown }): AsyncGenerator<RunEvent> {
  const stopped = new AbortController();
  response.on('close', () => stopped.abort());
  return follow(jobs, id, after, stopped.signal);
}
