/** Conversation sessions, started: the session service and its endpoints. */
import type { SessionCreate, SessionIdentity, SessionListRequest } from '../../protocol/schemas.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import type { SessionsConfig } from './config.js';
import { SessionService } from './service.js';

export function create({ config, store, driver }: ExtensionDeps<SessionsConfig>): ExtensionInstance {
  const sessions = new SessionService(store, driver(), config);
  return {
    services: { sessions },
    routes: async (app) => {
      app.route<{ Body: SessionCreate }>({ ...routeOf('createSession'), handler: async (request) => sessions.create(request.body, request.principal) });
      app.route<{ Body: SessionIdentity }>({ ...routeOf('readSession'), handler: async (request) => sessions.read(request.body.id, request.principal) });
      app.route<{ Body: SessionListRequest }>({ ...routeOf('listSessions'), handler: async (request) => sessions.list(request.body, request.principal) });
      app.route<{ Body: SessionIdentity }>({ ...routeOf('deleteSession'), handler: async (request) => sessions.delete(request.body.id, request.principal) });
    },
  };
}
