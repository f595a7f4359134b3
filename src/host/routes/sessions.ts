/** Conversation sessions: create, read, list, delete. Continuing one is a run with `session`. Never take a run slot. */
import type { FastifyPluginAsync } from 'fastify';
import type { SessionCreate, SessionIdentity, SessionListRequest } from '../../protocol/schemas.js';
import type { HostContext } from '../context.js';
import { routeOf } from './table.js';

export const sessionRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const sessions = context.sessions;
  if (!sessions) return;
  app.route<{ Body: SessionCreate }>({ ...routeOf('createSession'), handler: async (request) => sessions.create(request.body, request.principal) });
  app.route<{ Body: SessionIdentity }>({ ...routeOf('readSession'), handler: async (request) => sessions.read(request.body.id, request.principal) });
  app.route<{ Body: SessionListRequest }>({ ...routeOf('listSessions'), handler: async (request) => sessions.list(request.body, request.principal) });
  app.route<{ Body: SessionIdentity }>({ ...routeOf('deleteSession'), handler: async (request) => sessions.delete(request.body.id, request.principal) });
};
