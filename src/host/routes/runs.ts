/**
 * `POST /v1/runs`: a JSON result, or SSE when `Accept` includes `text/event-stream`. With an
 * `idempotencyKey` the run is recorded, and a repeat of the same request replays the record.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { DriverError } from '../../protocol/errors.js';
import type { RunEvent, RunRequest } from '../../protocol/schemas.js';
import { requireNoStream } from '../../runtime/driver.js';
import type { RunJournal } from '../../runtime/services.js';
import type { Principal } from '../auth.js';
import type { HostContext } from '../context.js';
import { routeOf } from './table.js';
import { sendError } from '../send-error.js';
import { writeEventStream } from '../sse.js';
import { corpusNotGranted, providerNotGranted, toolNotGranted } from '../../shared/grants.js';

export const runRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  app.route({
    ...routeOf('run'),
    handler: async (request, reply) => {
      const principal = request.principal;
      const streaming = (request.headers.accept ?? '').toLowerCase().includes('text/event-stream');
      const run = context.driver.parse(request.body);
      authorizeRun(run, principal, streaming);
      const operations = context.operations;
      const options = {
        subject: principal.subject,
        tokenId: principal.tokenId,
        acceptOptionalEvents: streaming && request.acceptOptionalEvents,
        applicationToolApprovals: principal.applicationToolApprovals,
        idempotency: operations !== undefined,
      };
      // A session turn is checked without its session now; its history is filled in once the turn is claimed.
      const sessions = run.session ? context.sessions : undefined;
      let prepared = context.driver.prepareParsed(sessions ? withoutSession(run) : run, options);
      const key = run.idempotencyKey;
      const fingerprint = key !== undefined && operations ? operations.fingerprint(run) : undefined;
      // A recorded key replays without an admission slot (spec decision 9).
      if (key !== undefined && operations && fingerprint) {
        const replay = await operations.lookup(principal.subject, key, fingerprint);
        if (replay) {
          await replayableEvidence(context, run, replay, principal.subject);
          return respond(context, reply, replayed(replay), streaming);
        }
      }
      // Refused here (429), the key is not consumed: it is claimed only once the run is admitted.
      let release: () => void;
      try {
        release = context.admission.acquire(principal.subject);
      } catch (error) {
        context.prometheus?.admissionRejected();
        throw error;
      }
      try {
        let journal: RunJournal | undefined;
        let claimDone: (() => void) | undefined;
        if (key !== undefined && operations && fingerprint) {
          const claim = await operations.claim(principal.subject, key, run, fingerprint);
          if ('replay' in claim) {
            await replayableEvidence(context, run, claim.replay, principal.subject);
            return await respond(context, reply, replayed(claim.replay), streaming);
          }
          journal = claim.journal;
          claimDone = claim.done;
        }
        const controller = new AbortController();
        context.active.add(controller, reply.raw);
        reply.raw.on('close', () => {
          if (!reply.raw.writableFinished) controller.abort(new DriverError('CANCELLED', 'The client disconnected.'));
        });
        try {
          const turn = sessions ? await sessions.begin(run, principal, controller) : undefined;
          if (turn) {
            try {
              prepared = context.driver.prepareParsed(turn.request, options);
            } catch (error) {
              await turn.abandon();
              throw error;
            }
          }
          const executed = context.driver.execute(prepared, controller.signal, { journal, continuation: turn?.continuation });
          const events = turn ? turn.run(executed) : executed;
          const watched = context.operator ? context.operator.monitor.track(events, { subject: principal.subject }) : events;
          const counting = counted(context, watched, release);
          const traced = context.tracing ? context.tracing.trace(counting, { request: turn ? turn.request : run, vendor: prepared.adapter.info.vendor }) : counting;
          return await respond(context, reply, traced, streaming);
        } finally {
          claimDone?.();
        }
      } finally {
        release();
      }
    },
  });
};

/** The run's events as SSE, or its result (or error) as JSON. */
async function respond(context: HostContext, reply: FastifyReply, events: AsyncGenerator<RunEvent>, streaming: boolean): Promise<unknown> {
  if (streaming) {
    const closeStream = context.prometheus?.streamOpened();
    reply.raw.once('close', () => closeStream?.());
    return writeEventStream(reply, events, {
      heartbeatMs: context.heartbeatMs,
      writeStallMs: context.writeStallMs,
      ...(context.closing ? { headers: { connection: 'close' } } : {}),
    });
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
async function replayableEvidence(context: HostContext, run: RunRequest, events: RunEvent[], subject: string): Promise<void> {
  if (!run.retrieval) return;
  const terminal = events.at(-1);
  const evidence = terminal?.type === 'run.completed' ? terminal.result.retrieval : undefined;
  if (!evidence || !context.retrieval) {
    throw new DriverError('CONTEXT_REPLAY_UNAVAILABLE', 'This run searched a corpus and did not complete, so its outcome cannot be replayed.', { outcome: 'uncertain' });
  }
  await context.retrieval.revalidate(evidence, { subject, signal: new AbortController().signal });
}

async function* replayed(events: RunEvent[]): AsyncGenerator<RunEvent> {
  yield* events;
}

/**
 * Grants are checked right after the schema and before anything that could reveal
 * whether a provider or tool exists (spec decision 2).
 */
function authorizeRun(run: RunRequest, principal: Principal, streaming: boolean): void {
  if (!principal.providers.has(run.provider)) {
    throw providerNotGranted(run.provider);
  }
  const applicationTools = new Set((run.applicationTools ?? []).map((definition) => definition.name));
  for (const tool of run.tools ?? []) {
    const granted = applicationTools.has(tool) ? principal.applicationTools.has(tool) : principal.tools.has(tool);
    if (!granted) throw toolNotGranted(tool);
  }
  if (run.retrieval && !principal.retrieval.search.has(run.retrieval.corpus)) {
    throw corpusNotGranted(run.retrieval.corpus, 'search');
  }
  if (!streaming) requireNoStream(run);
}

/**
 * Counts terminal events, and frees the run's admission slot at its terminal event: the
 * metering written after it must not hold the slot once the caller has the outcome.
 */
async function* counted(context: HostContext, events: AsyncGenerator<RunEvent>, release: () => void): AsyncGenerator<RunEvent> {
  for await (const event of events) {
    if (event.type === 'run.completed') context.metrics.runs.completed += 1;
    if (event.type === 'run.failed') context.metrics.runs.failed += 1;
    if (event.type === 'run.cancelled') context.metrics.runs.cancelled += 1;
    if (event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.cancelled') release();
    yield event;
  }
}
