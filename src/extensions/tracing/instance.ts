/** OpenTelemetry traces, started: the host's tracer, watching every run's events. */
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import type { TracingConfig } from './config.js';
import { HostTracing } from './tracer.js';

export function create({ config, options }: ExtensionDeps<TracingConfig>): ExtensionInstance {
  const tracing = new HostTracing(config, options.spanExporter);
  return {
    observe: { tap: (run) => tracing.tap(run) },
    close: () => tracing.close(),
  };
}
