/**
 * The HTTP(S) server. One pipeline for every request, in this order:
 * common headers -> shutting down or starting -> origin / preflight -> public routes (`/health`,
 * the console's page, `/metrics`) -> authentication -> version negotiation -> exact routing ->
 * the table's guard (grant, admission slot) -> body rules -> the handler.
 * Fastify encapsulation carries it: authentication is a plugin around the authenticated
 * routes, and each extension registers its routes in a context of its own, inside it (or,
 * for routes with an access rule of their own, outside it). Shutdown is Fastify's close:
 * every extension's `stop` (preClose), the drain of the calls being served, then every
 * `close` (onClose) in the reverse order of start.
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from 'fastify';
import { DriverError, statusForCode, toDriverError } from '../protocol/errors.js';
import { ENDPOINTS } from '../protocol/endpoints.js';
import { OPTIONAL_EVENTS_HEADER, selectRequestVersion, VERSION_HEADER, WIRE_VERSION } from '../protocol/version.js';
import type { Principal, TokenAuthenticator } from '../http/access.js';
import type { CorsAdditions } from '../http/extension.js';
import type { Admission } from '../http/admission.js';
import { guardFromTable, QUERY_TARGETS, routeOf, routePath, serves, tableValidatorCompiler } from '../http/endpoints.js';
import type { RequestLine } from '../http/logging.js';
import { sendError } from '../http/send-error.js';
import { assertJsonMediaType, parseJsonBody } from './json-body.js';
import { clientErrorHandler, commonHeaders } from './parser-errors.js';
import { randomUUID } from 'node:crypto';

/** What one started part of the host (an extension, the runtime) does at shutdown. */
export interface Lifecycle {
  /** Before the calls being served are ended. */
  stop?(): Promise<void>;
  /** After the server closed; in the reverse order of start. */
  close?(): Promise<void>;
}

export interface ServerOptions {
  authenticator: TokenAuthenticator;
  admission: Admission;
  allowedOrigins: readonly string[];
  /** An `Origin` the host itself serves a page for (the console), let through like an allowed one. */
  ownsOrigin(origin: string, hostHeader: string | undefined): boolean;
  /** The extensions' additions to the CORS answers (the MCP server's headers). */
  cors: readonly CorsAdditions[];
  /** The features the host advertises: it serves exactly their endpoints. */
  features: ReadonlySet<string>;
  /** The authenticated routes, one context each: the host's own, then the extensions'. */
  routes: readonly FastifyPluginAsync[];
  /** Routes with an access rule of their own, outside authentication. */
  publicRoutes: readonly FastifyPluginAsync[];
  /** What started, in order: stopped in order, closed in reverse, at shutdown. */
  lifecycle: readonly Lifecycle[];
  /** Ends the calls being served and waits (bounded) for their answers to leave. */
  drain(): Promise<void>;
  /** Whether the host is shutting down: every answer then refuses new work and closes its connection. */
  closing(): boolean;
  /** Whether the host is still starting (listening, but reaping and reconciling): requests get 503 HOST_STARTING. */
  starting(): boolean;
  bodyLimit: number;
  tls?: { cert: string; key: string };
  logger?: boolean;
  /** Where every internal error (a 500) is reported; default one JSON line on stderr. */
  logInternalError?: InternalErrorLog;
  /** Told one line per request once its response is complete or its connection closes. */
  logRequest?: (line: RequestLine) => void;
}

/** Receives the unmasked error behind a 500 and where it happened (never sent to a client). */
export type InternalErrorLog = (error: unknown, where: string) => void;

export const logToStderr: InternalErrorLog = (error, where) => {
  const detail = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'internal error', where, error: detail })}\n`);
};

const ALLOW_HEADERS = ['Authorization', 'Content-Type', 'Accept', VERSION_HEADER, OPTIONAL_EVENTS_HEADER];
const ALLOW_METHODS = ['GET', 'POST', 'OPTIONS'];

/** The host's own CORS lists with the extensions' additions, each name once. */
function corsLists(additions: readonly CorsAdditions[]): { allowHeaders: string; allowMethods: string; exposeHeaders: string } {
  const join = (base: readonly string[], pick: (addition: CorsAdditions) => readonly string[] | undefined) => [...new Set([...base, ...additions.flatMap((addition) => pick(addition) ?? [])])].join(', ');
  return {
    allowHeaders: join(ALLOW_HEADERS, (addition) => addition.allowHeaders),
    allowMethods: join(ALLOW_METHODS, (addition) => addition.allowMethods),
    exposeHeaders: join([VERSION_HEADER], (addition) => addition.exposeHeaders),
  };
}

export function buildServer(options: ServerOptions): FastifyInstance {
  const { authenticator } = options;
  const allowedOrigins = new Set(options.allowedOrigins);
  const cors = corsLists(options.cors);
  const tls = options.tls !== undefined;
  const logInternalError = options.logInternalError ?? logToStderr;
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
  app.decorateRequest('slot', undefined);

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

    if (options.closing()) throw new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true });
    if (options.starting()) throw new DriverError('HOST_STARTING', 'The host is starting; try again in a moment.', { retryable: true });

    const origin = request.headers.origin;
    if (origin !== undefined) {
      // CORS headers go to every origin so that a refused page can read why it was refused;
      // only allowed origins get past this point.
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Vary', 'Origin');
      reply.header('Access-Control-Expose-Headers', cors.exposeHeaders);
      if (request.method === 'OPTIONS') {
        reply.header('Access-Control-Allow-Methods', cors.allowMethods);
        reply.header('Access-Control-Allow-Headers', cors.allowHeaders);
        return reply.code(204).send();
      }
      if (!allowedOrigins.has(origin) && !options.ownsOrigin(origin, request.headers.host)) throw new DriverError('ORIGIN_DENIED', 'This origin is not allowed to use the host.');
    }
  });

  /** Authentication, version negotiation and exact routing: every request that is not a public route's exact target. */
  function authenticate(request: FastifyRequest): void {
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
  }

  // While the host drains, every answer closes its connection.
  app.addHook('onSend', async (_request, reply) => {
    if (options.closing()) reply.header('connection', 'close');
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

  // An unknown target is answered only after authentication, like any other.
  app.setNotFoundHandler(async (request) => {
    authenticate(request);
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

  app.setValidatorCompiler(tableValidatorCompiler);

  // Outside authentication: each route answers its exact target only; anything else is authenticated like the rest.
  app.register(async (open) => {
    open.addHook('onRequest', async (request) => {
      if (request.url !== request.routeOptions.url) authenticate(request);
    });
    open.route({ ...routeOf('health'), handler: async () => ({ status: 'ok', protocol: 'agenticdriver.v1' }) });
    for (const routes of options.publicRoutes) open.register(routes);
  });

  app.register(async (authenticated) => {
    authenticated.addHook('onRequest', async (request) => authenticate(request));
    authenticated.addHook('onRoute', guardFromTable(options.admission));
    for (const routes of options.routes) authenticated.register(routes);
  });

  // Shutdown in the order of start: each part's `stop`, then the drain; Fastify then closes the
  // connections and the server, and runs each part's `close` in reverse (onClose of sibling contexts).
  for (const part of options.lifecycle) {
    app.register(async (scope) => {
      if (part.stop) scope.addHook('preClose', part.stop);
      if (part.close) scope.addHook('onClose', part.close);
    });
  }
  app.register(async (scope) => {
    scope.addHook('preClose', options.drain);
  });

  // Every endpoint of the table this host serves has its handler (families register by operation id).
  app.addHook('onReady', async () => {
    const missing = ENDPOINTS.filter((entry) => serves(options.features, entry) && !app.hasRoute({ method: entry.method, url: routePath(entry.path) }));
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
