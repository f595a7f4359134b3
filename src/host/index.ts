/**
 * The standalone host: config -> store -> extensions (in the order of `EXTENSIONS`) and the
 * runtime -> HTTP(S) listener. Everything an extension brings — its config section, grants,
 * features, routes, services and shutdown — comes from the list.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { DriverError } from '../protocol/errors.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { readSecret } from '../shared/secrets.js';
import { ProviderDiscovery } from '../runtime/discovery.js';
import { AgenticDriver } from '../runtime/driver.js';
import type { ApproveCallback, HostTool } from '../runtime/tools.js';
import { openStore, type StoreOptions } from '../store/open.js';
import type { StateStore } from '../store/store.js';
import { TokenAuthenticator } from '../http/access.js';
import { ActiveRuns } from '../http/active-runs.js';
import { Admission } from '../http/admission.js';
import { advertisedFeatures } from '../http/endpoints.js';
import type { Extension, ExtensionInstance, ExtensionOptions, HostServices, RunServiceOptions } from '../http/extension.js';
import { logRequest, logRun } from '../http/logging.js';
import { Observers } from '../http/observers.js';
import { DEFAULT_WRITE_STALL_MS, EventStreams } from '../http/sse.js';
import { EXTENSIONS } from '../extensions/index.js';
import type { ApprovalRegistry } from '../extensions/approvals/registry.js';
import type { ToolExecutionRegistry } from '../extensions/application-tools/registry.js';
import type { UsagePipeline } from '../extensions/usage/pipeline.js';
import type { RetrievalService } from '../extensions/retrieval/service.js';
import { assertListenerSecure, DEFAULT_BODY_BYTES, sectionOf, tokenGrants, type HostConfig } from './config.js';
import { hostUrl } from './host-url.js';
import { createProviders } from './providers.js';
import { discoveryRoutes } from './routes/discovery.js';
import { runRoutes, type HostMetrics } from './routes/runs.js';
import { buildServer, logToStderr, type InternalErrorLog, type Lifecycle } from './server.js';

export { hostUrl };
export { parseHostConfig, readHostConfig, resolveConfigPath, type HostConfig } from './config.js';
export type { HostMetrics };

export interface HostOptions extends ExtensionOptions {
  config: HostConfig;
  /** Host tools, registered in code (config never loads code). */
  tools?: HostTool[];
  approve?: ApproveCallback;
  /** State store; default: the one the config's `state` names. */
  store?: StateStore;
  heartbeatMs?: number;
  /** Overrides `limits.writeStallTimeoutMs`. */
  writeStallMs?: number;
  /** Overrides `limits.shutdownGraceMs`. */
  shutdownGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  logger?: boolean;
  clock?: Clock;
  /** Where every internal error (a 500) is reported; default one JSON line on stderr. */
  logInternalError?: InternalErrorLog;
  /** The extensions (default `EXTENSIONS`); the config must have been parsed with the same list. */
  extensions?: readonly Extension[];
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
  close(): Promise<void>;
}

export const DEFAULT_CONCURRENCY = { total: 32, perSubject: 4 };
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/** How long a replica's claim on its runs lasts without renewal (renewed every third of it). */
export const DEFAULT_LEASE_MS = 15_000;

export async function startHost(options: HostOptions): Promise<RunningHost> {
  const { config } = options;
  const extensions = options.extensions ?? EXTENSIONS;
  const logInternalError = options.logInternalError ?? logToStderr;
  const env = options.env ?? process.env;
  const clock = options.clock ?? systemClock;
  assertListenerSecure(config.listen);
  const authenticator = await TokenAuthenticator.load(config.tokens, config.configDir, tokenGrants(extensions), env);
  const tls = config.listen.tls ? await loadTls(config, env) : undefined;
  const enabled = extensions.flatMap((extension) => {
    const section = sectionOf(config, extension) ?? extension.defaultConfig;
    const on = extension.enabled ? extension.enabled(config, section) : section !== undefined;
    return on ? [{ extension, section }] : [];
  });
  const storeOptions: StoreOptions = Object.assign({}, ...enabled.map(({ extension, section }) => extension.storeOptions?.(section) ?? {}));
  const store = options.store ?? (await openStore(config.state, config.configDir, env, storeOptions));
  const active = new ActiveRuns();
  const observers = new Observers();
  if (options.log) {
    const log = options.log;
    observers.add({ usage: (record) => logRun(log, record) });
  }
  let closing = false;
  const streams = new EventStreams(options.heartbeatMs ?? 15_000, options.writeStallMs ?? config.limits.writeStallTimeoutMs ?? DEFAULT_WRITE_STALL_MS, () => closing);
  const admission = new Admission(
    { total: config.limits.maxConcurrentRuns ?? DEFAULT_CONCURRENCY.total, perSubject: config.limits.maxConcurrentRunsPerSubject ?? DEFAULT_CONCURRENCY.perSubject },
    active,
    () => observers.admissionRejected(),
  );

  // What started, in order: the store first (closed last), then each extension, and the runtime where it was built.
  const lifecycle: Lifecycle[] = [{ close: () => store.close() }];
  const services: Partial<HostServices> = {};
  const runServices: RunServiceOptions = {};
  const started: { extension: Extension; instance: ExtensionInstance }[] = [];
  let driver: AgenticDriver | undefined;
  const runtime = (): AgenticDriver => {
    if (driver) return driver;
    const { maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts } = config.limits;
    driver = new AgenticDriver({
      providers: createProviders(config, env),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.approve ? { approve: options.approve } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      limits: { maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts },
      onInternalError: (error, runId) => logInternalError(error, `run ${runId}`),
      ...runServices,
    });
    const built = driver;
    lifecycle.push({ close: () => built.close() });
    return driver;
  };
  try {
    // What dead replicas (on SQLite: the previous process, if it crashed) left open is closed now.
    await store.start({
      leaseMs: config.stateLeaseMs ?? DEFAULT_LEASE_MS,
      // This replica's open work was reaped by another: none of it can commit any more.
      onLeaseLost: () => active.abortAll(new DriverError('OPERATION_STORE_ERROR', 'This host replica lost its state-store lease.', { outcome: 'uncertain' })),
      onError: (error) => logInternalError(error, 'state-store lease renewal'),
    });
    for (const { extension, section } of enabled) {
      const instance = await extension.create({
        config: section,
        host: config,
        options,
        env,
        clock,
        store,
        services,
        driver: runtime,
        principalOf: (tokenId) => authenticator.principalOf(tokenId),
        observers,
        streams,
        activeCalls: () => active.size,
        logInternalError,
      });
      if (!instance) continue;
      if (instance.run) {
        if (driver) throw new Error(`Extension ${extension.id} offers run services after the runtime was built: list it before the extensions that use the runtime.`);
        Object.assign(runServices, instance.run);
      }
      Object.assign(services, instance.services);
      if (instance.observe) observers.add(instance.observe);
      started.push({ extension, instance });
      lifecycle.push(instance);
    }
  } catch (error) {
    for (const part of [...lifecycle].reverse()) await part.close?.().catch(() => undefined);
    throw error;
  }
  const core = runtime();
  const instances = started.map(({ instance }) => instance);
  // Each started extension offers its declared features, unless it narrowed them.
  const features = advertisedFeatures(started.flatMap(({ extension, instance }) => instance.features ?? extension.features));
  const metrics: HostMetrics = { runs: { completed: 0, failed: 0, cancelled: 0 } };
  const app = buildServer({
    authenticator,
    admission,
    allowedOrigins: config.allowedOrigins,
    ownsOrigin: (origin, hostHeader) => instances.some((instance) => instance.ownsOrigin?.(origin, hostHeader) === true),
    features: new Set(features),
    routes: [
      discoveryRoutes(core, new ProviderDiscovery(core.clock), features),
      runRoutes({ driver: core, services, admission, observers, streams, metrics }),
      ...instances.flatMap((instance): FastifyPluginAsync[] => (instance.routes ? [instance.routes] : [])),
    ],
    publicRoutes: instances.flatMap((instance): FastifyPluginAsync[] => (instance.publicRoutes ? [instance.publicRoutes] : [])),
    lifecycle,
    drain: async () => {
      active.abortAll(new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true }));
      await active.settled(options.shutdownGraceMs ?? config.limits.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
    },
    closing: () => closing,
    bodyLimit: config.limits.maxBodyBytes ?? DEFAULT_BODY_BYTES,
    ...(tls ? { tls } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    logInternalError,
    ...(options.log ? { logRequest: (line: Parameters<typeof logRequest>[1]) => logRequest(options.log!, line) } : {}),
  });
  try {
    await app.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    await app.close().catch(() => undefined);
    throw new DriverError('LISTEN_FAILED', `Could not listen on ${config.listen.host}:${config.listen.port}: ${(error as Error).message}`);
  }
  for (const instance of instances) instance.start?.();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.listen.port;
  let closed: Promise<void> | undefined;
  const url = hostUrl(config.listen.host, port, tls !== undefined);
  return {
    url,
    consoleUrl: services.console ? `${url}${services.console.path}` : undefined,
    driver: core,
    approvals: services.approvals,
    toolExecutions: services.toolExecutions,
    store,
    metrics,
    usage: services.usage!.pipeline,
    retrieval: services.retrieval,
    close: () =>
      (closed ??= (async () => {
        // Stop accepting, let each extension stop taking work, end every call with its terminal
        // event and let the answers leave, then close what is left in the reverse order of start
        // (connections still stuck after the grace period included).
        closing = true;
        app.server.close();
        await app.close();
      })()),
  };
}

/** The certificate (a file) and its private key (a secret reference) of `listen.tls`. */
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
