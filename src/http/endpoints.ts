/**
 * Routes from the endpoint table (src/protocol/endpoints.ts): each endpoint family registers
 * its handlers by operation id; the path, method and body schema come from the table, and so
 * do the features `/v1/protocol` lists, the public paths and the exact query targets.
 */
import type { FastifySchemaCompiler, RouteOptions } from 'fastify';
import { DriverError } from '../protocol/errors.js';
import { ENDPOINTS, FEATURES, type Endpoint } from '../protocol/endpoints.js';
import { validatorFor } from '../protocol/validate.js';

/** What decides whether the host serves an optional endpoint family. */
export interface Offered {
  approvals: unknown;
  toolExecutions: unknown;
  operations: unknown;
  sessions?: unknown;
  jobs?: unknown;
  /** Scoped retrieval, and whether it ingests documents (and PDFs). */
  retrieval?: { readonly ingests: boolean; readonly ingestsPdf: boolean } | undefined;
  operator?: unknown;
}

export function endpoint(operationId: string): Endpoint {
  const found = ENDPOINTS.find((candidate) => candidate.operationId === operationId);
  if (!found) throw new Error(`No endpoint ${operationId} in the endpoint table.`);
  return found;
}

/** Interactive approvals and application tools exist only when the config enables them. */
export function serves(offered: Offered, entry: Endpoint): boolean {
  if (entry.feature === 'interactive-approvals') return offered.approvals !== undefined;
  if (entry.feature === 'application-tools') return offered.toolExecutions !== undefined;
  if (entry.feature === 'conversation-sessions') return offered.sessions !== undefined;
  if (entry.feature === 'durable-jobs' || entry.feature === 'job-event-stream') return offered.jobs !== undefined;
  if (entry.feature === 'scoped-retrieval' || entry.feature === 'retrieval-indexing') return offered.retrieval !== undefined;
  if (entry.feature === 'document-ingestion') return offered.retrieval?.ingests === true;
  if (entry.feature === 'operator-endpoints') return offered.operator !== undefined;
  return true;
}

/** What `/v1/protocol` advertises: only what this host really serves, in the protocol's order. */
export function hostFeatures(offered: Offered): string[] {
  const offeredWithoutEndpoints: Partial<Record<string, unknown>> = {
    idempotency: offered.operations,
    'pdf-ingestion': offered.retrieval?.ingestsPdf === true ? true : undefined,
  };
  return FEATURES.filter((feature) => !(feature in offeredWithoutEndpoints) || offeredWithoutEndpoints[feature] !== undefined).filter((feature) => ENDPOINTS.filter((entry) => entry.feature === feature).every((entry) => serves(offered, entry)));
}

/** Paths served without authentication (`/health`). */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(ENDPOINTS.filter((entry) => entry.public).map((entry) => entry.path));

/** The only request targets with a query string: each query parameter of the table with its one allowed value. */
export const QUERY_TARGETS: ReadonlySet<string> = new Set(
  ENDPOINTS.flatMap((entry) => (entry.query ?? []).map((query) => `${entry.path}?${query.name}=${String(query.schema.const)}`)),
);

/** The table's path as a Fastify route: `{name}` segments become `:name`. */
export function routePath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** Method, path and (when the table gives one) the body schema of an endpoint, for `app.route`. */
export function routeOf(operationId: string): Pick<RouteOptions, 'method' | 'url' | 'schema'> {
  const entry = endpoint(operationId);
  return { method: entry.method, url: routePath(entry.path), ...(entry.request && entry.invalidBody ? { schema: { body: entry.request } } : {}) };
}

/** Body schemas are checked with the protocol's validators and refused with the table's error code. */
export const bodyValidatorCompiler: FastifySchemaCompiler<unknown> = ({ method, url }) => {
  const entry = ENDPOINTS.find((candidate) => candidate.method === method && routePath(candidate.path) === url);
  if (!entry?.request || !entry.invalidBody) throw new Error(`No body schema for ${method} ${url} in the endpoint table.`);
  const { code, message, reason } = entry.invalidBody;
  const check = validatorFor(entry.request);
  return (value: unknown) => (check(value) ? true : { error: new DriverError(code, `${message}: ${reason ?? check.explain(value) ?? 'it has the wrong shape'}.`) });
};
