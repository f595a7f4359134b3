/**
 * `POST /v1/runs`: the attached caller of the run service — a JSON result, or SSE when `Accept`
 * includes `text/event-stream`; the run is cancelled when its client disconnects.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { DriverError } from '../../protocol/errors.js';
import type { RunEvent } from '../../protocol/schemas.js';
import { routeOf } from '../../http/endpoints.js';
import type { Observers } from '../../http/observers.js';
import type { RunService } from '../../http/run-service.js';
import { sendError } from '../../http/send-error.js';
import type { EventStreams } from '../../http/sse.js';

export function runRoutes(runs: RunService, observers: Observers, streams: EventStreams): FastifyPluginAsync {
  return async (app) => {
    app.route({
      ...routeOf('run'),
      handler: async (request, reply) => {
        const streaming = (request.headers.accept ?? '').toLowerCase().includes('text/event-stream');
        const run = await runs.attached(request.body, request.principal, { streaming, acceptOptionalEvents: streaming && request.acceptOptionalEvents, reply });
        try {
          if (!streaming) return await answer(reply, run.events);
          reply.raw.once('close', observers.streamOpened());
          return await streams.write(reply, run.events);
        } finally {
          run.done();
        }
      },
    });
  };
}

/** The run's result (or error) as JSON. */
async function answer(reply: FastifyReply, events: AsyncGenerator<RunEvent>): Promise<unknown> {
  for await (const event of events) {
    if (event.type === 'run.completed') return reply.type('application/json; charset=utf-8').send(event.result);
    if (event.type === 'run.failed' || event.type === 'run.cancelled') return sendError(reply, DriverError.from(event.error));
  }
  throw new DriverError('INTERNAL_ERROR', 'The run ended without a terminal event.');
}
