/**
 * `GET /v1/runs/{id}/stream`: a run's committed events as SSE with `id:` = sequence,
 * resumed after `Last-Event-ID` on any replica, until the terminal event. A follower waits for
 * the store's announcement that the run's events grew (an attached run's record or journal, a
 * job's log), and, as an announcement can be lost (store/missed-signals.ts), re-reads at the
 * latest after `fallbackMs` anyway — and ends then if the run finished without a terminal event.
 */
import { DriverError } from '../../protocol/errors.js';
import { MAX_CURSOR } from '../../protocol/endpoints.js';
import type { RunEvent } from '../../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { MISSED_SIGNAL_POLL_MS } from '../../store/missed-signals.js';
import type { RunRecordRow, StateStore } from '../../store/store.js';
import { MAX_PAGE_BYTES, MAX_PAGE_EVENTS } from './service.js';

/**
 * `Last-Event-ID`: the cursor the client already has (absent: from the start). Only a safe
 * integer is a cursor: a larger one would round to a neighbour.
 */
export function lastEventId(header: string | string[] | undefined): number {
  if (header === undefined) return 0;
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  const after = /^(0|[1-9][0-9]{0,15})$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(after)) {
    throw new DriverError('INVALID_RUN_CURSOR', `Last-Event-ID must be the sequence of the last event received: a whole number from 0 to ${MAX_CURSOR}.`);
  }
  return after;
}

type Followed = Pick<StateStore, 'runs'> & { jobs: Pick<StateStore['jobs'], 'onChange'> };

/** Committed events after `after`, as they are committed (on any replica), until the terminal one or `signal`. */
export async function* follow(store: Followed, row: Pick<RunRecordRow, 'id' | 'runId'>, after: number, signal: AbortSignal, fallbackMs = MISSED_SIGNAL_POLL_MS): AsyncGenerator<RunEvent> {
  let cursor = after;
  let grew = false;
  let wake: (() => void) | undefined;
  const grown = () => {
    grew = true;
    wake?.();
  };
  // Listening starts before the first read, and `grew` is cleared before each read: an
  // announcement that arrives while a read is on its way is not missed.
  const stops = [
    store.runs.onChange((id) => id === row.id && grown()),
    store.jobs.onChange((change) => change.kind === 'events' && change.id === row.id && grown()),
  ];
  try {
    while (!signal.aborted) {
      grew = false;
      const page = await store.runs.events(row, cursor, MAX_PAGE_EVENTS, MAX_PAGE_BYTES);
      for (const event of page) {
        yield event;
        cursor = event.sequence;
        if (TERMINAL_EVENT_TYPES.has(event.type)) return;
      }
      if (page.length > 0 || grew) continue;
      const woken = await new Promise<boolean>((resolve) => {
        const done = (byChange: boolean) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', aborted);
          wake = undefined;
          resolve(byChange);
        };
        const aborted = () => done(false);
        const timer = setTimeout(() => done(false), fallbackMs);
        signal.addEventListener('abort', aborted, { once: true });
        wake = () => done(true);
      });
      // A quiet record may have ended without a terminal event (an idempotent run's journal cut off by its replica's death).
      if (!woken && !signal.aborted && (await ended(store, row.runId, cursor))) return;
    }
  } finally {
    for (const stop of stops) stop();
  }
}

/** The run is finished and every event it has is delivered: nothing more will come. */
async function ended(store: Followed, runId: string, cursor: number): Promise<boolean> {
  const row = await store.runs.read(runId);
  return !row || (!ACTIVE.has(row.state) && row.cursor <= cursor);
}

const ACTIVE: ReadonlySet<string> = new Set(['queued', 'running', 'waiting']);

/** Follows until the client goes away. */
export function followUntilClosed(store: Followed, row: Pick<RunRecordRow, 'id' | 'runId'>, after: number, response: { on(event: 'close', listener: () => void): unknown }): AsyncGenerator<RunEvent> {
  const stopped = new AbortController();
  response.on('close', () => stopped.abort());
  return follow(store, row, after, stopped.signal);
}
