/** The standalone host: config -> runtime + store + auth -> HTTP(S) listener. */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { DriverError } from '../protocol/errors.js';
import { isoTimestamp, systemClock, type Clock } from '../shared/clock.js';
import { ProviderDiscovery } from '../runtime/discovery.js';
import { AgenticDriver } from '../runtime/driver.js';
import { ApprovalRegistry } from '../extensions/approvals.js';
import { ToolExecutionRegistry } from '../extensions/application-tools.js';
import { UsagePipeline } from '../extensions/usage/pipeline.js';
import { logSinkFailureToStderr, type SinkLog } from '../extensions/usage/sink.js';
import type { ApproveCallback, HostTool } from '../runtime/tools.js';
import type { UsageRecord } from '../runtime/usage-record.js';
import { JobService } from '../extensions/jobs.js';
import { OperationLog } from '../extensions/operations.js';
import { SessionService } from '../extensions/sessions.js';
import { RetrievalService } from '../extensions/retrieval/service.js';
import type { SourceAuthorizer } from '../extensions/retrieval/types.js';
import { ingestionPolicy, prepareValidDocument } from '../extensions/retrieval/ingestion/index.js';
import { createEmbeddingAdapter } from '../providers/embeddings/index.js';
import { openStore } from '../store/open.js';
import { DEFAULT_RETRIEVAL_CAPACITY, type RetrievalCapacity } from '../store/sql/retrieval-table.js';
import type { RetrievalIndexStore, StateStore } from '../store/store.js';
import { ActiveRuns } from './active-runs.js';
import { RunMonitor } from './run-monitor.js';
import { CONSOLE_PATH, ConsoleAssets, defaultConsoleDirectory } from './console.js';
import { Admission } from './admission.js';
import { TokenAuthenticator } from './auth.js';
import { assertListenerSecure, DEFAULT_BODY_BYTES, type HostConfig } from './config.js';
import type { HostContext, HostMetrics } from './context.js';
import { hostFeatures } from './routes/table.js';
import { createProvider } from './providers.js';
import { ConfigReloader, type ReloadResult } from './reload.js';
import { canonicalJson } from '../shared/json-identity.js';
import type { ProviderAdapter } from '../providers/spec/v1.js';
import { readSecret } from '../shared/secrets.js';
import { buildServer, logToStderr, type InternalErrorLog } from './server.js';
import { DEFAULT_WRITE_STALL_MS } from './sse.js';
import { PrometheusMetrics } from './metrics.js';
import { HostTracing } from './tracing.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { logRequest, logRun, logSinkFailure, type HostLogger } from './logging.js';
import { hostUrl } from './host-url.js';
import { claimLocalState, type LocalState } from './local-state.js';
export { hostUrl };

export { parseHostConfig, readHostConfig, resolveConfigPath, type HostConfig } from './config.js';

export interface HostOptions {
  config: HostConfig;
  /** Host tools, registered in code (config never loads code). */
  tools?: HostTool[];
  approve?: ApproveCallback;
  /** State store; default: the one the config's `state` names. */
  store?: StateStore;
  /** Extra metering sink, called in the background once the store has the record (it never holds up a run). */
  onUsage?: (record: UsageRecord) => void | Promise<void>;
  /** Where usage-sink failures are logged (`USAGESTAT_ERROR` / `USAGESTAT_SCHEMA`); default one JSON line on stderr. */
  logUsageSinkFailure?: SinkLog;
  heartbeatMs?: number;
  /** Overrides `limits.writeStallTimeoutMs`. */
  writeStallMs?: number;
  /** Overrides `limits.shutdownGraceMs`. */
  shutdownGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  logger?: boolean;
  /** Where spans go when the config enables `tracing` (default: OTLP/HTTP to `tracing.endpoint`); tests pass an in-memory exporter. */
  spanExporter?: SpanExporter;
  /** Structured logs: one line per request and per run, and usage sink failures (see src/host/logging.ts). */
  log?: HostLogger;
  clock?: Clock;
  /** Where every internal error (a 500) is reported; default one JSON line on stderr. */
  logInternalError?: InternalErrorLog;
  /** The built console's folder (default: dist/console of this package). */
  consoleDirectory?: string;
  /** Which sources of a configured corpus a subject may see (default: the corpus's config namespace). */
  authorizeRetrieval?: SourceAuthorizer;
}

export interface RunningHost {
  url: string;
  /** The operator console page, when `console` is enabled. */
  consoleUrl: string | undefined;
  driver: AgenticDriver;
  /** Present when the config enables interactive approvals. */
  approvals: ApprovalRegistry | undefined;
  /** Present when the config enables application tools. */
  toolExecutions: ToolExecutionRegistry | undefined;
  store: StateStore;
  metrics: HostMetrics;
  /** The usage sinks (callback, file, webhook) and their health. */
  usage: UsagePipeline;
  /** Scoped retrieval, when the config names corpora. */
  retrieval: RetrievalService | undefined;
  /**
   * Applies a new config without a restart, all or nothing (see ./reload.ts): tokens,
   * providers and limits (except `maxBodyBytes`); a config that changes anything else is refused.
   */
  reload(config: HostConfig): Promise<ReloadResult>;
  close(): Promise<void>;
}

export const DEFAULT_CONCURRENCY = { total: 32, perSubject: 4 };
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/** How long a replica's claim on its runs lasts without renewal (renewed every third of it). */
export const DEFAULT_LEASE_MS = 15_000;

export async function startHost(options: HostOptions): Promise<RunningHost> {
  const { config } = options;
  const logInternalError = options.logInternalError ?? logToStderr;
  const env = options.env ?? process.env;
  const clock = options.clock ?? systemClock;
  assertListenerSecure(config.listen);
  const authenticator = await TokenAuthenticator.load(config.tokens, config.configDir, env);
  const tls = config.listen.tls ? await loadTls(config, env) : undefined;
  const consoleAssets = config.console ? await ConsoleAssets.load(options.consoleDirectory ?? defaultConsoleDirectory(), config.console.allowRemote === true) : undefined;
  // Start-up order: own the local state (or refuse while another live host does), build
  // everything, bind the port, and only then reap, reconcile and take jobs — so that a host
  // that cannot start (a second `serve`, a port in use) changes nothing of the running one's.
  const local = await claimLocalState(config);
  /** What to undo, newest first, when start-up fails. */
  const undo: (() => Promise<unknown>)[] = [() => local.release()];
  try {
    const store = options.store ?? (await openStore(config.state, config.configDir, env, config.retrieval ? { retrievalCapacity: retrievalCapacity(config) } : {}));
    undo.unshift(() => store.close());
    return await serveOn(options, { config, env, clock, logInternalError, authenticator, tls, consoleAssets, local, store, undo });
  } catch (error) {
    for (const step of undo) await step().catch(() => undefined);
    throw error;
  }
}

interface StartParts {
  config: HostConfig;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  logInternalError: InternalErrorLog;
  authenticator: TokenAuthenticator;
  tls: { cert: string; key: string } | undefined;
  consoleAssets: ConsoleAssets | undefined;
  local: LocalState;
  store: StateStore;
  undo: (() => Promise<unknown>)[];
}

async function serveOn(options: HostOptions, parts: StartParts): Promise<RunningHost> {
  const { config, env, clock, logInternalError, authenticator, tls, consoleAssets, local, store, undo } = parts;
  const active = new ActiveRuns();
  let prometheus: PrometheusMetrics | undefined;
  if (config.metrics) {
    const token = config.metrics.tokenRef ? await readSecret(config.metrics.tokenRef, config.configDir, env) : undefined;
    if (token !== undefined && (token.length < 32 || /[\s\0]/.test(token))) {
      throw new DriverError('INVALID_CONFIG', 'metrics.tokenRef must resolve to one line of at least 32 characters without whitespace.');
    }
    prometheus = new PrometheusMetrics({ token, activeRuns: () => active.size, queuedJobs: config.jobs ? () => store.jobs.queued() : undefined });
  }
  // Usage sinks; nothing is reconciled or sent until the host listens.
  const usage = await UsagePipeline.open({
    usage: config.usage,
    configDir: config.configDir,
    localDirectory: local.directory,
    slot: local.slot,
    env,
    callback: options.onUsage,
    log: (failure) => {
      prometheus?.sinkFailed(failure);
      if (options.logUsageSinkFailure) options.logUsageSinkFailure(failure);
      else if (options.log) logSinkFailure(options.log, failure);
      else logSinkFailureToStderr(failure);
    },
  });
  undo.unshift(() => usage.close());
  if (usage.spool()) prometheus?.watchSpool(() => usage.spool()!);
  const { maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts } = config.limits;
  // One path for every usage record, runs and embedding calls alike: metrics, logs, sinks, store.
  const recordUsage = async (record: UsageRecord) => {
    prometheus?.observeRecord(record);
    if (options.log) logRun(options.log, record);
    try {
      await usage.finished(record).catch(() => undefined);
      await store.recordUsage(record);
    } finally {
      usage.deliverLater(record);
    }
  };
  // Runs and embedding calls carry the same host id.
  const hostId = config.usage?.hostId ?? randomUUID();
  const retrieval = retrievalService(config, store, options, { hostId, ...(config.usage?.labels ? { labels: config.usage.labels } : {}), record: recordUsage }, env);
  const approvals = config.approvals ? new ApprovalRegistry(clock, config.approvals, store) : undefined;
  const toolExecutions = config.applicationTools ? new ToolExecutionRegistry(config.applicationTools, store) : undefined;
  const operations = new OperationLog(store, clock, config.idempotency);
  const adapters = config.providers.map((entry) => createProvider(entry, config, env));
  const driver = new AgenticDriver({
    providers: adapters,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.approve ? { approve: options.approve } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    limits: { maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts },
    ...(approvals ? { approvals } : {}),
    ...(toolExecutions ? { toolExecutions } : {}),
    onInternalError: (error, runId) => logInternalError(error, `run ${runId}`),
    metering: { hostId, ...(config.usage ? { labels: config.usage.labels, prices: config.usage.prices } : {}) },
    onRunStarted: async (record) => {
      await Promise.all([store.recordRunStart(record), usage.runStarted(record)]);
    },
    onUsage: recordUsage,
    ...(retrieval ? { retrieval } : {}),
  });
  undo.unshift(async () => {
    await driver.close();
    await retrieval?.close();
  });
  const tracing = config.tracing ? new HostTracing(config.tracing, options.spanExporter) : undefined;
  if (tracing) undo.unshift(() => tracing.close());
  // The operator endpoints exist when some token has the operator grant.
  const monitor = config.tokens.some((token) => token.operator) ? new RunMonitor() : undefined;
  const jobs = config.jobs
    ? new JobService(store, driver, (tokenId) => authenticator.principalOf(tokenId), config.jobs, (error) => logInternalError(error, 'durable jobs'), (events, prepared, jobId) => {
        const traced = tracing ? tracing.trace(events, { request: prepared.request, vendor: prepared.adapter.info.vendor }) : events;
        return monitor ? monitor.track(traced, { subject: prepared.subject, jobId }) : traced;
      })
    : undefined;
  const sessions = config.sessions ? new SessionService(store, driver, config.sessions) : undefined;
  const metrics: HostMetrics = { runs: { completed: 0, failed: 0, cancelled: 0 } };
  const context: HostContext = {
    driver,
    approvals,
    toolExecutions,
    operations,
    jobs,
    sessions,
    retrieval,
    discovery: new ProviderDiscovery(driver.clock),
    admission: new Admission({
      total: config.limits.maxConcurrentRuns ?? DEFAULT_CONCURRENCY.total,
      perSubject: config.limits.maxConcurrentRunsPerSubject ?? DEFAULT_CONCURRENCY.perSubject,
    }),
    metrics,
    prometheus,
    tracing,
    operator: monitor ? { store, monitor } : undefined,
    features: hostFeatures({ approvals, toolExecutions, operations, jobs, sessions, retrieval, operator: monitor }),
    heartbeatMs: options.heartbeatMs ?? 15_000,
    writeStallMs: options.writeStallMs ?? config.limits.writeStallTimeoutMs ?? DEFAULT_WRITE_STALL_MS,
    active,
    starting: true,
    closing: false,
  };
  const app = buildServer({
    context,
    authenticator,
    allowedOrigins: config.allowedOrigins,
    bodyLimit: config.limits.maxBodyBytes ?? DEFAULT_BODY_BYTES,
    ...(tls ? { tls } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    logInternalError,
    ...(options.log ? { logRequest: (line: Parameters<typeof logRequest>[1]) => logRequest(options.log!, line) } : {}),
    ...(consoleAssets ? { console: { assets: consoleAssets, listenHost: config.listen.host } } : {}),
  });
  const reloader = new ConfigReloader(config, [
    tokensPart(authenticator, monitor !== undefined, env),
    providersPart(driver, config, adapters, env),
    limitsPart(driver, context, options.writeStallMs),
  ]);
  try {
    await app.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    await app.close().catch(() => undefined);
    throw new DriverError('LISTEN_FAILED', `Could not listen on ${config.listen.host}:${config.listen.port}: ${(error as Error).message}`);
  }
  undo.unshift(() => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.listen.port;
  const url = hostUrl(config.listen.host, port, tls !== undefined);
  const consoleUrl = consoleAssets ? `${url}${CONSOLE_PATH}` : undefined;
  await local.listening(url, consoleUrl);
  // Until the end of start-up requests get 503 HOST_STARTING. What dead replicas (on SQLite: the
  // previous process, if it crashed) left open is closed now, in the store and in the sinks.
  await store.start({
    leaseMs: config.stateLeaseMs ?? DEFAULT_LEASE_MS,
    // This replica's open work was reaped by another: none of it can commit any more.
    onLeaseLost: () => active.abortAll(new DriverError('OPERATION_STORE_ERROR', 'This host replica lost its state-store lease.', { outcome: 'uncertain' })),
    onError: (error) => logInternalError(error, 'state-store lease renewal'),
  });
  const at = isoTimestamp(clock);
  await usage.start(at);
  await local.adoptOrphans((directory, slot) => usage.adopt(directory, slot, at));
  const expireOperations = () => {
    void operations.expire().catch((error: unknown) => logInternalError(error, 'operation record retention'));
    void jobs?.expire().catch((error: unknown) => logInternalError(error, 'job retention'));
  };
  expireOperations();
  const shortestRetention = Math.min(operations.retentionMs, config.jobs?.retentionMs ?? Infinity);
  const retentionTimer = setInterval(expireOperations, Math.max(500, Math.min(shortestRetention / 2, 10 * 60 * 1000)));
  retentionTimer.unref();
  // Queued jobs are taken only by a host that is listening (a failed bind claims nothing).
  jobs?.start();
  context.starting = false;
  let closed: Promise<void> | undefined;
  return {
    url,
    consoleUrl,
    driver,
    approvals,
    toolExecutions,
    store,
    metrics,
    usage,
    retrieval,
    reload: (next) => reloader.reload(next),
    close: () =>
      (closed ??= (async () => {
        // Stop accepting, end every run with its terminal event, let the responses leave,
        // then close what is left (connections still stuck after the grace period included).
        context.closing = true;
        app.server.close();
        await jobs?.close();
        context.active.abortAll(new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true }));
        await context.active.settled(options.shutdownGraceMs ?? reloader.current.limits.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
        await app.close();
        await driver.close();
        await retrieval?.close();
        clearInterval(retentionTimer);
        await context.tracing?.close();
        await usage.close();
        await store.close();
        await local.release();
      })()),
  };
}

/**
 * The index capacity from config: the whole, each corpus's share, and each subject's share —
 * by default an equal split between the subjects whose tokens may index, so that no one subject
 * can fill the index for the others.
 */
function retrievalCapacity(config: HostConfig): RetrievalCapacity {
  const settings = config.retrieval;
  const whole = settings?.capacity ? { maxChunks: settings.capacity.maxChunks, maxBytes: settings.capacity.maxBytes } : { ...DEFAULT_RETRIEVAL_CAPACITY };
  const indexers = new Set(config.tokens.filter((token) => (token.retrieval?.index?.length ?? 0) > 0).map((token) => token.subject)).size;
  const perSubject =
    settings?.capacity?.perSubject ??
    (indexers > 1 ? { maxChunks: Math.max(1, Math.floor(whole.maxChunks / indexers)), maxBytes: Math.floor(whole.maxBytes / indexers) } : undefined);
  const perCorpus = Object.fromEntries((settings?.corpora ?? []).flatMap((corpus) => (corpus.capacity ? [[corpus.id, corpus.capacity]] : [])));
  return { ...whole, ...(perSubject ? { perSubject } : {}), ...(Object.keys(perCorpus).length > 0 ? { perCorpus } : {}) };
}

/** Tokens on reload: every token secret is read again (a rotated token file applies too). */
function tokensPart(authenticator: TokenAuthenticator, operatorEndpoints: boolean, env: NodeJS.ProcessEnv) {
  return {
    fields: ['tokens'] as const,
    prepare: async (next: HostConfig) => {
      // The operator endpoints are mounted at start only when some token has the grant.
      if (!operatorEndpoints && next.tokens.some((token) => token.operator)) {
        throw new DriverError('UNSUPPORTED_CONFIGURATION', 'The first token with the operator grant takes effect only at a restart (the operator endpoints are mounted at start); nothing was reloaded.');
      }
      const loaded = await TokenAuthenticator.load(next.tokens, next.configDir, env);
      return { commit: () => authenticator.adopt(loaded) };
    },
  };
}

/** Providers on reload: an unchanged entry keeps its adapter (its pools and warm processes); a changed one gets a new adapter. */
function providersPart(driver: AgenticDriver, config: HostConfig, adapters: ProviderAdapter[], env: NodeJS.ProcessEnv) {
  let running = new Map(config.providers.map((entry, index) => [canonicalJson(entry), adapters[index]!]));
  return {
    fields: ['providers'] as const,
    prepare: async (next: HostConfig) => {
      const created: ProviderAdapter[] = [];
      const discard = async () => {
        await Promise.allSettled(created.map((adapter) => adapter.close?.()));
      };
      const chosen: [string, ProviderAdapter][] = [];
      try {
        for (const entry of next.providers) {
          const key = canonicalJson(entry);
          let adapter = running.get(key);
          if (!adapter) created.push((adapter = createProvider(entry, next, env)));
          chosen.push([key, adapter]);
        }
      } catch (error) {
        await discard();
        throw error;
      }
      return {
        commit: () => {
          driver.replaceProviders(chosen.map(([, adapter]) => adapter));
          running = new Map(chosen);
        },
        discard,
      };
    },
  };
}

/** Limits on reload: what the driver, admission and event streams apply to runs admitted from then on. */
function limitsPart(driver: AgenticDriver, context: HostContext, writeStallOverride: number | undefined) {
  return {
    fields: ['limits'] as const,
    prepare: (next: HostConfig, current: HostConfig) => {
      // Fastify sets its body limit when the server is built.
      if (next.limits.maxBodyBytes !== current.limits.maxBodyBytes) {
        throw new DriverError('UNSUPPORTED_CONFIGURATION', 'limits.maxBodyBytes takes effect only at a restart; nothing was reloaded.');
      }
      const { maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts, maxConcurrentRuns, maxConcurrentRunsPerSubject, writeStallTimeoutMs } = next.limits;
      return {
        commit: () => {
          driver.setLimits({ maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts });
          context.admission.setLimits({ total: maxConcurrentRuns ?? DEFAULT_CONCURRENCY.total, perSubject: maxConcurrentRunsPerSubject ?? DEFAULT_CONCURRENCY.perSubject });
          context.writeStallMs = writeStallOverride ?? writeStallTimeoutMs ?? DEFAULT_WRITE_STALL_MS;
        },
      };
    },
  };
}

/** Scoped retrieval over the store's index, for the corpora the config names. */
function retrievalService(
  config: HostConfig,
  store: StateStore,
  options: HostOptions,
  usage: { hostId: string; labels?: Record<string, string>; record(record: UsageRecord): Promise<void> },
  env: NodeJS.ProcessEnv,
): RetrievalService | undefined {
  const settings = config.retrieval;
  if (!settings) return undefined;
  const index = (store as StateStore & { retrieval?: RetrievalIndexStore }).retrieval;
  // A store without a retrieval index (an in-process one of an application) offers no retrieval.
  if (!index) return undefined;
  const policy = ingestionPolicy({
    ...(settings.chunkBytes !== undefined ? { maxChunkBytes: settings.chunkBytes } : {}),
    ...(settings.ingestion?.timeoutMs !== undefined ? { extractionTimeoutMs: settings.ingestion.timeoutMs } : {}),
    ...(settings.ingestion?.maxDecodedBytes !== undefined ? { maxDecodedBytes: settings.ingestion.maxDecodedBytes } : {}),
  });
  return new RetrievalService({
    // The route has checked the body against the IngestRequest schema.
    prepare: (request, { signal, onProgress, subject }) => prepareValidDocument(request, policy, { signal, onProgress, subject }),
    store: index,
    corpora: settings.corpora.map((corpus) => ({
      id: corpus.id,
      ...(corpus.namespace ? { namespace: corpus.namespace } : {}),
      ...(corpus.embedding ? { embedding: createEmbeddingAdapter(corpus.embedding, { readSecret: (ref) => readSecret(ref, config.configDir, env) }, config.configDir) } : {}),
    })),
    ...(options.authorizeRetrieval ? { authorize: options.authorizeRetrieval } : {}),
    pdf: settings.pdf !== false,
    ...(config.limits.idleTimeoutMs ? { idleTimeoutMs: config.limits.idleTimeoutMs } : {}),
    usage,
  });
}

/** The URL clients use: wildcard binds are reached on loopback; IPv6 literals are bracketed. */
export async function loadTls(config: HostConfig, env: NodeJS.ProcessEnv): Promise<{ cert: string; key: string }> {
  const tls = config.listen.tls!;
  const certPath = isAbsolute(tls.certFile) ? tls.certFile : resolve(config.configDir, tls.certFile);
  let cert: string;
  try {
    cert = await readFile(certPath, 'utf8');
  } catch {
    throw new DriverError('INVALID_TLS', `The TLS certificate ${tls.certFile} could not be read.`);
  }
  const key = await readSecret(tls.keyRef, config.configDir, env);
  if (!key) throw new DriverError('INVALID_TLS', 'The TLS private key is missing or empty.');
  return { cert, key };
}
