/**
 * Prometheus metrics (`GET /metrics`, config section `metrics`): runs, durations, tokens, errors,
 * admission refusals, usage-sink failures, active runs and streams. `/metrics` sits outside the
 * host's token authentication: it answers only its own bearer secret (`metrics.tokenRef`) or,
 * without one, loopback peers.
 */
import { defineExtension } from '../../http/extension.js';
import { MetricsConfig } from './config.js';
import type { PrometheusMetrics } from './prometheus.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** The registry: an extension adds its own gauges. */
    metrics: Pick<PrometheusMetrics, 'gauge' | 'watchSpool'>;
  }
}

export const metricsExtension = defineExtension({
  id: 'metrics',
  features: [],
  configSchema: MetricsConfig,
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
