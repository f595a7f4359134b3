/** The runtime's part of the config: the configured provider instances, the limits, and what code gives it. */
import { DriverError } from '../protocol/errors.js';
import { providerKind } from '../providers/kinds.js';
import type { ProviderAdapter } from '../providers/contract/v1.js';
import type { DriverOptions } from '../runtime/driver.js';
import { readSecret } from '../shared/secrets.js';
import type { RunServiceOptions } from '../http/extension.js';
import type { HostConfig, ProviderEntry } from './config.js';
import type { HostOptions } from './options.js';
import type { InternalErrorLog } from './server.js';

export function createProvider(entry: ProviderEntry, config: Pick<HostConfig, 'configDir'>, env: NodeJS.ProcessEnv): ProviderAdapter {
  const kind = providerKind(entry.kind);
  if (!kind) throw new DriverError('INVALID_CONFIG', `Provider kind ${entry.kind} is not supported.`);
  return kind.create(entry as never, {
    configDir: config.configDir,
    readSecret: (ref) => readSecret(ref, config.configDir, env),
  });
}

export function createProviders(config: HostConfig, env: NodeJS.ProcessEnv): ProviderAdapter[] {
  return config.providers.map((entry) => createProvider(entry, config, env));
}

/** The runtime's options but the run services the extensions offer. */
export function runtimeOptions(options: HostOptions, providers: ProviderAdapter[], logInternalError: InternalErrorLog): Omit<DriverOptions, keyof RunServiceOptions> {
  const { maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts } = options.config.limits;
  return {
    providers,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.approve ? { approve: options.approve } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    limits: { maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts },
    onInternalError: (error, runId) => logInternalError(error, `run ${runId}`),
  };
}
