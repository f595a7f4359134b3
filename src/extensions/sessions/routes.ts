/** Conversation sessions: create, read, delete. Continuing one is a run with `session`. Never take a run slot. */
import type { FastifyPluginAsync } from 'fastify';
import type { SessionCreate, SessionIdentity } from '../../protocol/schemas.js';
import type { HostContext } from '../../host/context.js';
import { routeOf } from '../../http/endpoints.js';

export const sessionRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const sessions = context.sessions;
  if (!sessions) return;
  app.route<{ Body: SessionCreate }>({ ...routeOf('createSession'), handler: async (request) => sessions.create(request.body, request.principal) });
  app.route<{ Body: SessionIdentity }>({ ...routeOf('readSession'), handler: async (request) => sessions.read(request.body.id, request.principal) });
  app.route<{ Body: SessionIdentity }>({ ...routeOf('deleteSession'), handler: async (request) => sessions.delete(request.body.id, request.principal) });
};
