/**
 * Interactive approvals (feature `interactive-approvals`): a person decides a run's pending
 * tool call through `POST /v1/approvals/decisions`. Config section `approvals`; a token's
 * `approveTools` names the tools whose calls it may decide.
 */
import { Type } from '@sinclair/typebox';
import type { ApprovalDecision, ApprovalResolution } from '../../protocol/schemas.js';
import { ToolName } from '../../protocol/schemas.js';
import { defineExtension } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import { ApprovalRegistry } from './registry.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Pending approvals and their decisions (the operator endpoints decide any subject's). */
    approvals: ApprovalRegistry;
  }
}

export const ApprovalsConfig = Type.Object(
  {
    interactive: Type.Literal(true),
    allowIdlePause: Type.Optional(Type.Boolean()),
    maxPending: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false },
);

export const approvalsExtension = defineExtension({
  id: 'approvals',
  features: ['interactive-approvals'],
  configSchema: ApprovalsConfig,
  grants: { approveTools: { schema: Type.Array(ToolName, { maxItems: 32, uniqueItems: true }) } },
  create({ config, clock, store }) {
    const registry = new ApprovalRegistry(clock, config, store);
    return {
      services: { approvals: registry },
      run: { approvals: registry },
      routes: async (app) => {
        app.route<{ Body: ApprovalDecision }>({
          ...routeOf('decideApproval'),
          handler: async (request): Promise<ApprovalResolution> => registry.decide(request.body, request.principal),
        });
      },
    };
  },
});
