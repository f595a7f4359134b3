/**
 * Who is asking, and what they may do: the principal a bearer token stands for, its grants,
 * and the checks on them. Static bearer tokens: only SHA-256 digests are kept; a lookup finds the
 * digest in a map and confirms it in constant time (docs/architecture.md, decisions: Bearer
 * scheme). The subject always comes from the token, never the body.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { DriverError } from '../protocol/errors.js';
import type { RunRequest } from '../protocol/schemas.js';
import { requireNoStream } from '../runtime/driver.js';
import { corpusNotGranted, providerNotGranted, toolNotGranted } from '../shared/grants.js';
import { readSecret, type SecretRef } from '../shared/secrets.js';

export interface Principal {
  readonly tokenId: string;
  readonly subject: string;
  /** Provider instances and host tools the token may use. */
  readonly providers: ReadonlySet<string>;
  readonly tools: ReadonlySet<string>;
  /**
   * The extensions' grants, by name: what each allows — operations (`jobs`: submit, read),
   * names (`approveTools`) or resources per operation (`retrieval.search`: corpora). A grant
   * with nothing listed (`operator`) allows by being there.
   */
  readonly grants: ReadonlyMap<string, ReadonlySet<string>>;
}

/** A token entry of the host config: the core fields, and the extensions' grant fields. */
export interface TokenEntry {
  id: string;
  subject: string;
  tokenRef: SecretRef;
  providers: string[];
  tools?: string[];
  [grant: string]: unknown;
}

/** A token field an extension adds (e.g. `jobs`), and the grants it gives a principal. */
export interface GrantField<V = unknown> {
  /** The field's schema in a token entry (optional there). */
  readonly schema: TSchema;
  /** The grants a value gives, by name (default: the field's name with the listed items). */
  principal?(value: V): Record<string, Iterable<string>>;
  /** What the schema cannot express; throws INVALID_CONFIG naming the token. */
  check?(value: V, tokenId: string): void;
}

/** A grant an endpoint needs (the endpoint table's `grant`). */
export interface Grant {
  name: string;
  operation?: string;
  resource?: string;
}

/** Whether the principal has `grant`, or `item` under it. */
export function allows(principal: Pick<Principal, 'grants'>, grant: string, item?: string): boolean {
  if (item === undefined) return principal.grants.has(grant);
  return principal.grants.get(grant)?.has(item) === true;
}

/** FORBIDDEN unless the principal holds what the endpoint needs; `body` names the resource. */
export function requireGrant(principal: Pick<Principal, 'grants'>, grant: Grant, body?: unknown): void {
  if (grant.resource !== undefined) {
    const resource = (body as Record<string, unknown> | undefined)?.[grant.resource];
    if (typeof resource !== 'string' || !allows(principal, `${grant.name}.${grant.operation}`, resource)) {
      if (grant.resource === 'corpus') throw corpusNotGranted(String(resource), grant.operation as 'search' | 'index' | 'delete');
      throw new DriverError('FORBIDDEN', `This token may not ${grant.operation} ${grant.resource} ${String(resource)}.`);
    }
    return;
  }
  if (grant.operation !== undefined) {
    if (!allows(principal, grant.name, grant.operation)) throw new DriverError('FORBIDDEN', `This token may not ${grant.operation} ${grant.name}.`);
    return;
  }
  if (!allows(principal, grant.name)) throw new DriverError('FORBIDDEN', `This token does not have the ${grant.name} grant.`);
}

/**
 * A run's grants, checked right after the schema and before anything that could reveal
 * whether a provider or tool exists (docs/architecture.md, decisions: Authorize before
 * disclosing): its provider, each tool (an application tool the run declares against the
 * token's application tools), the corpus it searches; and a run that needs a stream must ask
 * for one.
 */
export function authorizeRun(run: RunRequest, principal: Principal, streaming: boolean): void {
  requireResources(run, principal);
  if (!streaming) requireNoStream(run);
}

/** The provider, tools and corpus a run request uses (a job's request is checked again when it starts). */
export function requireResources(run: RunRequest, principal: Pick<Principal, 'providers' | 'tools' | 'grants'>): void {
  if (!principal.providers.has(run.provider)) {
    throw providerNotGranted(run.provider);
  }
  const applicationTools = new Set((run.applicationTools ?? []).map((definition) => definition.name));
  for (const tool of run.tools ?? []) {
    const granted = applicationTools.has(tool) ? allows(principal, 'applicationTools', tool) : principal.tools.has(tool);
    if (!granted) throw toolNotGranted(tool);
  }
  if (run.retrieval && !allows(principal, 'retrieval.search', run.retrieval.corpus)) {
    throw corpusNotGranted(run.retrieval.corpus, 'search');
  }
}

interface StoredToken {
  digest: Buffer;
  principal: Principal;
}

export const MIN_TOKEN_LENGTH = 32;
export const MAX_TOKEN_LENGTH = 4096;

const digestOf = (token: string) => createHash('sha256').update(token).digest();

export class TokenAuthenticator {
  /**
   * Tokens by their SHA-256 (base64): a request's lookup is one map read however many tokens are
   * configured — what its timing could tell is about a digest, which gives no token away — and
   * the match is confirmed by a constant-time compare of the digests.
   */
  private constructor(private byDigest: ReadonlyMap<string, StoredToken>) {}

  /** Takes the tokens of `other` (a config reload): requests authenticated from now on see them. */
  adopt(other: TokenAuthenticator): void {
    this.byDigest = other.byDigest;
  }

  /** Resolves every token reference once, at start-up; `grants` are the extensions' token fields. */
  static async load(entries: readonly TokenEntry[], configDir: string, grants: Readonly<Record<string, GrantField>>, env: NodeJS.ProcessEnv = process.env): Promise<TokenAuthenticator> {
    const byDigest = new Map<string, StoredToken>();
    for (const entry of entries) {
      const value = await readSecret(entry.tokenRef, configDir, env);
      if (value.length < MIN_TOKEN_LENGTH || value.length > MAX_TOKEN_LENGTH || /[\s\0]/.test(value)) {
        throw new DriverError('AUTH_REQUIRED', `Token ${entry.id} must resolve to one line of ${MIN_TOKEN_LENGTH}-${MAX_TOKEN_LENGTH} characters without whitespace.`);
      }
      const digest = digestOf(value);
      const key = digest.toString('base64');
      if (byDigest.has(key)) throw new DriverError('INVALID_CONFIG', `Token ${entry.id} has the same value as another token.`);
      byDigest.set(key, { digest, principal: principalOf(entry, grants) });
    }
    return new TokenAuthenticator(byDigest);
  }

  /** The principal of a configured token entry, by its id (a job's submitter at dispatch). */
  principalOf(tokenId: string): Principal | undefined {
    for (const { principal } of this.byDigest.values()) if (principal.tokenId === tokenId) return principal;
    return undefined;
  }

  /** The principal for an `Authorization` header value, or undefined. */
  authenticate(header: string | undefined): Principal | undefined {
    const token = bearerToken(header);
    if (token === undefined) return undefined;
    const digest = digestOf(token);
    const found = this.byDigest.get(digest.toString('base64'));
    return found && timingSafeEqual(found.digest, digest) ? found.principal : undefined;
  }
}

function principalOf(entry: TokenEntry, fields: Readonly<Record<string, GrantField>>): Principal {
  const grants = new Map<string, ReadonlySet<string>>();
  for (const [field, definition] of Object.entries(fields)) {
    const value = entry[field];
    if (value === undefined) continue;
    const given = definition.principal ? definition.principal(value as never) : { [field]: value as string[] };
    for (const [name, items] of Object.entries(given)) grants.set(name, new Set(items));
  }
  return { tokenId: entry.id, subject: entry.subject, providers: new Set(entry.providers), tools: new Set(entry.tools ?? []), grants };
}

/** `Bearer <token>` with a case-insensitive scheme (RFC 7235). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^bearer +(\S+)$/i.exec(header);
  const token = match?.[1];
  if (!token || token.length > MAX_TOKEN_LENGTH || token.includes('\0')) return undefined;
  return token;
}
