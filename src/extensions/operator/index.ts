/**
 * The operator endpoints (`/v1/operator/...`, feature `operator-endpoints`): every subject's
 * runs (filtered and paged, one by one with their steps), the live update feed, pending
 * approvals, jobs, usage totals and the approval audit log, for tokens with the `operator`
 * grant only (any other token is refused with FORBIDDEN before its body is read). On when
 * some token has the grant. None of these calls takes an admission slot.
 */
import { Type } from '@sinclair/typebox';
import { defineExtension } from '../../http/extension.js';

declare module '../../http/extension.js' {
  interface ExtensionOptions {
    /** How often the operator update feed reads the store's marks while someone listens (default 2 s). */
    operatorMarksIntervalMs?: number;
    /** How long one subscription to the operator update feed lasts before its stream ends (default 15 min). */
    operatorSubscriptionMs?: number;
  }
}

export const operatorExtension = defineExtension({
  id: 'operator',
  features: ['operator-endpoints'],
  grants: {
    /** The operator grant: the `/v1/operator/...` endpoints (every subject's runs, approvals, jobs, usage and audit). */
    operator: { schema: Type.Boolean(), principal: (granted: boolean): Record<string, string[]> => (granted ? { operator: [] } : {}) },
  },
  enabled: (host) => host.tokens.some((token) => token.operator === true),
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
