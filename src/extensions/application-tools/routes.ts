/** Application-tool tickets: progress and the one result. Never take a run slot. */
import type { FastifyPluginAsync } from 'fastify';
import type { ToolExecutionIdentity, ToolExecutionReceipt, ToolExecutionResult } from '../../protocol/schemas.js';
import type { HostContext } from '../../host/context.js';
import { routeOf } from '../../http/endpoints.js';

export const toolExecutionRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const registry = context.toolExecutions;
  if (!registry) return;
  // Bodies are checked against the table's schemas before the handlers (INVALID_TOOL_EXECUTION).
  app.route<{ Body: ToolExecutionIdentity }>({
    ...routeOf('reportToolProgress'),
    handler: async (request): Promise<ToolExecutionReceipt> => registry.progress(request.body, request.principal),
  });
  app.route<{ Body: ToolExecutionResult }>({
    ...routeOf('completeTool'),
    handler: async (request): Promise<ToolExecutionReceipt> => registry.complete(request.body, request.principal),
  });
};
