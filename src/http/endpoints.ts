/**
 * Routes from the endpoint table (src/protocol/endpoints.ts). A handler is registered by
 * operation id (`routeOf`); the path, method, body and path-parameter schemas come from the
 * table, and so does what one guard (`guardFromTable`, an `onRoute` hook around the
 * authenticated routes) adds to every such route: the grant the endpoint needs and, when the
 * call takes one, its admission slot. The table also gives the exact query targets and, with
 * the extensions that are on, the features `/v1/protocol` lists.
 */
import type { FastifySchemaCompiler, onRouteHookHandler, preHandlerAsyncHookHandler, RouteOptions } from 'fastify';
import { DriverError } from '../protocol/errors.js';
import { ENDPOINTS, FEATURES, type Endpoint, type Feature } from '../protocol/endpoints.js';
import { validatorFor } from '../protocol/validate.js';
import { requireGrant, type Principal } from './access.js';
import type { Admission, Slot } from './admission.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    acceptOptionalEvents: boolean;
    /** The admission slot of a call that takes one for its whole length (`admission: 'call'`). */
    slot: Slot | undefined;
  }
  interface FastifyContextConfig {
    /** The endpoint of the table this route serves. */
    operationId?: string;
  }
}

/** Features the host offers whatever extensions are on: the run path and discovery. */
export const CORE_FEATURES: readonly Feature[] = [
  'json-results',
  'event-stream',
  'cancel-on-disconnect',
  'optional-idle-timeout',
  'required-capabilities',
  'optional-events',
  'provider-discovery',
  'context-inputs',
  'draft-artifacts',
];

export function endpoint(operationId: string): Endpoint {
  const found = ENDPOINTS.find((candidate) => candidate.operationId === operationId);
  if (!found) throw new Error(`No endpoint ${operationId} in the endpoint table.`);
  return found;
}

/** What `/v1/protocol` advertises: the core features and those the extensions offer, in the protocol's order. */
export function advertisedFeatures(offered: Iterable<Feature>): Feature[] {
  const on = new Set<Feature>([...CORE_FEATURES, ...offered]);
  return FEATURES.filter((feature) => on.has(feature));
}

/** Whether a host advertising `features` serves the endpoint: the endpoints of a feature exist only when it is on. */
export function serves(features: ReadonlySet<string>, entry: Endpoint): boolean {
  return entry.feature === undefined || features.has(entry.feature);
}

/** The only request targets with a query string: each query parameter of the table with its one allowed value. */
export const QUERY_TARGETS: ReadonlySet<string> = new Set(
  ENDPOINTS.flatMap((entry) => (entry.query ?? []).map((query) => `${entry.path}?${query.name}=${String(query.schema.const)}`)),
);

/** The table's path as a Fastify route: `{name}` segments become `:name`. */
export function routePath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** Method, path, schemas (body and path parameters, when the table gives them) and the operation id of an endpoint, for `app.route`. */
export function routeOf(operationId: string): Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'> {
  const entry = endpoint(operationId);
  const body = entry.request && entry.invalidBody ? { body: entry.request } : {};
  const params = entry.pathParams
    ? { params: { type: 'object', properties: Object.fromEntries(entry.pathParams.map((param) => [param.name, param.schema])), required: entry.pathParams.map((param) => param.name) } }
    : {};
  return { method: entry.method, url: routePath(entry.path), schema: { ...body, ...params }, config: { operationId } };
}

/** Bodies and path parameters are checked with the protocol's validators and refused with the table's error code. */
export const tableValidatorCompiler: FastifySchemaCompiler<unknown> = ({ method, url, httpPart }) => {
  // Fastify adds a HEAD route to every GET route, with its schemas.
  const entry = ENDPOINTS.find((candidate) => candidate.method === (method === 'HEAD' ? 'GET' : method) && routePath(candidate.path) === url);
  if (httpPart === 'params' && entry?.pathParams) {
    // A path parameter's schema is a string with a pattern: checked as such, with no compiled validator.
    const checks = entry.pathParams.map((param) => {
      const pattern = new RegExp(param.schema.pattern, 'u');
      return { ...param, check: (value: unknown) => typeof value === 'string' && pattern.test(value) };
    });
    return (value: unknown) => {
      const failed = checks.find((param) => !param.check((value as Record<string, unknown>)[param.name]));
      return failed ? { error: new DriverError(failed.invalid.code, failed.invalid.message) } : true;
    };
  }
  if (httpPart !== 'body' || !entry?.request || !entry.invalidBody) throw new Error(`No ${httpPart ?? 'body'} schema for ${method} ${url} in the endpoint table.`);
  const { code, message, reason } = entry.invalidBody;
  const check = validatorFor(entry.request);
  return (value: unknown) => (check(value) ? true : { error: new DriverError(code, `${message}: ${reason ?? check.explain(value) ?? 'it has the wrong shape'}.`) });
};

/**
 * The one guard of the authenticated routes: a route registered with `routeOf` gets the checks
 * its endpoint's table entry asks for. A grant the body does not name is checked before the body
 * is read, one that names a body field (a corpus) right after the body's schema; a call that
 * takes an admission slot for its whole length takes it last, and frees it when its handler ends.
 */
export function guardFromTable(admission: Admission): onRouteHookHandler {
  return (route) => {
    const operationId = route.config?.operationId;
    if (operationId === undefined) return;
    const { grant, admission: slot } = endpoint(operationId);
    if (grant && grant.resource === undefined) route.onRequest = [...hooks(route.onRequest), async (request) => requireGrant(request.principal, grant)];
    const before: preHandlerAsyncHookHandler[] = [];
    if (grant?.resource !== undefined) before.push(async (request) => requireGrant(request.principal, grant, request.body));
    if (slot === 'call') {
      before.push(async (request, reply) => {
        request.slot = admission.admit(request.principal.subject, reply);
      });
      const handler = route.handler;
      route.handler = async function (request, reply) {
        try {
          return await handler.call(this, request, reply);
        } finally {
          request.slot?.release();
        }
      };
    }
    if (before.length > 0) route.preHandler = [...hooks(route.preHandler), ...before];
  };
}

function hooks<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
