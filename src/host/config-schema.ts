/**
 * The host config's schema (TypeBox): the source of `protocol/host-config.schema.json` and of
 * the ahead-of-time validators in protocol/validators/host-config.js (`npm run protocol`).
 * Loading the config (./config.ts) uses those validators, so it never loads this module, the
 * provider kinds or TypeBox.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { OpaqueKey, ProviderId, ToolName } from '../protocol/schemas.js';
import { PROVIDER_KINDS } from '../providers/kinds.js';
import { SecretRef } from '../shared/secret-ref.js';
import { UsageConfig } from '../extensions/usage/config.js';
import { MetricsConfig } from './metrics.js';
import { EmbeddingConfig } from '../providers/embeddings/index.js';
import { TracingConfig } from './tracing.js';
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

// --- Scoped retrieval (docs/retrieval.md) ---------------------------------------------------
const CorpusIds = Type.Array(OpaqueKey, { maxItems: 1000, uniqueItems: true });
const RetrievalGrant = Type.Object({ search: Type.Optional(CorpusIds), index: Type.Optional(CorpusIds), delete: Type.Optional(CorpusIds) }, strict);

/** A bound of the retrieval index: chunks and stored bytes (chunk text + vectors). */
const IndexBound = Type.Object({ maxChunks: Type.Integer({ minimum: 1, maximum: 1_000_000 }), maxBytes: Type.Integer({ minimum: 1024, maximum: 1_073_741_824 }) }, strict);

const RetrievalCorpus = Type.Object(
  {
    id: OpaqueKey,
    /** `shared`: one namespace for every subject (default); `subject`: each subject sees only what it indexed. */
    namespace: Type.Optional(Type.Union([Type.Literal('shared'), Type.Literal('subject')])),
    /** An embedder (a local model or a service): exact cosine fused with BM25 (ranking hybrid). */
    embedding: Type.Optional(EmbeddingConfig),
    /** This corpus's share of the index capacity (default: none but the whole capacity). */
    capacity: Type.Optional(IndexBound),
  },
  strict,
);

const Retrieval = Type.Object(
  {
    corpora: Type.Array(RetrievalCorpus, { minItems: 1, maxItems: 1000 }),
    /** Ingestion chunk size in bytes (default 2048). */
    chunkBytes: Type.Optional(Type.Integer({ minimum: 128, maximum: 16_384 })),
    /**
     * Index capacity across every corpus (default 20,000 chunks / 128 MiB), and what the sources
     * one subject indexed may hold of it (`perSubject`; default: an equal split between the
     * subjects whose tokens may index).
     */
    capacity: Type.Optional(
      Type.Object(
        {
          maxChunks: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
          maxBytes: Type.Integer({ minimum: 1024, maximum: 1_073_741_824 }),
          perSubject: Type.Optional(IndexBound),
        },
        strict,
      ),
    ),
    /** Bounds of document extraction (see docs/ingestion.md). */
    ingestion: Type.Optional(
      Type.Object(
        {
          /** Time one document's extraction may take in its worker thread (default 60,000 ms). */
          timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
          /** Bytes a PDF's streams may decode to, all together (default 128 MiB). */
          maxDecodedBytes: Type.Optional(Type.Integer({ minimum: 1_048_576, maximum: 1_073_741_824 })),
        },
        strict,
      ),
    ),
    /** Whether PDF documents may be ingested (default true). */
    pdf: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type RetrievalConfig = Static<typeof Retrieval>;
// ---------------------------------------------------------------------------------------------

export const Token = Type.Object(
  {
    id: ProviderId,
    subject: Type.String({ minLength: 1, maxLength: 128 }),
    tokenRef: SecretRef,
    providers: Type.Array(ProviderId, { maxItems: 32, uniqueItems: true }),
    tools: Type.Optional(Type.Array(ToolName, { maxItems: 32, uniqueItems: true })),
    approveTools: Type.Optional(Type.Array(ToolName, { maxItems: 32, uniqueItems: true })),
    applicationTools: Type.Optional(
      Type.Array(Type.Object({ name: ToolName, requiresApproval: Type.Optional(Type.Boolean()) }, strict), { maxItems: 32 }),
    ),
    /** Conversation-session operations this token may use. */
    sessions: Type.Optional(
      Type.Array(Type.Union([Type.Literal('create'), Type.Literal('read'), Type.Literal('continue'), Type.Literal('delete')]), { maxItems: 4, uniqueItems: true }),
    ),
    /** Durable-job operations this token may use. */
    jobs: Type.Optional(Type.Array(Type.Union([Type.Literal('submit'), Type.Literal('read'), Type.Literal('cancel')]), { maxItems: 3, uniqueItems: true })),
    /** Retrieval corpora this token may search, index (and ingest into) and delete from; omitted = none. */
    retrieval: Type.Optional(RetrievalGrant),
    /** The operator grant: the `/v1/operator/...` endpoints (every subject's runs, approvals, jobs, usage and audit). */
    operator: Type.Optional(Type.Boolean()),
  },
  strict,
);

/** The operator console page (`GET /console`), served from the package's built files. */
const Console = Type.Object(
  {
    enabled: Type.Boolean(),
    /** Serve the page to clients off loopback too (default false: loopback clients only). */
    allowRemote: Type.Optional(Type.Boolean()),
  },
  strict,
);

const Sessions = Type.Object(
  {
    /** Idle time after which a session is gone (a running turn never counts). */
    retentionMs: Type.Integer({ minimum: 1000, maximum: 2_147_483_647 }),
    maxEntries: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxMessages: Type.Optional(Type.Integer({ minimum: 2, maximum: 100 })),
  },
  strict,
);

const Jobs = Type.Object(
  {
    /** How long a finished job's events are kept; its row stays as a tombstone (JOB_EXPIRED). */
    retentionMs: Type.Integer({ minimum: 1000, maximum: 31_536_000_000 }),
    /** Jobs one replica runs at once (default 4). */
    workers: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    maxJobs: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxJobsPerSubject: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxJobBytes: Type.Optional(Type.Integer({ minimum: 16_384, maximum: 64_000_000 })),
    pollIntervalMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000 })),
  },
  strict,
);

const Approvals = Type.Object(
  {
    interactive: Type.Literal(true),
    allowIdlePause: Type.Optional(Type.Boolean()),
    maxPending: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  strict,
);

const ApplicationTools = Type.Object(
  {
    enabled: Type.Literal(true),
    requireApproval: Type.Optional(Type.Boolean()),
    maxPending: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
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
  },
  strict,
);

const Idempotency = Type.Object(
  {
    /** Largest operation record, in bytes of event JSON (default 8,000,000). */
    maxRecordBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1_000_000_000 })),
    /** How long finished operation records are kept (default 24 hours). */
    retentionMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 31_536_000_000 })),
  },
  strict,
);

/** How long a replica's claim on its runs lasts without renewal (default 15 s). */
const LeaseMs = Type.Integer({ minimum: 300, maximum: 3_600_000 });

const SqliteState = Type.Object(
  {
    engine: Type.Optional(Type.Literal('sqlite')),
    /** Relative to the config file's folder; default `state`. */
    directory: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    leaseMs: Type.Optional(LeaseMs),
  },
  strict,
);

/** Several replicas share one PostgreSQL database; the URL (with its password) is a secret. */
const PostgresState = Type.Object({ engine: Type.Literal('postgres'), urlRef: SecretRef, leaseMs: Type.Optional(LeaseMs) }, strict);

export function hostConfigSchema() {
  const providerEntries: TSchema[] = PROVIDER_KINDS.map((kind) => kind.configSchema);
  return Type.Object(
    {
      $schema: Type.Optional(Type.String()),
      version: Type.Literal(1),
      listen: Type.Optional(Listen),
      providers: Type.Array(Type.Union(providerEntries), { minItems: 1, maxItems: 32 }),
      tokens: Type.Array(Token, { minItems: 1, maxItems: 100 }),
      allowedOrigins: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 100 })),
      limits: Type.Optional(Limits),
      approvals: Type.Optional(Approvals),
      applicationTools: Type.Optional(ApplicationTools),
      state: Type.Optional(Type.Union([SqliteState, PostgresState])),
      idempotency: Type.Optional(Idempotency),
      jobs: Type.Optional(Jobs),
      sessions: Type.Optional(Sessions),
      usage: Type.Optional(UsageConfig),
      metrics: Type.Optional(MetricsConfig),
      tracing: Type.Optional(TracingConfig),
      retrieval: Type.Optional(Retrieval),
      console: Type.Optional(Console),
    },
    { ...strict, $id: 'https://agenticdriver.dev/schemas/host-config.json', title: 'agenticdriver host configuration' },
  );
}

/** The whole config, and the parts `parseHostConfig` checks on their own for a clearer message. */
export const HOST_CONFIG_PARTS = { hostConfig: hostConfigSchema(), sqliteState: SqliteState, postgresState: PostgresState };

/** Each provider kind's strict entry schema, by kind. */
export const PROVIDER_ENTRY_SCHEMAS: Record<string, TSchema> = Object.fromEntries(PROVIDER_KINDS.map((kind) => [kind.kind, kind.configSchema]));

export type TokenEntry = Static<typeof Token>;
export type HostLimits = Static<typeof Limits>;
export type ListenConfig = Static<typeof Listen>;
export type ConsoleConfig = Static<typeof Console>;
export type SessionsConfig = Static<typeof Sessions>;
export type JobsConfig = Static<typeof Jobs>;
export type ApprovalsConfig = Static<typeof Approvals>;
export type ApplicationToolsConfig = Static<typeof ApplicationTools>;
export type IdempotencyConfig = Static<typeof Idempotency>;
export type SqliteStateConfig = Static<typeof SqliteState>;
export type PostgresStateConfig = Static<typeof PostgresState>;
