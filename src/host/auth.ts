/**
 * Static bearer tokens. Only SHA-256 digests are kept; lookups compare digests in
 * constant time (spec decision 6). The subject always comes from the token, never the body.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { DriverError } from '../protocol/errors.js';
import type { TokenEntry } from './config.js';
import { readSecret } from '../shared/secrets.js';

export interface Principal {
  tokenId: string;
  subject: string;
  providers: ReadonlySet<string>;
  tools: ReadonlySet<string>;
  approveTools: ReadonlySet<string>;
  applicationTools: ReadonlySet<string>;
  /** Application tools this token may run only after review. */
  applicationToolApprovals: ReadonlySet<string>;
  /** Durable-job operations (`submit`, `read`, `cancel`). */
  jobs: ReadonlySet<string>;
  /** Session operations (`create`, `read`, `continue`, `delete`). */
  sessions: ReadonlySet<string>;
  /** Retrieval corpora per operation (ingest uses `index`). */
  retrieval: { search: ReadonlySet<string>; index: ReadonlySet<string>; delete: ReadonlySet<string> };
  /** The operator grant: the `/v1/operator/...` endpoints. */
  operator: boolean;
}

interface StoredToken {
  digest: Buffer;
  principal: Principal;
}

export const MIN_TOKEN_LENGTH = 32;
export const MAX_TOKEN_LENGTH = 4096;

const digestOf = (token: string) => createHash('sha256').update(token).digest();

export class TokenAuthenticator {
  private constructor(private tokens: StoredToken[]) {}

  /** Takes the tokens of `other` (a config reload): requests authenticated from now on see them. */
  adopt(other: TokenAuthenticator): void {
    this.tokens = other.tokens;
  }

  /** Resolves every token reference once, at start-up. */
  static async load(entries: readonly TokenEntry[], configDir: string, env: NodeJS.ProcessEnv = process.env): Promise<TokenAuthenticator> {
    const stored: StoredToken[] = [];
    for (const entry of entries) {
      const value = await readSecret(entry.tokenRef, configDir, env);
      if (value.length < MIN_TOKEN_LENGTH || value.length > MAX_TOKEN_LENGTH || /[\s\0]/.test(value)) {
        throw new DriverError('AUTH_REQUIRED', `Token ${entry.id} must resolve to one line of ${MIN_TOKEN_LENGTH}-${MAX_TOKEN_LENGTH} characters without whitespace.`);
      }
      const digest = digestOf(value);
      if (stored.some((other) => timingSafeEqual(other.digest, digest))) {
        throw new DriverError('INVALID_CONFIG', `Token ${entry.id} has the same value as another token.`);
      }
      stored.push({
        digest,
        principal: {
          tokenId: entry.id,
          subject: entry.subject,
          providers: new Set(entry.providers),
          tools: new Set(entry.tools ?? []),
          approveTools: new Set(entry.approveTools ?? []),
          applicationTools: new Set((entry.applicationTools ?? []).map((grant) => grant.name)),
          applicationToolApprovals: new Set((entry.applicationTools ?? []).filter((grant) => grant.requiresApproval !== false).map((grant) => grant.name)),
          jobs: new Set(entry.jobs ?? []),
          sessions: new Set(entry.sessions ?? []),
          retrieval: { search: new Set(entry.retrieval?.search ?? []), index: new Set(entry.retrieval?.index ?? []), delete: new Set(entry.retrieval?.delete ?? []) },
          operator: entry.operator === true,
        },
      });
    }
    return new TokenAuthenticator(stored);
  }

  /** The principal of a configured token entry, by its id (a job's submitter at dispatch). */
  principalOf(tokenId: string): Principal | undefined {
    return this.tokens.find((token) => token.principal.tokenId === tokenId)?.principal;
  }

  /** The principal for an `Authorization` header value, or undefined. */
  authenticate(header: string | undefined): Principal | undefined {
    const token = bearerToken(header);
    if (token === undefined) return undefined;
    const digest = digestOf(token);
    let found: Principal | undefined;
    // Compare against every token so timing does not reveal which one matched.
    for (const candidate of this.tokens) {
      if (timingSafeEqual(candidate.digest, digest)) found = candidate.principal;
    }
    return found;
  }
}

/** `Bearer <token>` with a case-insensitive scheme (RFC 7235). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^bearer +(\S+)$/i.exec(header);
  const token = match?.[1];
  if (!token || token.length > MAX_TOKEN_LENGTH || token.includes('\0')) return undefined;
  return token;
}
