/** Builds the configured provider instances from their config entries. */
import { DriverError } from '../protocol/errors.js';
import { providerKind } from '../providers/kinds.js';
import type { ProviderAdapter } from '../providers/spec/v1.js';
import type { HostConfig, ProviderEntry } from './config.js';
import { readSecret } from '../shared/secrets.js';

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
