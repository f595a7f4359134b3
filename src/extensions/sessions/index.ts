/**
 * Conversation sessions (feature `conversation-sessions`): create, read, list and delete a session;
 * a run with `session: {id, revision}` continues it. Config section `sessions`; a token's
 * `sessions` grant lists the operations it may use (`create`, `read`, `continue`, `delete`).
 */
import { Type } from '@sinclair/typebox';
import type { SessionCreate, SessionIdentity, SessionListRequest } from '../../protocol/schemas.js';
import { defineExtension } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import { SessionService } from './service.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Sessions; the run path begins and commits a turn of one. */
    sessions: SessionService;
  }
}

export const SessionsConfig = Type.Object(
  {
    /** Idle time after which a session is gone (a running turn never counts). */
    retentionMs: Type.Integer({ minimum: 1000, maximum: 2_147_483_647 }),
    maxEntries: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxMessages: Type.Optional(Type.Integer({ minimum: 2, maximum: 100 })),
  },
  { additionalProperties: false },
);

export const sessionsExtension = defineExtension({
  id: 'sessions',
  features: ['conversation-sessions'],
  configSchema: SessionsConfig,
  grants: {
    sessions: {
      schema: Type.Array(Type.Union([Type.Literal('create'), Type.Literal('read'), Type.Literal('continue'), Type.Literal('delete')]), { maxItems: 4, uniqueItems: true }),
    },
  },
  create({ config, store, driver }) {
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
  },
});
