/** The `mcp` section of the host config: present, the host serves MCP at `/mcp`. */
import { Type, type Static } from '@sinclair/typebox';

export const McpConfig = Type.Object(
  {
    /**
     * How long a run may stay silent before a tool call sends a progress notification anyway
     * (default 15 s): many MCP clients give up on a call after 60 s without progress.
     */
    heartbeatMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 50_000 })),
  },
  { additionalProperties: false },
);
export type McpConfig = Static<typeof McpConfig>;

export const DEFAULT_HEARTBEAT_MS = 15_000;
