/**
 * An A2A agent (feature `a2a`): the agent card at `/.well-known/agent-card.json` and the JSON-RPC
 * binding of A2A 1.0 at `POST /a2a` (the SDK's transport handler over our request handler). A task
 * is a background run (a job), so it lives in the store and any replica answers for it; its
 * context a session; a pending approval or application tool call is `input-required`, answered
 * by the next message; push notifications (`pushNotifications`) tell a client when a task ends or
 * needs input. Needs `jobs.interactive`. Config section `a2a`; a token needs `a2a: true` and the
 * `jobs` grants `submit`, `read` and `cancel`.
 */
import { Type } from '@sinclair/typebox';
import { defineExtension } from '../../http/extension.js';
import { A2aConfig } from './config.js';

export const a2aExtension = defineExtension({
  id: 'a2a',
  features: ['a2a'],
  configSchema: A2aConfig,
  grants: {
    /** `POST /a2a`. */
    a2a: { schema: Type.Boolean(), principal: (granted: boolean): Record<string, string[]> => (granted ? { a2a: [] } : {}) },
  },
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
