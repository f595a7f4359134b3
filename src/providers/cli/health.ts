/**
 * A CLI's discovery result: its version and sign-in state as advisory health (the version is
 * named in the message, so it reaches `GET /v1/providers`), and its own model catalog where
 * it exposes one, else the configured allowlist.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderInspection } from '../contract/v1.js';
import type { CliStatus } from './probe.js';

const CATALOG_LIMIT = 1000;

export function inspectionFromStatus(product: string, version: string, status: CliStatus, configuredModels: string[]): ProviderInspection {
  const checkedAt = new Date().toISOString();
  const models = status.models === undefined ? undefined : [...new Set(status.models)];
  const health: ProviderInspection['health'] =
    status.signedIn === true
      ? { status: 'ready', code: models ? 'CLI_CATALOG_AVAILABLE' : 'CLI_SESSION_PRESENT', message: `${product} ${version} is installed and signed in.`, checkedAt }
      : status.signedIn === false
        ? { status: 'unauthenticated', code: 'CLI_AUTH_REQUIRED', message: `${product} ${version} is installed but not signed in; sign in with the CLI itself.`, checkedAt }
        : { status: 'unknown', code: 'CLI_STATUS_UNKNOWN', message: `${product} ${version} is installed; it has no way to report its sign-in state without a model call.`, checkedAt };
  const modelCatalog: ProviderInspection['modelCatalog'] = models
    ? { source: 'provider', models: models.slice(0, CATALOG_LIMIT), complete: (status.complete ?? false) && models.length <= CATALOG_LIMIT }
    : configuredModels.length > 0
      ? { source: 'configured', models: configuredModels.slice(0, CATALOG_LIMIT), complete: false }
      : { source: 'unavailable', models: [], complete: false };
  return { health, modelCatalog, version };
}

/** A readiness failure (missing or too-old binary) as health, so discovery still answers. */
export function inspectionFromFailure(error: unknown): ProviderInspection {
  if (!(error instanceof DriverError) || (error.code !== 'CLI_UNAVAILABLE' && error.code !== 'CLI_UPGRADE_REQUIRED')) throw error;
  return { health: { status: error.code === 'CLI_UNAVAILABLE' ? 'unavailable' : 'unsupported', code: error.code, message: error.message, checkedAt: new Date().toISOString() } };
}
