/** Interactive approvals, started: the registry of pending approvals and the endpoint that decides one. */
import type { ApprovalDecision, ApprovalResolution } from '../../protocol/schemas.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import type { ApprovalsConfig } from './config.js';
import { ApprovalRegistry } from './registry.js';

export function create({ config, clock, store }: ExtensionDeps<ApprovalsConfig>): ExtensionInstance {
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
}
