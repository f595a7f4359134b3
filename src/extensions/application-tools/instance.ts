/** Application tools, started: the registry of pending tool calls and the endpoints that report on and complete them. */
import type { ToolExecutionIdentity, ToolExecutionReceipt, ToolExecutionResult } from '../../protocol/schemas.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import type { ApplicationToolsConfig } from './config.js';
import { ToolExecutionRegistry } from './registry.js';

export function create({ config, store }: ExtensionDeps<ApplicationToolsConfig>): ExtensionInstance {
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
}
