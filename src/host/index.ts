/**
 * The standalone host: config -> store -> the extensions of `EXTENSIONS` and the runtime ->
 * HTTP(S) listener. Everything an extension brings — its config section, grants, features,
 * routes, services and shutdown — comes from the list (src/host/extensions.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { DriverError } from '../protocol/errors.js';
import { systemClock } from '../shared/clock.js';
import { ProviderDiscovery } from '../runtime/discovery.js';
import { openStore } from '../store/open.js';
import { TokenAuthenticator } from '../http/access.js';
import { ActiveRuns } from '../http/active-runs.js';
import { Admission } from '../http/admission.js';
import { advertisedFeatures } from '../http/endpoints.js';
import { logRequest, logRun } from '../http/logging.js';
import { Observers } from '../http/observers.js';
import { DEFAULT_WRITE_STALL_MS, EventStreams } from '../http/sse.js';
import { EXTENSIONS } from '../extensions/index.js';
import { assertListenerSecure, DEFAULT_BODY_BYTES, tokenGrants } from './config.js';
import { enabledExtensions, startExtensions, storeOptionsOf } from './extensions.js';
import { hostUrl } from './host-url.js';
import { runtimeOptions } from './runtime.js';
import { discoveryRoutes } from './routes/discovery.js';
import { runRoutes, type HostMetrics } from './routes/runs.js';
import { DEFAULT_CONCURRENCY, DEFAULT_LEASE_MS, DEFAULT_SHUTDOWN_GRACE_MS, type HostOptions, type RunningHost } from './options.js';
import { buildServer, logToStderr, type Lifecycle } from './server.js';
import { loadTls } from './tls.js';

export { hostUrl, loadTls };
export { parseHostConfig, readHostConfig, resolveConfigPath, type HostConfig } from './config.js';
export type { HostMetrics };
export { DEFAULT_CONCURRENCY, DEFAULT_LEASE_MS, DEFAULT_SHUTDOWN_GRACE_MS, type HostOptions, type RunningHost } from './options.js';

export async function startHost(options: HostOptions): Promise<RunningHost> {
  const { config } = options;
  const extensions = options.extensions ?? EXTENSIONS;
  const logInternalError = options.logInternalError ?? logToStderr;
  const env = options.env ?? process.env;
  const { limits } = config;
  assertListenerSecure(config.listen);
  const authenticator = await TokenAuthenticator.load(config.tokens, config.configDir, tokenGrants(extensions), env);
  const tls = config.listen.tls ? await loadTls(config, env) : undefined;
  const enabled = enabledExtensions(config, extensions);
  const store = options.store ?? (await openStore(config.state, config.configDir, env, storeOptionsOf(enabled)));
  // The store starts first and closes last.
  const lifecycle: Lifecycle[] = [{ close: () => store.close() }];
  const active = new ActiveRuns();
  const observers = new Observers();
  if (options.log) observers.add({ usage: (record) => logRun(options.log!, record) });
  let closing = false;
  const streams = new EventStreams(options.heartbeatMs ?? 15_000, options.writeStallMs ?? limits.writeStallTimeoutMs ?? DEFAULT_WRITE_STALL_MS, () => closing);
  const total = limits.maxConcurrentRuns ?? DEFAULT_CONCURRENCY.total;
  const admission = new Admission({ total, perSubject: limits.maxConcurrentRunsPerSubject ?? DEFAULT_CONCURRENCY.perSubject }, active, () => observers.admissionRejected());
  try {
    // What dead replicas (on SQLite: the previous process, if it crashed) left open is closed now.
    await store.start({
      leaseMs: config.stateLeaseMs ?? DEFAULT_LEASE_MS,
      // This replica's open work was reaped by another: none of it can commit any more.
      onLeaseLost: () => active.abortAll(new DriverError('OPERATION_STORE_ERROR', 'This host replica lost its state-store lease.', { outcome: 'uncertain' })),
      onError: (error) => logInternalError(error, 'state-store lease renewal'),
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const clock = options.clock ?? systemClock;
  const deps = { host: config, options, env, clock, store, observers, streams, logInternalError, activeCalls: () => active.size, principalOf: (tokenId: string) => authenticator.principalOf(tokenId) };
  const { instances, services, offered, driver } = await startExtensions(enabled, deps, runtimeOptions(options, env, logInternalError), lifecycle);
  const features = advertisedFeatures(offered);
  const metrics: HostMetrics = { runs: { completed: 0, failed: 0, cancelled: 0 } };
  const pluginsOf = (pick: (instance: (typeof instances)[number]) => FastifyPluginAsync | undefined) => instances.flatMap((instance) => pick(instance) ?? []);
  const app = buildServer({
    authenticator,
    admission,
    allowedOrigins: config.allowedOrigins,
    ownsOrigin: (origin, hostHeader) => instances.some((instance) => instance.ownsOrigin?.(origin, hostHeader) === true),
    features: new Set(features),
    routes: [discoveryRoutes(driver, new ProviderDiscovery(driver.clock), features), runRoutes({ driver, services, admission, observers, streams, metrics }), ...pluginsOf((instance) => instance.routes)],
    publicRoutes: pluginsOf((instance) => instance.publicRoutes),
    lifecycle,
    drain: async () => {
      active.abortAll(new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true }));
      await active.settled(options.shutdownGraceMs ?? limits.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
    },
    closing: () => closing,
    bodyLimit: limits.maxBodyBytes ?? DEFAULT_BODY_BYTES,
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
  // Work is taken only by a host that is listening (a failed bind claims no queued job).
  for (const instance of instances) instance.start?.();
  const address = app.server.address();
  const url = hostUrl(config.listen.host, typeof address === 'object' && address ? address.port : config.listen.port, tls !== undefined);
  let closed: Promise<void> | undefined;
  return {
    url,
    consoleUrl: services.console ? `${url}${services.console.path}` : undefined,
    driver,
    approvals: services.approvals,
    toolExecutions: services.toolExecutions,
    store,
    metrics,
    usage: services.usage!.pipeline,
    retrieval: services.retrieval,
    // Stop accepting; Fastify's close then stops each extension's work, drains the calls being
    // served (their terminal events leave), closes the connections, and closes what started in reverse.
    close: () =>
      (closed ??= (async () => {
        closing = true;
        app.server.close();
        await app.close();
      })()),
  };
}
