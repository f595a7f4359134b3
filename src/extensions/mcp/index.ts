/**
 * An MCP server (feature `mcp-server`) at `/mcp`: Streamable HTTP in stateless mode, so any
 * replica answers any message (docs/agent-protocols.md). Its tools start a run (answered when it
 * ends, with progress notifications meanwhile) and submit, read, cancel and follow background
 * runs (jobs); a run's approval becomes an elicitation when the client supports it. Config
 * section `mcp`; a token needs `mcp: true`, and its providers, tools and `jobs` grants apply.
 */
import { Type } from '@sinclair/typebox';
import { defineExtension } from '../../http/extension.js';
import { McpConfig } from './config.js';

export const mcpExtension = defineExtension({
  id: 'mcp',
  features: ['mcp-server'],
  configSchema: McpConfig,
  grants: {
    /** The `/mcp` endpoint. */
    mcp: { schema: Type.Boolean(), principal: (granted: boolean): Record<string, string[]> => (granted ? { mcp: [] } : {}) },
  },
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
