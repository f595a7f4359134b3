/**
 * Durable jobs: submit, read, list, cancel, committed event pages, and the live job stream
 * (`GET /v1/jobs/{id}/stream`, feature `job-event-stream`): the job's committed events as SSE
 * with `id:` = cursor, resumed after `Last-Event-ID` on any replica, until the terminal event.
 * None of these takes a run slot; the job's own worker does.
 */
import type { FastifyPluginAsync } from 'fastify';
import { DriverError } from '../../protocol/errors.js';
import type { JobEventsRequest, JobIdentity, JobListRequest, JobSubmit, RunEvent } from '../../protocol/schemas.js';
import { MAX_CURSOR } from '../../protocol/endpoints.js';
import { MAX_PAGE_BYTES, MAX_PAGE_EVENTS, type JobService } from '../../extensions/jobs.js';
import type { HostContext } from '../context.js';
import { writeEventStream } from '../sse.js';
import { routeOf } from './table.js';

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);
/** How often a follower looks for newly committed events (they may come from another replica). */
export const FOLLOW_POLL_MS = 100;

export const jobRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const jobs = context.jobs;
  if (!jobs) return;
  app.route<{ Body: JobSubmit }>({ ...routeOf('submitJob'), handler: async (request) => jobs.submit(request.body, request.principal) });
  app.route<{ Body: JobIdentity }>({ ...routeOf('readJob'), handler: async (request) => jobs.read(request.body.id, request.principal) });
  app.route<{ Body: JobListRequest }>({ ...routeOf('listJobs'), handler: async (request) => jobs.list(request.body, request.principal) });
  app.route<{ Body: JobIdentity }>({ ...routeOf('cancelJob'), handler: async (request) => jobs.cancel(request.body.id, request.principal) });
  app.route<{ Body: JobEventsRequest }>({ ...routeOf('jobEvents'), handler: async (request) => jobs.events(request.body, request.principal) });
  app.route<{ Params: { id: string } }>({
    ...routeOf('streamJob'),
    handler: async (request, reply) => {
      const { id } = request.params;
      if (!JOB_ID.test(id)) throw new DriverError('INVALID_JOB', 'The job id must be a lowercase UUID.');
      const requested = lastEventId(request.headers['last-event-id']);
      const { info } = await jobs.load(id, request.principal, 'read');
      const after = checkCursor(requested, info.cursor);
      const stopped = new AbortController();
      reply.raw.on('close', () => stopped.abort());
      return writeEventStream(reply, follow(jobs, id, after, stopped.signal), {
        heartbeatMs: context.heartbeatMs,
        writeStallMs: context.writeStallMs,
        headersFirst: true,
        ...(context.closing ? { headers: { connection: 'close' } } : {}),
      });
    },
  });
};

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
export async function* follow(jobs: Pick<JobService, 'committed'>, id: string, after: number, signal: AbortSignal): AsyncGenerator<RunEvent> {
  let cursor = after;
  while (!signal.aborted) {
    const page = await jobs.committed(id, cursor, MAX_PAGE_EVENTS, MAX_PAGE_BYTES);
    for (const event of page) {
      yield event;
      cursor = event.sequence;
      if (TERMINAL.has(event.type)) return;
    }
    if (page.length === 0) await sleep(FOLLOW_POLL_MS, signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
