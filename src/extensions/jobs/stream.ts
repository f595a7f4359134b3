/**
 * The live job stream (`GET /v1/jobs/{id}/stream`, feature `job-event-stream`; the operator's
 * `GET /v1/operator/jobs/{id}/stream` too): a job's committed events as SSE with `id:` = cursor,
 * resumed after `Last-Event-ID` on any replica, until the terminal event.
 */
import { DriverError } from '../../protocol/errors.js';
import { MAX_CURSOR } from '../../protocol/endpoints.js';
import type { RunEvent } from '../../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { MISSED_SIGNAL_POLL_MS } from '../../store/missed-signals.js';
import type { JobStore } from '../../store/store.js';
import { MAX_PAGE_BYTES, MAX_PAGE_EVENTS } from './service.js';


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

/**
 * Committed events after `after`, as they are committed (on any replica), until the terminal
 * one. A follower with nothing new to read waits for the store's announcement that the job's
 * log grew; as an announcement can be lost (store/missed-signals.ts), it re-reads at the latest
 * after `fallbackMs` anyway.
 */
export async function* follow(jobs: Pick<JobStore, 'events' | 'onChange'>, id: string, after: number, signal: AbortSignal, fallbackMs = MISSED_SIGNAL_POLL_MS): AsyncGenerator<RunEvent> {
  let cursor = after;
  let grew = false;
  let wake: (() => void) | undefined;
  // Listening starts before the first read, and `grew` is cleared before each read: an
  // announcement that arrives while a read is on its way is not missed.
  const stop = jobs.onChange((change) => {
    if (change.kind !== 'events' || change.id !== id) return;
    grew = true;
    wake?.();
  });
  try {
    while (!signal.aborted) {
      grew = false;
      const page = await jobs.events(id, cursor, MAX_PAGE_EVENTS, MAX_PAGE_BYTES);
      for (const event of page) {
        yield event;
        cursor = event.sequence;
        if (TERMINAL_EVENT_TYPES.has(event.type)) return;
      }
      if (page.length > 0 || grew) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, fallbackMs);
        signal.addEventListener('abort', done, { once: true });
        wake = done;
      });
    }
  } finally {
    stop();
  }
}

/** Follows until the client goes away. */
export function followUntilClosed(jobs: Pick<JobStore, 'events' | 'onChange'>, id: string, after: number, response: { on(event: 'close', listener: () => void): unknown }): AsyncGenerator<RunEvent> {
  const stopped = new AbortController();
  response.on('close', () => stopped.abort());
  return follow(jobs, id, after, stopped.signal);
}
