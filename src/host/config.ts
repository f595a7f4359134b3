/**
 * Host configuration: versioned JSON, validated strictly, secrets by reference only.
 * `protocol/host-config.schema.json` is generated from `hostConfigSchema()`.
 */
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { DriverError } from '../protocol/errors.js';
import { describe } from '../protocol/validate.js';
import { OpaqueKey, ProviderId, ToolName } from '../protocol/schemas.js';
import { PROVIDER_KINDS } from '../providers/kinds.js';
import { isLoopbackHost, normalizeOrigin } from '../shared/addresses.js';
import { SecretRef } from '../shared/secrets.js';
import { checkUsageConfig, UsageConfig } from '../extensions/usage/config.js';
import { MetricsConfig } from './metrics.js';
import { EmbeddingConfig } from '../providers/embeddings/index.js';
import { checkTracingConfig, TracingConfig } from './tracing.js';

export const DEFAULT_PORT = 7433;
export const DEFAULT_BODY_BYTES = 1_000_000;
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_CONFIG_BYTES = 1_000_000;

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

const Token = Type.Object(
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

const Limits = Type.Object(
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

export interface ProviderEntry {
  kind: string;
  id: string;
  models: string[];
  [field: string]: unknown;
}

export type TokenEntry = Static<typeof Token>;
export type HostLimits = Static<typeof Limits>;

export interface HostConfig {
  version: 1;
  listen: Static<typeof Listen>;
  providers: ProviderEntry[];
  tokens: TokenEntry[];
  allowedOrigins: string[];
  limits: HostLimits;
  approvals: Static<typeof Approvals> | undefined;
  applicationTools: Static<typeof ApplicationTools> | undefined;
  /** Usage identity, labels, prices and record sinks (src/extensions/usage). */
  usage: UsageConfig | undefined;
  /** Prometheus `GET /metrics` (src/host/metrics.ts), when present. */
  metrics: MetricsConfig | undefined;
  /** OpenTelemetry traces (src/host/tracing.ts), when present. */
  tracing: TracingConfig | undefined;
  /** The operator console page, when enabled. */
  console: Static<typeof Console> | undefined;
  /** Where durable state lives: SQLite files in a directory, or a shared PostgreSQL database. */
  state: { engine: 'sqlite'; directory: string } | { engine: 'postgres'; urlRef: SecretRef };
  /** Absolute directory for SQLite state (with PostgreSQL, the default `state` folder). */
  stateDirectory: string;
  stateLeaseMs: number | undefined;
  idempotency: Static<typeof Idempotency>;
  jobs: Static<typeof Jobs> | undefined;
  sessions: Static<typeof Sessions> | undefined;
  /** Scoped retrieval corpora and ingestion settings, when present. */
  retrieval: RetrievalConfig | undefined;
  /** Absolute directory of the config file; relative paths resolve against it. */
  configDir: string;
  configPath: string;
}

const ajv = new Ajv2020({ strict: false, allErrors: false });
const validateConfig = ajv.compile(hostConfigSchema());
const stateValidators = { sqlite: ajv.compile(SqliteState), postgres: ajv.compile(PostgresState) };

function configError(message: string, code = 'INVALID_CONFIG'): DriverError {
  return new DriverError(code, message);
}

/** The config path: `--config`, then `AGENTICDRIVER_CONFIG`, then the per-user default. */
export function resolveConfigPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return resolve(explicit);
  if (env.AGENTICDRIVER_CONFIG) return resolve(env.AGENTICDRIVER_CONFIG);
  if (process.platform === 'win32') return join(env.APPDATA || join(homedir(), 'AppData', 'Roaming'), 'agenticdriver', 'config.json');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'agenticdriver', 'config.json');
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'agenticdriver', 'config.json');
}

export async function readHostConfig(path: string): Promise<HostConfig> {
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw configError(`The config at ${path} is not a regular file.`);
      if (info.size > MAX_CONFIG_BYTES) throw configError(`The config at ${path} is larger than ${MAX_CONFIG_BYTES} bytes.`);
      text = new TextDecoder('utf-8', { fatal: true }).decode(await handle.readFile());
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof DriverError) throw error;
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw configError(missing ? `No config file at ${path}.` : `The config at ${path} could not be read as UTF-8 text.`, missing ? 'CONFIG_NOT_FOUND' : 'INVALID_CONFIG');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw configError(`The config at ${path} is not valid JSON.`);
  }
  return parseHostConfig(raw, path);
}

/** Validates a parsed config object; `path` anchors relative paths. */
export function parseHostConfig(raw: unknown, path: string): HostConfig {
  if (hasProtoKey(raw)) throw configError('The config contains a "__proto__" key.');
  checkState(raw);
  if (!validateConfig(raw)) throw configError(`The config is invalid: ${describe(validateConfig.errors)}.`);
  const input = raw as {
    listen?: HostConfig['listen'];
    providers: ProviderEntry[];
    tokens: TokenEntry[];
    allowedOrigins?: string[];
    limits?: HostLimits;
    approvals?: Static<typeof Approvals>;
    applicationTools?: Static<typeof ApplicationTools>;
    state?: Static<typeof SqliteState> | Static<typeof PostgresState>;
    idempotency?: Static<typeof Idempotency>;
    jobs?: Static<typeof Jobs>;
    sessions?: Static<typeof Sessions>;
    usage?: UsageConfig;
    metrics?: MetricsConfig;
    tracing?: TracingConfig;
    retrieval?: RetrievalConfig;
    console?: Static<typeof Console>;
  };
  const configPath = resolve(path);
  const configDir = dirname(configPath);

  const providerIds = new Set<string>();
  for (const provider of input.providers) {
    if (providerIds.has(provider.id)) throw configError(`Provider id ${provider.id} is used twice.`);
    providerIds.add(provider.id);
  }
  const tokenIds = new Set<string>();
  for (const token of input.tokens) {
    if (tokenIds.has(token.id)) throw configError(`Token id ${token.id} is used twice.`);
    tokenIds.add(token.id);
    for (const provider of token.providers) {
      if (!providerIds.has(provider)) throw configError(`Token ${token.id} grants provider ${provider}, which is not configured.`);
    }
    const applicationToolNames = (token.applicationTools ?? []).map((grant) => grant.name);
    if (new Set(applicationToolNames).size !== applicationToolNames.length) {
      throw configError(`Token ${token.id} grants an application tool twice.`);
    }
  }
  const allowedOrigins = (input.allowedOrigins ?? []).map((entry, index) => {
    const origin = normalizeOrigin(entry);
    if (!origin) throw configError(`allowedOrigins[${index}] is not an origin (scheme://host[:port]).`);
    return origin;
  });
  checkRetrievalConfig(input.retrieval);
  checkUsageConfig(input.usage);
  checkTracingConfig(input.tracing);
  const listen = input.listen ?? { host: '127.0.0.1', port: DEFAULT_PORT };
  assertListenerSecure(listen);
  return {
    version: 1,
    listen,
    providers: input.providers,
    tokens: input.tokens,
    allowedOrigins: [...new Set(allowedOrigins)],
    limits: input.limits ?? {},
    approvals: input.approvals,
    applicationTools: input.applicationTools,
    usage: input.usage,
    metrics: input.metrics,
    tracing: input.tracing,
    console: input.console?.enabled ? input.console : undefined,
    state: stateOf(input.state, configDir),
    stateDirectory: resolve(configDir, (input.state?.engine !== 'postgres' && input.state?.directory) || 'state'),
    stateLeaseMs: input.state?.leaseMs,
    idempotency: input.idempotency ?? {},
    jobs: input.jobs,
    sessions: input.sessions,
    retrieval: input.retrieval,
    configDir,
    configPath,
  };
}

function checkRetrievalConfig(retrieval: RetrievalConfig | undefined): void {
  const ids = new Set<string>();
  for (const corpus of retrieval?.corpora ?? []) {
    if (ids.has(corpus.id)) throw configError(`Retrieval corpus ${corpus.id} is configured twice.`);
    ids.add(corpus.id);
  }
}

function stateOf(state: Static<typeof SqliteState> | Static<typeof PostgresState> | undefined, configDir: string): HostConfig['state'] {
  if (state?.engine === 'postgres') return { engine: 'postgres', urlRef: state.urlRef };
  return { engine: 'sqlite', directory: resolve(configDir, state?.directory ?? 'state') };
}

/**
 * `state` checked against the form its `engine` names, so a mistake reads as one (the union
 * alone would report the first form's complaint, e.g. an unknown field urlRef for sqlite).
 */
function checkState(raw: unknown): void {
  const state = raw !== null && typeof raw === 'object' ? (raw as { state?: unknown }).state : undefined;
  if (state === null || typeof state !== 'object' || Array.isArray(state)) return; // the schema reports it
  const engine = (state as { engine?: unknown }).engine ?? 'sqlite';
  if (engine !== 'sqlite' && engine !== 'postgres') throw configError('The config is invalid: /state/engine must be "sqlite" or "postgres".');
  const validate = stateValidators[engine];
  if (validate(state)) return;
  const first = validate.errors?.[0];
  const errors = first ? [{ ...first, instancePath: `/state${first.instancePath}` }] : null;
  throw configError(`The config is invalid: ${describe(errors)}${engine === 'postgres' ? ' (postgres takes urlRef only: {"env": …} or {"file": …})' : ''}.`);
}

/** A listener off loopback must serve TLS (spec decision 8). */
export function assertListenerSecure(listen: { host: string; tls?: unknown }): void {
  if (!listen.tls && !isLoopbackHost(listen.host)) {
    throw configError(`Listening on ${listen.host} requires TLS; configure listen.tls or bind a loopback address.`, 'TLS_REQUIRED');
  }
}

function hasProtoKey(value: unknown, depth = 0): boolean {
  if (depth > 32 || value === null || typeof value !== 'object') return false;
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return true;
  return Object.values(value).some((child) => hasProtoKey(child, depth + 1));
}
