/** The one error envelope: `{ "error": ErrorInfo }` with the code's status from the protocol table. */
import type { FastifyReply } from 'fastify';
import { statusForCode, type DriverError } from '../protocol/errors.js';

export function sendError(reply: FastifyReply, error: DriverError): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply
    .code(statusForCode(error.code))
    .type('application/json; charset=utf-8')
    .send({ error: error.toJSON() });
}
