/** The `tracing` section of the host config, and what its schema cannot say. */
import { Type, type Static } from '@sinclair/typebox';
import { DriverError } from '../../protocol/errors.js';
import { isLoopbackHost } from '../../shared/addresses.js';

export const TracingConfig = Type.Object(
  {
    enabled: Type.Literal(true),
    /** OTLP/HTTP traces endpoint (`…/v1/traces`), HTTPS or loopback; default `http://127.0.0.1:4318/v1/traces`. */
    endpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    serviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    /** Adds prompts, tool arguments and results, and output text to spans. Default false. */
    captureContent: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type TracingConfig = Static<typeof TracingConfig>;

export const DEFAULT_OTLP_TRACES = 'http://127.0.0.1:4318/v1/traces';

/** The traces endpoint is HTTPS or loopback, without credentials. */
export function checkTracingConfig(tracing: TracingConfig | undefined): void {
  if (!tracing?.endpoint) return;
  let url: URL;
  try {
    url = new URL(tracing.endpoint);
  } catch {
    throw new DriverError('INVALID_CONFIG', 'tracing.endpoint is not a URL.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new DriverError('INVALID_CONFIG', 'tracing.endpoint must be https, or http to a loopback address.');
  }
  if (url.username || url.password) throw new DriverError('INVALID_CONFIG', 'tracing.endpoint must not carry credentials.');
}
