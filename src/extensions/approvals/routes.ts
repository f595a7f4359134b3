/** `POST /v1/approvals/decisions`: decide a pending approval. Never takes a run slot. */
import type { FastifyPluginAsync } from 'fastify';
import type { ApprovalDecision, ApprovalResolution } from '../../protocol/schemas.js';
import type { HostContext } from '../../host/context.js';
import { routeOf } from '../../http/endpoints.js';

export const approvalRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const registry = context.approvals;
  if (!registry) return;
  // The body is checked against the table's schema before the handler (INVALID_APPROVAL).
  app.route<{ Body: ApprovalDecision }>({
    ...routeOf('decideApproval'),
    handler: async (request): Promise<ApprovalResolution> => {
      const { principal } = request;
      return registry.decide(request.body, {
        subject: principal.subject,
        tokenId: principal.tokenId,
        providers: principal.providers,
        approveTools: principal.approveTools,
      });
    },
  });
};
