/**
 * Prometheus metrics (`GET /metrics`, config section `metrics`): runs, durations, tokens, errors,
 * admission refusals, usage-sink failures, active runs and streams. `/metrics` sits outside the
 * host's token authentication: it answers only its own bearer secret (`metrics.tokenRef`) or,
 * without one, loopback peers.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DriverError } from '../../protocol/errors.js';
import { SecretRef } from '../../shared/secret-ref.js';
import { readSecret } from '../../shared/secrets.js';
import { defineExtension } from '../../http/extension.js';
import { METRICS_PATH, PrometheusMetrics } from './prometheus.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** The registry: an extension adds its own gauges. */
    metrics: Pick<PrometheusMetrics, 'gauge' | 'watchSpool'>;
  }
}

export const MetricsConfig = Type.Object(
  {
    enabled: Type.Literal(true),
    /** The scraper's own bearer secret; absent: only loopback peers may scrape. */
    tokenRef: Type.Optional(SecretRef),
  },
  { additionalProperties: false },
);
export type MetricsConfig = Static<typeof MetricsConfig>;

export const metricsExtension = defineExtension({
  id: 'metrics',
  features: [],
  configSchema: MetricsConfig,
  async create({ config, host, env, activeCalls }) {
    const token = config.tokenRef ? await readSecret(config.tokenRef, host.configDir, env) : undefined;
    if (token !== undefined && (token.length < 32 || /[\s\0]/.test(token))) {
      throw new DriverError('INVALID_CONFIG', 'metrics.tokenRef must resolve to one line of at least 32 characters without whitespace.');
    }
    const prometheus = new PrometheusMetrics({ token, activeRuns: activeCalls });
    return {
      services: { metrics: prometheus },
      observe: {
        usage: (record) => prometheus.observeRecord(record),
        admissionRejected: () => prometheus.admissionRejected(),
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
  },
});
