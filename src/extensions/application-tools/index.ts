/**
 * Application tools (feature `application-tools`): tools that run in the calling application,
 * which reports progress and delivers the one result of each call through a single-use ticket.
 * Config section `applicationTools`; a token's `applicationTools` grant names the tools it may
 * declare, and which of them run only after review.
 */
import { Type } from '@sinclair/typebox';
import { DriverError } from '../../protocol/errors.js';
import type { ToolExecutionIdentity, ToolExecutionReceipt, ToolExecutionResult } from '../../protocol/schemas.js';
import { ToolName } from '../../protocol/schemas.js';
import { defineExtension } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import { ToolExecutionRegistry } from './registry.js';

declare module '../../http/extension.js' {
  interface HostServices {
    toolExecutions: ToolExecutionRegistry;
  }
}

export const ApplicationToolsConfig = Type.Object(
  {
    enabled: Type.Literal(true),
    requireApproval: Type.Optional(Type.Boolean()),
    maxPending: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false },
);

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
  create({ config, store }) {
    const registry = new ToolExecutionRegistry(config, store);
    return {
      services: { toolExecutions: registry },
      run: { toolExecutions: registry },
      routes: async (app) => {
        app.route<{ Body: ToolExecutionIdentity }>({
          ...routeOf('reportToolProgress'),
          handler: async (request): Promise<ToolExecutionReceipt> => registry.progress(request.body, request.principal),
        });
        app.route<{ Body: ToolExecutionResult }>({
          ...routeOf('completeTool'),
          handler: async (request): Promise<ToolExecutionReceipt> => registry.complete(request.body, request.principal),
        });
      },
    };
  },
});
