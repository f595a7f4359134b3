/**
 * The HTTP(S) server. One pipeline for every request, in this order:
 * common headers -> shutting down or starting -> origin / preflight -> /health -> authentication ->
 * version negotiation -> exact routing -> body rules -> the endpoint family's handler.
 * Endpoint families are encapsulated Fastify plugins under ./routes.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { DriverError, statusForCode, toDriverError } from '../protocol/errors.js';
import { OPTIONAL_EVENTS_HEADER, selectRequestVersion, VERSION_HEADER, WIRE_VERSION } from '../protocol/version.js';
import type { Principal, TokenAuthenticator } from './auth.js';
import { discoveryRoutes } from './routes/discovery.js';
import { runRoutes } from './routes/runs.js';
import { approvalRoutes } from './routes/approvals.js';
import { toolExecutionRoutes } from './routes/tool-executions.js';
import { ENDPOINTS } from '../protocol/endpoints.js';
import { bodyValidatorCompiler, PUBLIC_PATHS, QUERY_TARGETS, routeOf, routePath, serves } from './routes/table.js';
import { jobRoutes } from './routes/jobs.js';
import { sessionRoutes } from './routes/sessions.js';
import { retrievalRoutes } from './routes/retrieval.js';
import { operatorRoutes } from './routes/operator.js';
import type { HostContext } from './context.js';
import { assertJsonMediaType, parseJsonBody } from './json-body.js';
import { clientErrorHandler, commonHeaders } from './parser-errors.js';
import { sendError } from './send-error.js';
import { METRICS_PATH } from './metrics.js';
import type { RequestLine } from './logging.js';
import { randomUUID } from 'node:crypto';
import { CONSOLE_CSP, isConsoleOrigin, type ConsoleAssets } from './console.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    acceptOptionalEvents: boolean;
  }
}

export interface ServerOptions {
  context: HostContext;
  authenticator: TokenAuthenticator;
  allowedOrigins: readonly string[];
  bodyLimit: number;
  tls?: { cert: string; key: string };
  logger?: boolean;
  /** Where every internal error (a 500) is reported; default one JSON line on stderr. */
  logInternalError?: InternalErrorLog;
  /** Told one line per request once its response is complete or its connection closes. */
  logRequest?: (line: RequestLine) => void;
  /** The operator console page, when enabled; `listenHost` names the host's own origin for its requests. */
  console?: { assets: ConsoleAssets; listenHost: string };
}

/** Receives the unmasked error behind a 500 and where it happened (never sent to a client). */
export type InternalErrorLog = (error: unknown, where: string) => void;

export const logToStderr: InternalErrorLog = (error, where) => {
  const detail = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'internal error', where, error: detail })}\n`);
};

const ALLOW_HEADERS = ['Authorization', 'Content-Type', 'Accept', VERSION_HEADER, OPTIONAL_EVENTS_HEADER].join(', ');

export function buildServer(options: ServerOptions): FastifyInstance {
  const { context, authenticator } = options;
  const allowedOrigins = new Set(options.allowedOrigins);
  const tls = options.tls !== undefined;
  const logInternalError = options.logInternalError ?? logToStderr;
  const consolePage = options.console;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    forceCloseConnections: true,
    return503OnClosing: false,
    // Parser and router failures answer with our envelope and headers, like every response.
    clientErrorHandler: clientErrorHandler(tls),
    frameworkErrors: (error, _request, reply) => {
      reply.headers(commonHeaders(tls));
      return sendError(reply, publicError(error));
    },
    ...(options.tls ? { https: { cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' as const } } : {}),
  });
  app.server.headersTimeout = 10_000;
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('acceptOptionalEvents', false);

  const logRequest = options.logRequest;
  if (logRequest) {
    // First, so every request is logged, the refused ones included.
    app.addHook('onRequest', async (request, reply) => {
      const started = process.hrtime.bigint();
      const requestId = randomUUID();
      reply.raw.once('close', () => {
        const principal = request.principal as Principal | null;
        logRequest({
          requestId,
          method: request.method,
          // The route pattern, never the raw target: a path or query may carry a pasted secret.
          route: request.routeOptions.url ?? 'unmatched',
          status: reply.raw.statusCode,
          durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
          ...(principal ? { subject: principal.subject, tokenId: principal.tokenId } : {}),
          ...(reply.raw.writableFinished ? {} : { aborted: true }),
        });
      });
    });
  }

  app.addHook('onRequest', async (request, reply) => {
    reply.headers(commonHeaders(tls));

    if (context.closing) throw new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true });
    if (context.starting) throw new DriverError('HOST_STARTING', 'The host is starting; try again in a moment.', { retryable: true });

    const origin = request.headers.origin;
    if (origin !== undefined) {
      // CORS headers go to every origin so that a refused page can read why it was refused;
      // only allowed origins get past this point.
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Vary', 'Origin');
      reply.header('Access-Control-Expose-Headers', VERSION_HEADER);
      if (request.method === 'OPTIONS') {
        reply.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        reply.header('Access-Control-Allow-Headers', ALLOW_HEADERS);
        return reply.code(204).send();
      }
      const own = consolePage !== undefined && isConsoleOrigin(origin, request.headers.host, tls, consolePage.listenHost);
      if (!allowedOrigins.has(origin) && !own) throw new DriverError('ORIGIN_DENIED', 'This origin is not allowed to use the host.');
    }
    if ((request.method === 'GET' || request.method === 'HEAD') && PUBLIC_PATHS.has(request.url)) return;
    // The console page holds no data and needs no token (it asks the operator for one).
    if (consolePage && (request.method === 'GET' || request.method === 'HEAD') && consolePage.assets.serves(request.url)) return;
    // The operator's metrics endpoint has its own credential (src/host/metrics.ts), not a host token.
    if (context.prometheus && request.url === METRICS_PATH && (request.method === 'GET' || request.method === 'HEAD')) {
      context.prometheus.authorize(request.headers.authorization, request.socket.remoteAddress);
      return;
    }

    const principal = authenticator.authenticate(request.headers.authorization);
    if (!principal) throw new DriverError('UNAUTHORIZED', 'A valid bearer token is required.');
    request.principal = principal;

    if (selectRequestVersion(headerValues(request, VERSION_HEADER)) === undefined) {
      throw new DriverError('UNSUPPORTED_PROTOCOL_VERSION', `This host speaks AgenticDriver-Version ${WIRE_VERSION} only.`);
    }
    request.acceptOptionalEvents = acceptsOptionalEvents(headerValues(request, OPTIONAL_EVENTS_HEADER));

    // Routes match the raw target exactly: a query string is part of the route, and a
    // percent-encoded path (`/v1/%70rotocol`) is not the route it decodes to.
    if (request.url.includes('?') && !QUERY_TARGETS.has(request.url)) {
      throw new DriverError('NOT_FOUND', 'No such endpoint.');
    }
    const route = request.routeOptions.url;
    if (route !== undefined && !matchesRouteExactly(request.url.split('?')[0]!, route)) {
      throw new DriverError('NOT_FOUND', 'No such endpoint.');
    }
  });

  // While the host drains, every answer closes its connection.
  app.addHook('onSend', async (_request, reply) => {
    if (context.closing) reply.header('connection', 'close');
  });

  app.addHook('preParsing', async (request) => {
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      throw new DriverError('INVALID_REQUEST', 'Request bodies must not be content-encoded.');
    }
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      assertJsonMediaType(request.headers['content-type']);
      done(null, parseJsonBody(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  // Any other media type (or none) reaches the catch-all parser and is refused.
  app.addContentTypeParser('*', (request, _payload, done) => {
    try {
      assertJsonMediaType(request.headers['content-type']);
      done(new DriverError('INVALID_REQUEST', 'Request bodies must be application/json.'), undefined);
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.setNotFoundHandler(async () => {
    throw new DriverError('NOT_FOUND', 'No such endpoint.');
  });

  app.setErrorHandler(async (error, request, reply) => {
    const failure = publicError(error);
    if (statusForCode(failure.code) === 500) {
      request.log.error({ err: error }, 'internal error');
      logInternalError(error, `${request.method} ${request.url.split('?')[0]}`);
    }
    return sendError(reply, failure);
  });

  app.setValidatorCompiler(bodyValidatorCompiler);
  app.route({ ...routeOf('health'), handler: async () => ({ status: 'ok', protocol: 'agenticdriver.v1' }) });
  app.register(discoveryRoutes, { context });
  app.register(runRoutes, { context });
  app.register(approvalRoutes, { context });
  app.register(toolExecutionRoutes, { context });
  app.register(jobRoutes, { context });
  app.register(sessionRoutes, { context });
  app.register(retrievalRoutes, { context });
  app.register(operatorRoutes, { context });
  if (consolePage) {
    for (const url of consolePage.assets.paths) {
      app.route({
        method: 'GET',
        url,
        handler: async (request, reply) => {
          const { type, body } = consolePage.assets.file(request.url, request.socket.remoteAddress);
          return reply.type(type).header('Content-Security-Policy', CONSOLE_CSP).header('Referrer-Policy', 'no-referrer').header('X-Frame-Options', 'DENY').send(body);
        },
      });
    }
  }
  const prometheus = context.prometheus;
  if (prometheus) {
    app.route({
      method: 'GET',
      url: METRICS_PATH,
      handler: async (_request, reply) => {
        const { contentType, body } = await prometheus.render();
        return reply.type(contentType).send(body);
      },
    });
  }
  // Every endpoint of the table this host serves has its handler (families register by operation id).
  app.addHook('onReady', async () => {
    const missing = ENDPOINTS.filter((entry) => serves(context, entry) && !app.hasRoute({ method: entry.method, url: routePath(entry.path) }));
    if (missing.length > 0) throw new Error(`No handler for ${missing.map((entry) => entry.operationId).join(', ')}.`);
  });
  return app;
}

/** Fastify's own errors become typed wire errors; anything unexpected is masked. */
function publicError(error: unknown): DriverError {
  if (error instanceof DriverError) return error;
  const fastifyError = error as { code?: string; statusCode?: number };
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new DriverError('BODY_TOO_LARGE', 'The request body is too large.');
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    if (fastifyError.statusCode === 413) return new DriverError('BODY_TOO_LARGE', 'The request body is too large.');
    return new DriverError('INVALID_REQUEST', 'The request is malformed.');
  }
  return toDriverError(error);
}

/** The opt-in header: absent is false; otherwise exactly one `true` or `false`. */
function acceptsOptionalEvents(values: string[]): boolean {
  if (values.length === 0) return false;
  // Exactly the contract's enum (protocol/openapi.json): `True` is refused like `yes`.
  const value = values.length === 1 ? values[0]!.trim() : '';
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new DriverError('INVALID_REQUEST', `${OPTIONAL_EVENTS_HEADER} must be exactly one "true" or "false".`);
}

/** The raw path equals the route segment by segment; only `:param` segments may vary. */
export function matchesRouteExactly(rawPath: string, route: string): boolean {
  const raw = rawPath.split('/');
  const pattern = route.split('/');
  return raw.length === pattern.length && pattern.every((segment, index) => segment.startsWith(':') || segment === raw[index]);
}

/** Every value of a header as sent (duplicates are kept apart, unlike `request.headers`). */
function headerValues(request: FastifyRequest, name: string): string[] {
  const lower = name.toLowerCase();
  const values: string[] = [];
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === lower) values.push(raw[i + 1]!);
  return values;
}
