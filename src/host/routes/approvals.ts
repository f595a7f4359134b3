/** `POST /v1/approvals/decisions`: decide a pending approval. Never takes a run slot. */
import type { FastifyPluginAsync } from 'fastify';
import { DriverError } from '../../protocol/errors.js';
import { ApprovalDecision, type ApprovalResolution } from '../../protocol/schemas.js';
import { validatorFor } from '../../protocol/validate.js';
import type { HostContext } from '../context.js';

const validateDecision = validatorFor<ApprovalDecision>(ApprovalDecision);

export const approvalRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const registry = context.approvals;
  if (!registry) return;
  app.post('/v1/approvals/decisions', async (request): Promise<ApprovalResolution> => {
    if (!validateDecision(request.body)) {
      throw new DriverError('INVALID_APPROVAL', `The decision is invalid: ${validateDecision.explain(request.body)}.`);
    }
    const { principal } = request;
    return registry.decide(request.body, {
      subject: principal.subject,
      tokenId: principal.tokenId,
      providers: principal.providers,
      approveTools: principal.approveTools,
    });
  });
};
