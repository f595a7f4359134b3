/**
 * Provider discovery: advisory health and model catalogs from each adapter's read-only
 * probe. Results are cached per instance, concurrent readers share one probe, a forced
 * refresh is rate-limited, and every probe is bounded in time.
 */
import { DriverError } from '../protocol/errors.js';
import { isoTimestamp, type Clock } from '../shared/clock.js';
import { boundedHealthCode, boundedMessage } from './provider-errors.js';
import type { ProviderAdapter, ProviderInspection } from '../providers/spec/v1.js';

export interface DiscoveryOptions {
  cacheTtlMs?: number;
  probeTimeoutMs?: number;
  minRefreshMs?: number;
}

interface CacheEntry {
  at: number;
  inspection: Promise<ProviderInspection>;
}

const HEALTH_BY_CODE: Record<string, ProviderInspection['health']['status']> = {
  AUTH_REQUIRED: 'unauthenticated',
  PROVIDER_AUTH: 'unauthenticated',
  CLI_AUTH_REQUIRED: 'unauthenticated',
};

export class ProviderDiscovery {
  /** By adapter object, so an instance replaced by a config reload is probed afresh. */
  private readonly cache = new WeakMap<ProviderAdapter, CacheEntry>();
  private readonly ttl: number;
  private readonly timeout: number;
  private readonly minRefresh: number;

  constructor(
    private readonly clock: Clock,
    options: DiscoveryOptions = {},
  ) {
    this.ttl = options.cacheTtlMs ?? 30_000;
    this.timeout = options.probeTimeoutMs ?? 5_000;
    this.minRefresh = options.minRefreshMs ?? 1_000;
  }

  inspect(adapter: ProviderAdapter, refresh: boolean): Promise<ProviderInspection> {
    const now = this.clock.now();
    const cached = this.cache.get(adapter);
    const age = cached ? now - cached.at : Infinity;
    if (cached && (refresh ? age < this.minRefresh : age < this.ttl)) return cached.inspection;
    const inspection = this.probe(adapter);
    this.cache.set(adapter, { at: now, inspection });
    return inspection;
  }

  private async probe(adapter: ProviderAdapter): Promise<ProviderInspection> {
    if (!adapter.inspect) {
      return { health: { status: 'unsupported', code: 'DISCOVERY_UNSUPPORTED', message: 'This provider has no discovery probe.', checkedAt: isoTimestamp(this.clock) } };
    }
    const signal = AbortSignal.timeout(this.timeout);
    try {
      const inspection = await adapter.inspect(signal);
      const { health } = inspection;
      return { ...inspection, health: { ...health, code: boundedHealthCode(health.code, 'DISCOVERY_FAILED'), message: boundedMessage(health.message) } };
    } catch (error) {
      const checkedAt = isoTimestamp(this.clock);
      if (signal.aborted) return { health: { status: 'unknown', code: 'DISCOVERY_TIMEOUT', message: 'The discovery probe did not answer in time.', checkedAt } };
      // A probe's own code and message are bounded like a run's (src/runtime/provider-errors.ts).
      const code = error instanceof DriverError ? boundedHealthCode(error.code, 'DISCOVERY_FAILED') : 'DISCOVERY_FAILED';
      const message = error instanceof DriverError ? boundedMessage(error.message) : 'The discovery probe failed.';
      return { health: { status: HEALTH_BY_CODE[code] ?? 'unavailable', code, message, checkedAt } };
    }
  }
}
