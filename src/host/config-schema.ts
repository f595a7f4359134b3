/**
 * The host config's schema (TypeBox): the core fields here, and each extension's section and
 * token grant fields from a list of extensions, with a given schema of a provider entry. The
 * published schema, with every provider kind's entry, is built from it in ./published-config-schema.ts;
 * loading a config (./config.ts) uses the validators compiled ahead of time from that one, and
 * compiles a schema from here only for another list of extensions. This module loads no
 * provider or extension code.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ProviderId, ToolName } from '../protocol/schemas.js';
import { SecretRef } from '../shared/secret-ref.js';
import type { Extension } from '../http/extension.js';
import { MAX_BODY_BYTES } from './config-constants.js';

const strict = { additionalProperties: false } as const;

const Listen = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 255 }),
    port: Type.Integer({ minimum: 0, maximum: 65_535 }),
    tls: Type.Optional(Type.Object({ certFile: Type.String({ minLength: 1, maxLength: 4096 }), keyRef: SecretRef }, strict)),
  },
  strict,
);

/** A token entry: who it is and what it may use; the extensions add their grant fields. */
const TOKEN_FIELDS = {
  id: ProviderId,
  subject: Type.String({ minLength: 1, maxLength: 128 }),
  tokenRef: SecretRef,
  providers: Type.Array(ProviderId, { maxItems: 32, uniqueItems: true }),
  tools: Type.Optional(Type.Array(ToolName, { maxItems: 32, uniqueItems: true })),
};

/** A budget's period: calendar-aligned in `limits.timeZone`, or rolling over the last `rollingMs`. */
const BudgetPeriod = Type.Union([
  Type.Literal('day'),
  Type.Literal('week'),
  Type.Literal('month'),
  Type.Object({ rollingMs: Type.Integer({ minimum: 60_000, maximum: 31_622_400_000 }) }, strict),
]);

/** What one period may spend: US dollars and/or tokens (input + output); at least one of them. */
const Budget = Type.Object(
  {
    period: BudgetPeriod,
    usd: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000 })),
    tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 })),
  },
  strict,
);

/** Limits of one scope (the host, a subject, a token); every field optional (docs/governance.md). */
const LimitRule = Type.Object(
  {
    requestsPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
    tokensPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 })),
    /** Runs in flight at once, across every replica of the host. */
    concurrentRuns: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    budgets: Type.Optional(Type.Array(Budget, { maxItems: 8 })),
  },
  strict,
);

export const Limits = Type.Object(
  {
    maxSteps: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
    idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
    maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
    maxBodyBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: MAX_BODY_BYTES })),
    maxConcurrentRuns: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxConcurrentRunsPerSubject: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    /** How long an event-stream write may wait for a client that stopped reading (default 30 s). */
    writeStallTimeoutMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
    /** How long shutdown waits for active runs to deliver their terminal events (default 10 s). */
    shutdownGraceMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000 })),
    /** The IANA time zone calendar budget periods follow (default UTC). */
    timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    /** What a subscription CLI run with no reported charge counts: its API-equivalent cost, or nothing (default). */
    cliCost: Type.Optional(Type.Union([Type.Literal('api-equivalent'), Type.Literal('reported')])),
    /** Limits of the whole host (every replica together). */
    host: Type.Optional(LimitRule),
    /** Limits per subject, by subject; `*` applies to each subject not named (each its own counters). */
    subjects: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 128 }), LimitRule, { maxProperties: 1000 })),
    /** Limits per token, by token id. */
    tokens: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 128 }), LimitRule, { maxProperties: 1000 })),
    /** Limits per provider instance, by provider id (every subject's runs on it together). */
    providers: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 128 }), LimitRule, { maxProperties: 1000 })),
  },
  strict,
);

/** How long a replica's claim on its runs lasts without renewal (default 15 s). */
const LeaseMs = Type.Integer({ minimum: 300, maximum: 3_600_000 });

export const SqliteState = Type.Object(
  {
    engine: Type.Optional(Type.Literal('sqlite')),
    /** Relative to the config file's folder; default `state`. */
    directory: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    leaseMs: Type.Optional(LeaseMs),
  },
  strict,
);

/** Several replicas share one PostgreSQL database; the URL (with its password) is a secret. */
export const PostgresState = Type.Object({ engine: Type.Literal('postgres'), urlRef: SecretRef, leaseMs: Type.Optional(LeaseMs) }, strict);

/** The host config's schema: the core fields, then each extension's section, in the list's order. */
export function configSchemaOf(extensions: readonly Extension[], providerEntry: TSchema) {
  const grants = Object.fromEntries(extensions.flatMap((extension) => Object.entries(extension.grants ?? {}).map(([field, grant]) => [field, Type.Optional(grant.schema)])));
  const sections = Object.fromEntries(extensions.flatMap((extension) => (extension.configSchema ? [[extension.id, Type.Optional(extension.configSchema)]] : [])));
  return Type.Object(
    {
      $schema: Type.Optional(Type.String()),
      version: Type.Literal(1),
      listen: Type.Optional(Listen),
      providers: Type.Array(providerEntry, { minItems: 1, maxItems: 32 }),
      tokens: Type.Array(Type.Object({ ...TOKEN_FIELDS, ...grants }, strict), { minItems: 1, maxItems: 100 }),
      allowedOrigins: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 100 })),
      limits: Type.Optional(Limits),
      state: Type.Optional(Type.Union([SqliteState, PostgresState])),
      ...sections,
    },
    { ...strict, $id: 'https://agenticdriver.dev/schemas/host-config.json', title: 'agenticdriver host configuration' },
  );
}

export type HostLimits = Static<typeof Limits>;
export type ListenConfig = Static<typeof Listen>;
export type SqliteStateConfig = Static<typeof SqliteState>;
export type PostgresStateConfig = Static<typeof PostgresState>;
