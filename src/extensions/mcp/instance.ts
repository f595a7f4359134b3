/**
 * The MCP server, started: `POST /mcp` with the SDK's Streamable HTTP transport in stateless
 * mode, one `Server` and transport per HTTP call. Stateless because the host runs as several
 * replicas behind one address: no message depends on a process having seen an earlier one. What
 * would need a session is carried otherwise — the client's elicitation support in the session
 * id (session.ts), an elicitation's answer by the approval it names (elicitation.ts). A server
 * without standalone streams answers `GET` and `DELETE` with 405, as the transport specifies.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, CancelTaskRequestSchema, GetTaskPayloadRequestSchema, GetTaskRequestSchema, isInitializeRequest, ListTasksRequestSchema, ListToolsRequestSchema, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { toDriverError } from '../../protocol/errors.js';
import { requireGrant } from '../../http/access.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { WIRE_VERSION } from '../../protocol/version.js';
import { callKey, cancelledRequest, McpCancellations } from './cancellation.js';
import { DEFAULT_HEARTBEAT_MS, type McpConfig } from './config.js';
import { decideAnswer, elicitationAnswer } from './elicitation.js';
import { heartbeatProgress } from './progress.js';
import { sessionElicits, sessionIdFor } from './session.js';
import { McpTools, type ToolCall } from './tools.js';

const SERVER_INFO = { name: 'agenticdriver', title: 'AgenticDriver host', version: WIRE_VERSION };

export function create({ config, store, runs, services, clock, logInternalError }: ExtensionDeps<McpConfig>): ExtensionInstance {
  const heartbeatMs = config.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const approvals = services.approvals;
  let tools: McpTools | undefined;
  // The run path is built with the runtime, after every extension was created.
  const toolsOf = () => (tools ??= new McpTools({ runs: runs(), jobs: services.jobs, store, logInternalError }));
  const cancellations = new McpCancellations(store.replica);

  async function serve(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const sessionId = typeof request.headers['mcp-session-id'] === 'string' ? request.headers['mcp-session-id'] : undefined;
    const cancelled = cancelledRequest(request.body);
    if (cancelled !== undefined) {
      // Without a session id, a request id names no one call of this client's.
      if (sessionId) await cancellations.cancel(callKey(request.principal.subject, sessionId, cancelled));
      return reply.code(202).send();
    }
    const answer = elicitationAnswer(request.body);
    if (answer) {
      if (approvals) await decideAnswer(answer, request.principal, store, approvals);
      return reply.code(202).send();
    }
    const principal = request.principal;
    const elicits = sessionElicits(sessionId);
    // MCP tasks are background runs: offered when the host runs jobs.
    const tasks = services.jobs ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {};
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false }, ...tasks } });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: false });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolsOf().list(principal) }));
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      const cancellable = trackCancel(extra);
      const progress = heartbeatProgress({
        token: call.params._meta?.progressToken,
        send: (notification) => extra.sendNotification(notification),
        clock,
        heartbeatMs,
      });
      try {
        if (call.params.task) return await toolsOf().createTask(call.params.name, call.params.arguments ?? {}, principal);
        return await toolsOf().call(call.params.name, call.params.arguments ?? {}, toolCall(cancellable, (message) => progress.send(message)));
      } finally {
        progress.stop();
        cancellable.untrack();
      }
    });
    if (services.jobs) {
      server.setRequestHandler(GetTaskRequestSchema, async (request) => toolsOf().getTask(request.params.taskId, principal));
      server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
        const cancellable = trackCancel(extra);
        try {
          return await toolsOf().taskResult(request.params.taskId, toolCall(cancellable, async () => undefined));
        } finally {
          cancellable.untrack();
        }
      });
      server.setRequestHandler(CancelTaskRequestSchema, async (request) => toolsOf().cancelTask(request.params.taskId, principal));
      server.setRequestHandler(ListTasksRequestSchema, async () => ({ tasks: await toolsOf().listTasks(principal) }));
    }

    /**
     * A call the client may cancel (`notifications/cancelled`, on any replica): cancelling ends its
     * response stream, as the client closing it would, and its signal.
     */
    function trackCancel(extra: { signal: AbortSignal; requestId: RequestId }): { signal: AbortSignal; requestId: RequestId; untrack(): void } {
      const ended = new AbortController();
      const untrack = sessionId
        ? cancellations.track(callKey(principal.subject, sessionId, extra.requestId), () => {
            ended.abort();
            reply.raw.destroy();
          })
        : () => undefined;
      return { signal: AbortSignal.any([extra.signal, ended.signal]), requestId: extra.requestId, untrack };
    }

    /** How a handler reaches its client: on the stream of the request it answers. */
    function toolCall(extra: { signal: AbortSignal; requestId: RequestId }, progress: (message: string) => Promise<void>): ToolCall {
      return {
        principal,
        reply,
        signal: extra.signal,
        elicits: elicits && approvals !== undefined,
        progress,
        request: (message) => transport.send(message, { relatedRequestId: extra.requestId }),
      };
    }
    // The session id carries what the client declared (session.ts).
    if (isInitializeRequest(request.body)) reply.header('mcp-session-id', sessionIdFor(request.body.params.capabilities));
    // The transport writes the response itself, with the host's common headers.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    reply.raw.once('close', () => void server.close().catch(() => undefined));
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      // Hijacked: the host's error handler cannot answer any more.
      logInternalError(error, 'POST /mcp');
      if (reply.raw.headersSent) reply.raw.destroy();
      else reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: toDriverError(error).toJSON() }));
    }
  }

  return {
    // A browser MCP client on an allowed origin (`allowedOrigins`) sends and reads the transport's headers.
    cors: { allowHeaders: ['Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID'], allowMethods: ['DELETE'], exposeHeaders: ['Mcp-Session-Id'] },
    routes: async (app) => {
      app.addHook('onRequest', async (request) => requireGrant(request.principal, { name: 'mcp' }));
      app.post('/mcp', serve);
      const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
        reply.code(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'This server offers no standalone stream and no session to delete: POST only.' }, id: null });
      app.get('/mcp', notAllowed);
      app.delete('/mcp', notAllowed);
    },
  };
}
