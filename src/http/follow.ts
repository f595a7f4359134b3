/**
 * Following a log of committed events — a job's log, a run's record — as it grows, on any
 * replica: the live streams' `Last-Event-ID`, and the loop that reads after a cursor, waits for
 * the store's announcement that the log grew, and, as an announcement can be lost
 * (store/missed-signals.ts), re-reads at the latest after `fallbackMs` anyway.
 */
import { DriverError, type ErrorCode } from '../protocol/errors.js';
import { MAX_CURSOR } from '../protocol/endpoints.js';
import type { RunEvent } from '../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../protocol/terminal-events.js';
import { MISSED_SIGNAL_POLL_MS } from '../store/missed-signals.js';

/**
 * `Last-Event-ID`: the cursor the client already has (absent: from the start), refused with
 * `code` when it is not one. Only a safe integer is a cursor: a larger one would round to a
 * neighbour (2^53 + 1 reads as 2^53).
 */
export function lastEventId(header: string | string[] | undefined, code: ErrorCode): number {
  if (header === undefined) return 0;
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  const after = /^(0|[1-9][0-9]{0,15})$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(after)) {
    throw new DriverError(code, `Last-Event-ID must be the sequence of the last event received: a whole number from 0 to ${MAX_CURSOR}.`);
  }
  return after;
}

/** A log of committed events, as a follower reads it. */
export interface CommittedLog {
  /** A page of the events after `cursor`. */
  read(cursor: number): Promise<RunEvent[]>;
  /** Calls `grown` whenever the log may have grown, until the function returned is called. */
  watch(grown: () => void): () => void;
  /** After a wait no announcement ended: whether nothing more will come (a log cut off without a terminal event). */
  ended?(cursor: number): Promise<boolean>;
}

/** The log's events after `after`, as they are committed, until the terminal one or `signal`. */
export async function* followLog(log: CommittedLog, after: number, signal: AbortSignal, fallbackMs = MISSED_SIGNAL_POLL_MS): AsyncGenerator<RunEvent> {
  let cursor = after;
  let grew = false;
  let wake: (() => void) | undefined;
  // Watching starts before the first read, and `grew` is cleared before each read: an
  // announcement that arrives while a read is on its way is not missed.
  const stop = log.watch(() => {
    grew = true;
    wake?.();
  });
  try {
    while (!signal.aborted) {
      grew = false;
      const page = await log.read(cursor);
      for (const event of page) {
        yield event;
        cursor = event.sequence;
        if (TERMINAL_EVENT_TYPES.has(event.type)) return;
      }
      if (page.length > 0 || grew) continue;
      const announced = await new Promise<boolean>((resolve) => {
        const done = (byAnnouncement: boolean) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', aborted);
          wake = undefined;
          resolve(byAnnouncement);
        };
        const aborted = () => done(false);
        const timer = setTimeout(() => done(false), fallbackMs);
        signal.addEventListener('abort', aborted, { once: true });
        wake = () => done(true);
      });
      if (!announced && !signal.aborted && log.ended && (await log.ended(cursor))) return;
    }
  } finally {
    stop();
  }
}

/** A signal aborted when the client's connection closes. */
export function untilClosed(response: { on(event: 'close', listener: () => void): unknown }): AbortSignal {
  const stopped = new AbortController();
  response.on('close', () => stopped.abort());
  return stopped.signal;
}
