/**
 * Conversation sessions (feature `conversation-sessions`): create, read, list and delete a session;
 * a run with `session: {id, revision}` continues it. Config section `sessions`; a token's
 * `sessions` grant lists the operations it may use (`create`, `read`, `continue`, `delete`).
 */
import { Type } from '@sinclair/typebox';
import { defineExtension } from '../../http/extension.js';
import { SessionsConfig } from './config.js';
import type { SessionService } from './service.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Sessions; the run path begins and commits a turn of one. */
    sessions: SessionService;
  }
}

export const sessionsExtension = defineExtension({
  id: 'sessions',
  features: ['conversation-sessions'],
  configSchema: SessionsConfig,
  grants: {
    sessions: {
      schema: Type.Array(Type.Union([Type.Literal('create'), Type.Literal('read'), Type.Literal('continue'), Type.Literal('delete')]), { maxItems: 4, uniqueItems: true }),
    },
  },
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
