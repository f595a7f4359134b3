/** Application-tool tickets: progress and the one result. Never take a run slot. */
import type { FastifyPluginAsync } from 'fastify';
import { DriverError } from '../../protocol/errors.js';
import { ToolExecutionIdentity, ToolExecutionResult, type ToolExecutionReceipt } from '../../protocol/schemas.js';
import { validatorFor } from '../../protocol/validate.js';
import type { HostContext } from '../context.js';

const validateIdentity = validatorFor<ToolExecutionIdentity>(ToolExecutionIdentity);
const validateResult = validatorFor<ToolExecutionResult>(ToolExecutionResult);

function invalid(reason: string | undefined): DriverError {
  return new DriverError('INVALID_TOOL_EXECUTION', `The tool execution request is invalid: ${reason ?? 'it has the wrong shape'}.`);
}

export const toolExecutionRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const registry = context.toolExecutions;
  if (!registry) return;
  app.post('/v1/tool-executions/progress', async (request): Promise<ToolExecutionReceipt> => {
    if (!validateIdentity(request.body)) throw invalid(validateIdentity.explain(request.body));
    return registry.progress(request.body, request.principal);
  });
  app.post('/v1/tool-executions/results', async (request): Promise<ToolExecutionReceipt> => {
    if (!validateResult(request.body)) throw invalid('it must carry executionId, runId, callId and exactly one of output or error');
    return registry.complete(request.body, request.principal);
  });
};
