/**
 * The A2A agent, started: the public agent card, and `POST /a2a`, where the SDK's JSON-RPC
 * transport handler answers with our request handler (tasks.ts) — JSON, or server-sent events
 * for `SendStreamingMessage` and `SubscribeToTask` — and its 0.3 handler answers the 0.3 method
 * names (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`). The card names no provider: which providers
 * exist is disclosed to a token only for those it may use (docs/architecture.md, decisions).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgentCard, A2A_PROTOCOL_VERSION, AGENT_CARD_PATH } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { A2AError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { DriverError } from '../../protocol/errors.js';
import { WIRE_VERSION } from '../../protocol/version.js';
import { requireGrant } from '../../http/access.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import type { A2aConfig } from './config.js';
import { PushDelivery } from './push.js';
import { taskHandler } from './tasks.js';

/** The earlier binding still served (the SDK's compatibility layer). */
const A2A_0_3 = '0.3';

export function create({ config, host, options, clock, store, services, streams, logInternalError }: ExtensionDeps<A2aConfig>): ExtensionInstance {
  const { jobs, approvals, sessions, toolExecutions } = services;
  if (!jobs?.policy.interactive) throw new DriverError('INVALID_CONFIG', 'a2a needs background runs that wait for people: jobs with interactive: true.');
  const push = config.pushNotifications && new PushDelivery({ store, config: config.pushNotifications, configDir: host.configDir, now: () => clock.now(), log: options.log, logInternalError });

  /** The card, naming this host's `/a2a` as the caller reached it. */
  function card(request: FastifyRequest): AgentCard {
    const url = `${request.protocol}://${request.headers.host ?? request.hostname}/a2a`;
    return {
      name: config.name ?? 'AgenticDriver host',
      description: config.description ?? 'Runs agents on the providers and models your token may use.',
      supportedInterfaces: [
        { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
        { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_0_3 },
      ],
      provider: undefined,
      version: WIRE_VERSION,
      capabilities: { streaming: true, pushNotifications: push !== undefined, extensions: [], extendedAgentCard: false },
      securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'An AgenticDriver bearer token with the a2a grant.', scheme: 'Bearer', bearerFormat: '' } } } },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [
        {
          id: 'run',
          name: 'Run an agent',
          description: 'Runs an agent on a provider and model (message metadata `provider`, `model`, host `tools`, and `applicationTools` your application runs) and answers with its text; a tool that needs a person, or a call of an application tool, makes the task input-required.',
          tags: ['agent'],
          examples: [],
          inputModes: ['text/plain'],
          outputModes: ['text/plain'],
          securityRequirements: [],
        },
      ],
      signatures: [],
    };
  }

  async function serve(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const stopped = new AbortController();
    reply.raw.once('close', () => stopped.abort());
    // Any JSON reaches here; the transport handlers refuse what is not a JSON-RPC request.
    const body = (typeof request.body === 'object' && request.body !== null ? request.body : { value: request.body }) as Record<string, unknown>;
    // A2A 0.3 names its methods `message/send`, `tasks/get`, …; 1.0 `SendMessage`, `GetTask`, …
    const legacy = typeof body.method === 'string' && body.method.includes('/');
    const wire = legacy ? A2A_0_3 : A2A_PROTOCOL_VERSION;
    const tasks = taskHandler({ jobs: jobs!, approvals, toolExecutions, sessions, store, config, wire, card: card(request) }, request.principal, stopped.signal);
    const answer = await (legacy ? new LegacyJsonRpcTransportHandler(tasks) : new JsonRpcTransportHandler(tasks)).handle(body, new ServerCallContext());
    if (!(Symbol.asyncIterator in answer)) return reply.type('application/json; charset=utf-8').send(answer);
    // The SDK's stream does not catch: a refusal before the first response is a JSON-RPC error
    // answered as JSON, a failure later the stream's last frame.
    const id = (body.id ?? null) as string | number | null;
    let first: IteratorResult<unknown>;
    try {
      first = await answer.next();
    } catch (error) {
      return reply.type('application/json; charset=utf-8').send(rpcError(id, error));
    }
    const rest = async function* () {
      if (first.done) return;
      yield first.value;
      try {
        yield* answer;
      } catch (error) {
        yield rpcError(id, error);
      }
    };
    return streams.writeFrames(reply, rest(), (response) => `data: ${JSON.stringify(response)}\n\n`);

    function rpcError(id: string | number | null, error: unknown): unknown {
      if (!(error instanceof A2AError)) logInternalError(error, 'POST /a2a');
      return { jsonrpc: '2.0', id, error: legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error) : JsonRpcTransportHandler.mapToJSONRPCError(error) };
    }
  }

  return {
    ...(push ? { start: () => push.start(), stop: () => push.stop() } : {}),
    publicRoutes: async (app) => {
      app.get(`/${AGENT_CARD_PATH}`, async (request) => AgentCard.toJSON(card(request)));
    },
    routes: async (app) => {
      // A task is a background run of the token's: it needs the jobs grants a job's worker checks too.
      app.addHook('onRequest', async (request) => {
        requireGrant(request.principal, { name: 'a2a' });
        for (const operation of ['submit', 'read', 'cancel']) requireGrant(request.principal, { name: 'jobs', operation });
      });
      app.post('/a2a', serve);
    },
  };
}
