/**
 * OpenTelemetry traces (config section `tracing`): a span per run, with child spans per
 * retrieval search, model step, tool call and approval wait, built from the run's events as
 * they pass — attached runs and jobs alike.
 */
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { defineExtension } from '../../http/extension.js';
import { checkTracingConfig, TracingConfig } from './config.js';

declare module '../../http/extension.js' {
  interface ExtensionOptions {
    /** Where spans go when the config enables `tracing` (default: OTLP/HTTP to `tracing.endpoint`); tests pass an in-memory exporter. */
    spanExporter?: SpanExporter;
  }
}

export const tracingExtension = defineExtension({
  id: 'tracing',
  features: [],
  configSchema: TracingConfig,
  checkConfig: checkTracingConfig,
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
