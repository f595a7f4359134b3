/**
 * The run's tools as an MCP server for a CLI agent (official MCP SDK, Streamable HTTP on
 * loopback, stateless: a fresh server per HTTP request, so any number of CLI connections
 * work). A random bearer token, handed to the CLI through a private file or variable, keeps
 * every other local process out. Each `tools/call` goes to the runtime's `callTool`, which
 * validates, approves and executes it like any tool call of the run; the CLI waits meanwhile.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderToolDefinition, ToolCaller } from '../contract/v1.js';

/** The MCP server name the CLIs see; their tool names become e.g. `mcp__agenticdriver__<tool>`. */
export const BRIDGE_SERVER_NAME = 'agenticdriver';
const MAX_BODY_BYTES = 1_000_000;

/**
 * A tool the adapter itself serves on the bridge (e.g. Claude's permission prompt tool). Its
 * name contains a `-`, which run tool names cannot, so it never collides with them.
 */
export interface BridgeTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Resolves with the text result; rejects with the error the step ends with. */
  call(args: Record<string, unknown>): Promise<string>;
}

export interface ToolBridge {
  url: string;
  token: string;
  tools: ProviderToolDefinition[];
  /** The first failure of a call (validation, denial, limit): the step ends with it. */
  readonly failure: DriverError | undefined;
  close(): Promise<void>;
}

export async function startToolBridge(
  tools: ProviderToolDefinition[],
  callTool: ToolCaller | undefined,
  onFailure: (error: DriverError) => void,
  internal: BridgeTool[] = [],
): Promise<ToolBridge> {
  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(`Bearer ${token}`);
  let failure: DriverError | undefined;

  const mcpServer = () => {
    const server = new Server({ name: BRIDGE_SERVER_NAME, version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [...tools, ...internal].map((tool) => ({ name: tool.name, description: tool.description, inputSchema: { type: 'object', ...tool.inputSchema } })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      if (failure) return { content: [{ type: 'text', text: 'The run has already failed.' }], isError: true };
      const args = request.params.arguments ?? {};
      const own = internal.find((tool) => tool.name === request.params.name);
      try {
        if (!own && !callTool) throw new DriverError('TOOL_NOT_ALLOWED', `The model called ${JSON.stringify(request.params.name)}, which this run did not select.`);
        const output = own ? await own.call(args) : await callTool!({ id: `mcp-${randomUUID()}`, name: request.params.name, arguments: args });
        return { content: [{ type: 'text', text: output }] };
      } catch (error) {
        failure = error instanceof DriverError ? error : new DriverError('TOOL_FAILED', `Tool ${request.params.name} failed.`, { cause: error });
        onFailure(failure);
        return { content: [{ type: 'text', text: failure.message }], isError: true };
      }
    });
    return server;
  };

  const http = createServer((request, response) => {
    void handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const presented = Buffer.from(request.headers.authorization ?? '');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return void response.writeHead(401).end();
    if (new URL(request.url ?? '/', 'http://loopback').pathname !== '/mcp') return void response.writeHead(404).end();
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    if (body === INVALID) return void response.writeHead(400).end();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = mcpServer();
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  };

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    token,
    tools,
    get failure() {
      return failure;
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

const INVALID = Symbol('invalid');

async function readJson(request: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return INVALID;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return INVALID;
  }
}
