/**
 * Application tools (feature `application-tools`): tools that run in the calling application,
 * which reports progress and delivers the one result of each call through a single-use ticket.
 * Config section `applicationTools`; a token's `applicationTools` grant names the tools it may
 * declare, and which of them run only after review.
 */
import { Type } from '@sinclair/typebox';
import { DriverError } from '../../protocol/errors.js';
import { ToolName } from '../../protocol/schemas.js';
import { defineExtension } from '../../http/extension.js';
import { ApplicationToolsConfig } from './config.js';
import type { ToolExecutionRegistry } from './registry.js';

declare module '../../http/extension.js' {
  interface HostServices {
    toolExecutions: ToolExecutionRegistry;
  }
}

type ApplicationToolGrant = { name: string; requiresApproval?: boolean }[];

export const applicationToolsExtension = defineExtension({
  id: 'applicationTools',
  features: ['application-tools'],
  configSchema: ApplicationToolsConfig,
  grants: {
    applicationTools: {
      schema: Type.Array(Type.Object({ name: ToolName, requiresApproval: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), { maxItems: 32 }),
      /** The tools it may declare, and those it may run only after review (`applicationToolApprovals`). */
      principal: (grants: ApplicationToolGrant) => ({
        applicationTools: grants.map((grant) => grant.name),
        applicationToolApprovals: grants.filter((grant) => grant.requiresApproval !== false).map((grant) => grant.name),
      }),
      check: (grants: ApplicationToolGrant, tokenId: string) => {
        if (new Set(grants.map((grant) => grant.name)).size !== grants.length) throw new DriverError('INVALID_CONFIG', `Token ${tokenId} grants an application tool twice.`);
      },
    },
  },
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
