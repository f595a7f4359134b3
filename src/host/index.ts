/**
 * The standalone host: config -> local state and store -> the extensions of `EXTENSIONS` and
 * the runtime -> HTTP(S) listener -> reaping, reconciling and taking work. Everything an
 * extension brings — its config section, grants, features, routes, services, start and
 * shutdown — comes from the list (src/host/extensions.ts).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { DriverError } from '../protocol/errors.js';
import { systemClock } from '../shared/clock.js';
import { ProviderDiscovery } from '../runtime/discovery.js';
import { openStore } from '../store/open.js';
import type { StateStore } from '../store/store.js';
import { TokenAuthenticator } from '../http/access.js';
import { ActiveRuns } from '../http/active-runs.js';
import { Admission } from '../http/admission.js';
import { Governor } from '../http/limits/governor.js';
import { advertisedFeatures } from '../http/endpoints.js';
import type { Extension } from '../http/extension.js';
import { logRequest, logRun } from '../http/logging.js';
import { Observers } from '../http/observers.js';
import { runCounter, type HostMetrics } from '../http/run-counter.js';
import { EventStreams } from '../http/sse.js';
import { EXTENSIONS } from '../extensions/index.js';
import { assertListenerSecure, DEFAULT_BODY_BYTES, tokenGrants, type HostConfig } from './config.js';
import { enabledExtensions, startExtensions, storeOptionsOf } from './extensions.js';
import { hostUrl } from './host-url.js';
import { claimLocalState, type LocalState } from './local-state.js';
import { admissionLimits, ConfigReloader, limitsPart, providersPart, tokensPart, writeStallOf } from './reload.js';
import { createProviders, runtimeOptions } from './runtime.js';
import { discoveryRoutes } from './routes/discovery.js';
import { runRoutes } from './routes/runs.js';
import { DEFAULT_LEASE_MS, DEFAULT_SHUTDOWN_GRACE_MS, type HostOptions, type RunningHost } from './options.js';
import { buildServer, logToStderr, type InternalErrorLog, type Lifecycle } from './server.js';
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
  assertListenerSecure(config.listen);
  const authenticator = await TokenAuthenticator.load(config.tokens, config.configDir, tokenGrants(extensions), env);
  const tls = config.listen.tls ? await loadTls(config, env) : undefined;
  // Start-up order: own the local state (or refuse while another live host does), build
  // everything, bind the port, and only then reap, reconcile and take jobs — so that a host
  // that cannot start (a second `serve`, a port in use) changes nothing of the running one's.
  const local = await claimLocalState(config);
  /** What to undo, newest first, when start-up fails. */
  const undo: (() => Promise<unknown>)[] = [() => local.release()];
  try {
    const enabled = enabledExtensions(config, extensions);
    const store = options.store ?? (await openStore(config.state, config.configDir, env, storeOptionsOf(enabled, config), config.stateLeaseMs ?? DEFAULT_LEASE_MS));
    undo.unshift(() => store.close());
    return await serveOn(options, { extensions, env, logInternalError, authenticator, tls, local, store, undo });
  } catch (error) {
    for (const step of undo) await step().catch(() => undefined);
    throw error;
  }
}

interface StartParts {
  extensions: readonly Extension[];
  env: NodeJS.ProcessEnv;
  logInternalError: InternalErrorLog;
  authenticator: TokenAuthenticator;
  tls: { cert: string; key: string } | undefined;
  local: LocalState;
  store: StateStore;
  undo: (() => Promise<unknown>)[];
}

async function serveOn(options: HostOptions, parts: StartParts): Promise<RunningHost> {
  const { config } = options;
  const { extensions, env, logInternalError, authenticator, tls, local, store, undo } = parts;
  const active = new ActiveRuns();
  const observers = new Observers();
  const metrics: HostMetrics = { runs: { completed: 0, failed: 0, cancelled: 0 } };
  observers.add(runCounter(metrics));
  if (options.log) observers.add({ usage: (record) => logRun(options.log!, record) });
  let closing = false;
  // Until reaping and reconciling are done, requests get 503 HOST_STARTING.
  let starting = true;
  const streams = new EventStreams(options.heartbeatMs ?? 15_000, writeStallOf(config.limits, options.writeStallMs), () => closing);
  const admission = new Admission(admissionLimits(config.limits), active, () => observers.admissionRejected());
  const clock = options.clock ?? systemClock;
  const governor = new Governor(store.limits, clock, config.limits, (code) => observers.limitRefused(code));
  const enabled = enabledExtensions(config, extensions);
  const adapters = createProviders(config, env);
  /** What started, in order: stopped in order and closed in reverse by the server's close. */
  const lifecycle: Lifecycle[] = [];
  const deps = { host: config, options, env, clock, store, local, observers, streams, logInternalError, activeCalls: () => active.size, governor, principalOf: (tokenId: string) => authenticator.principalOf(tokenId) };
  // On a failure here, what started is closed in reverse before this throws.
  const { instances, services, offered, driver, runs } = await startExtensions(enabled, deps, runtimeOptions(options, adapters, logInternalError), admission, lifecycle);
  // `limits` follows the config: a reload that configures the first limit (or removes the last) changes the list.
  const features = advertisedFeatures(offered);
  const limitsFeature = () => {
    const at = features.indexOf('limits');
    if (governor.configured && at < 0) features.push('limits');
    if (!governor.configured && at >= 0) features.splice(at, 1);
  };
  limitsFeature();
  const reloader = new ConfigReloader(config, [
    tokensPart(authenticator, extensions, enabled.map(({ extension }) => extension.id), env),
    providersPart(driver, config, adapters, env),
    limitsPart(driver, admission, streams, options.writeStallMs, (limits) => {
      governor.setLimits(limits);
      limitsFeature();
    }),
  ]);
  const pluginsOf = (pick: (instance: (typeof instances)[number]) => FastifyPluginAsync | undefined) => instances.flatMap((instance) => pick(instance) ?? []);
  const app: FastifyInstance = buildServer({
    authenticator,
    admission,
    allowedOrigins: config.allowedOrigins,
    ownsOrigin: (origin, hostHeader) => instances.some((instance) => instance.ownsOrigin?.(origin, hostHeader) === true),
    cors: instances.flatMap((instance) => instance.cors ?? []),
    features: new Set(features),
    routes: [discoveryRoutes(driver, new ProviderDiscovery(driver.clock), features), runRoutes(runs, observers, streams), ...pluginsOf((instance) => instance.routes)],
    publicRoutes: pluginsOf((instance) => instance.publicRoutes),
    lifecycle,
    drain: async () => {
      active.abortAll(new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true }));
      await active.settled(options.shutdownGraceMs ?? reloader.current.limits.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
    },
    closing: () => closing,
    starting: () => starting,
    bodyLimit: config.limits.maxBodyBytes ?? DEFAULT_BODY_BYTES,
    ...(tls ? { tls } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    logInternalError,
    ...(options.log ? { logRequest: (line: Parameters<typeof logRequest>[1]) => logRequest(options.log!, line) } : {}),
  });
  // From here the server's close stops and closes what started (its preClose and onClose hooks).
  undo.unshift(() => app.close());
  try {
    await app.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    throw new DriverError('LISTEN_FAILED', `Could not listen on ${config.listen.host}:${config.listen.port}: ${(error as Error).message}`);
  }
  const address = app.server.address();
  const url = hostUrl(config.listen.host, typeof address === 'object' && address ? address.port : config.listen.port, tls !== undefined);
  const consoleUrl = services.console ? `${url}${services.console.path}` : undefined;
  await local.listening(url, consoleUrl);
  // What dead replicas (on SQLite: the previous process, if it crashed) left open is closed now,
  // in the store and then, as each extension starts, in the sinks; then work is taken.
  await store.start({
    leaseMs: config.stateLeaseMs ?? DEFAULT_LEASE_MS,
    // This replica's open work was reaped by another: none of it can commit any more.
    onLeaseLost: () => active.abortAll(new DriverError('OPERATION_STORE_ERROR', 'This host replica lost its state-store lease.', { outcome: 'uncertain' })),
    onError: (error) => logInternalError(error, 'state-store lease renewal'),
  });
  for (const instance of instances) await instance.start?.();
  starting = false;
  let closed: Promise<void> | undefined;
  return {
    url,
    consoleUrl,
    driver,
    approvals: services.approvals,
    toolExecutions: services.toolExecutions,
    store,
    metrics,
    usage: services.usage!.pipeline,
    retrieval: services.retrieval,
    reload: (next: HostConfig) => reloader.reload(next),
    // Stop accepting; Fastify's close then stops each extension's work, drains the calls being
    // served (their terminal events leave), closes the connections, and closes what started in
    // reverse; the store and the local state go last.
    close: () =>
      (closed ??= (async () => {
        closing = true;
        app.server.close();
        await app.close();
        await store.close();
        await local.release();
      })()),
  };
}
