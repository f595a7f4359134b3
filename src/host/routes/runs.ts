/**
 * `POST /v1/runs`: a JSON result, or SSE when `Accept` includes `text/event-stream`. With an
 * `idempotencyKey` the run is recorded, and a repeat of the same request replays the record.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { DriverError } from '../../protocol/errors.js';
import type { RunEvent, RunRequest } from '../../protocol/schemas.js';
import type { AgenticDriver } from '../../runtime/driver.js';
import type { RunJournal } from '../../runtime/services.js';
import { authorizeRun } from '../../http/access.js';
import type { Admission } from '../../http/admission.js';
import { routeOf } from '../../http/endpoints.js';
import type { HostServices } from '../../http/extension.js';
import type { Observers } from '../../http/observers.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { sendError } from '../../http/send-error.js';
import type { EventStreams } from '../../http/sse.js';

export interface RunPath {
  driver: AgenticDriver;
  /** Idempotent runs, sessions and evidence checks, when their extensions are on. */
  services: Readonly<Partial<Pick<HostServices, 'operations' | 'sessions' | 'retrieval'>>>;
  admission: Admission;
  observers: Observers;
  streams: EventStreams;
}

export function runRoutes(path: RunPath): FastifyPluginAsync {
  const { driver, services, admission, observers } = path;
  return async (app) => {
    app.route({
      ...routeOf('run'),
      handler: async (request, reply) => {
        const principal = request.principal;
        const streaming = (request.headers.accept ?? '').toLowerCase().includes('text/event-stream');
        const run = driver.parse(request.body);
        authorizeRun(run, principal, streaming);
        const operations = services.operations;
        const options = {
          subject: principal.subject,
          tokenId: principal.tokenId,
          acceptOptionalEvents: streaming && request.acceptOptionalEvents,
          applicationToolApprovals: principal.grants.get('applicationToolApprovals') ?? new Set<string>(),
          idempotency: operations !== undefined,
        };
        // A session turn is checked without its session now; its history is filled in once the turn is claimed.
        const sessions = run.session ? services.sessions : undefined;
        let prepared = driver.prepareParsed(sessions ? withoutSession(run) : run, options);
        const key = run.idempotencyKey;
        const fingerprint = key !== undefined && operations ? operations.fingerprint(run) : undefined;
        // A recorded key replays without an admission slot (docs/architecture.md, decisions: Idempotent replays).
        if (key !== undefined && operations && fingerprint) {
          const replay = await operations.lookup(principal.subject, key, fingerprint);
          if (replay) {
            await replayableEvidence(path, run, replay, principal.subject);
            return respond(path, reply, replayed(replay), streaming);
          }
        }
        // Refused here (429), the key is not consumed: it is claimed only once the run is admitted.
        const slot = admission.admit(principal.subject, reply);
        try {
          let journal: RunJournal | undefined;
          let claimDone: (() => void) | undefined;
          if (key !== undefined && operations && fingerprint) {
            const claim = await operations.claim(principal.subject, key, run, fingerprint);
            if ('replay' in claim) {
              await replayableEvidence(path, run, claim.replay, principal.subject);
              return await respond(path, reply, replayed(claim.replay), streaming);
            }
            journal = claim.journal;
            claimDone = claim.done;
          }
          try {
            const turn = sessions ? await sessions.begin(run, principal, slot.controller) : undefined;
            if (turn) {
              try {
                prepared = driver.prepareParsed(turn.request, options);
              } catch (error) {
                await turn.abandon();
                throw error;
              }
            }
            const executed = driver.execute(prepared, slot.controller.signal, { journal, continuation: turn?.continuation });
            const events = releasedAtEnd(turn ? turn.run(executed) : executed, slot.release);
            const observed = observers.run(events, { request: turn ? turn.request : run, vendor: prepared.adapter.info.vendor, subject: principal.subject });
            return await respond(path, reply, observed, streaming);
          } finally {
            claimDone?.();
          }
        } finally {
          slot.release();
        }
      },
    });
  };
}

/** The run's events as SSE, or its result (or error) as JSON. */
async function respond(path: RunPath, reply: FastifyReply, events: AsyncGenerator<RunEvent>, streaming: boolean): Promise<unknown> {
  if (streaming) {
    reply.raw.once('close', path.observers.streamOpened());
    return path.streams.write(reply, events);
  }
  for await (const event of events) {
    if (event.type === 'run.completed') return reply.type('application/json; charset=utf-8').send(event.result);
    if (event.type === 'run.failed' || event.type === 'run.cancelled') return sendError(reply, DriverError.from(event.error));
  }
  throw new DriverError('INTERNAL_ERROR', 'The run ended without a terminal event.');
}

function withoutSession(run: RunRequest): RunRequest {
  const { session: _session, ...rest } = run;
  return rest;
}

/**
 * A recorded run that searched a corpus replays only when it completed and its evidence is still
 * visible at the same revisions (re-authorized, no new search and no model call).
 */
async function replayableEvidence(path: RunPath, run: RunRequest, events: RunEvent[], subject: string): Promise<void> {
  if (!run.retrieval) return;
  const terminal = events.at(-1);
  const evidence = terminal?.type === 'run.completed' ? terminal.result.retrieval : undefined;
  if (!evidence || !path.services.retrieval) {
    throw new DriverError('CONTEXT_REPLAY_UNAVAILABLE', 'This run searched a corpus and did not complete, so its outcome cannot be replayed.', { outcome: 'uncertain' });
  }
  await path.services.retrieval.revalidate(evidence, { subject, signal: new AbortController().signal });
}

async function* replayed(events: RunEvent[]): AsyncGenerator<RunEvent> {
  yield* events;
}

/** Frees the run's admission slot at its terminal event: the metering written after it must not hold the slot once the caller has the outcome. */
async function* releasedAtEnd(events: AsyncGenerator<RunEvent>, release: () => void): AsyncGenerator<RunEvent> {
  for await (const event of events) {
    if (TERMINAL_EVENT_TYPES.has(event.type)) release();
    yield event;
  }
}
