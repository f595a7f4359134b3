/** Prometheus metrics, started: the registry, fed by the host's observers, and `GET /metrics`. */
import { DriverError } from '../../protocol/errors.js';
import { readSecret } from '../../shared/secrets.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import type { MetricsConfig } from './config.js';
import { METRICS_PATH, PrometheusMetrics } from './prometheus.js';

export async function create({ config, host, env, activeCalls, governor }: ExtensionDeps<MetricsConfig>): Promise<ExtensionInstance> {
  const token = config.tokenRef ? await readSecret(config.tokenRef, host.configDir, env) : undefined;
  if (token !== undefined && (token.length < 32 || /[\s\0]/.test(token))) {
    throw new DriverError('INVALID_CONFIG', 'metrics.tokenRef must resolve to one line of at least 32 characters without whitespace.');
  }
  const prometheus = new PrometheusMetrics({ token, activeRuns: activeCalls });
  prometheus.watchHostBudgets(() => governor.budgetStatus('host', undefined));
  prometheus.watchProviderBudgets(() => Promise.all(Object.keys(governor.limits.providers ?? {}).map(async (provider) => ({ provider, budgets: await governor.budgetStatus('provider', provider) }))));
  return {
    services: { metrics: prometheus },
    observe: {
      usage: (record) => prometheus.observeRecord(record),
      admissionRejected: () => prometheus.admissionRejected(),
      limitRefused: (code) => prometheus.limitRefused(code),
      streamOpened: () => prometheus.streamOpened(),
      usageSinkFailed: (failure) => prometheus.sinkFailed(failure),
    },
    publicRoutes: async (app) => {
      app.route({
        method: 'GET',
        url: METRICS_PATH,
        // Its own credential, not a host token.
        onRequest: async (request) => prometheus.authorize(request.headers.authorization, request.socket.remoteAddress),
        handler: async (_request, reply) => {
          const { contentType, body } = await prometheus.render();
          return reply.type(contentType).send(body);
        },
      });
    },
  };
}
