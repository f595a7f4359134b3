/** The usage section's rules a schema cannot say (its schema is ./config.ts); kept apart so loading a config needs no TypeBox. */
import { DriverError } from '../../protocol/errors.js';
import { isLoopbackHost } from '../../shared/addresses.js';
import type { UsageConfig } from './config.js';

/** Rules beyond the schema: the webhook is HTTPS or loopback; a price table names each model once. */
export function checkUsageConfig(usage: UsageConfig | undefined): void {
  if (!usage) return;
  if (usage.webhook) {
    let url: URL;
    try {
      url = new URL(usage.webhook.url);
    } catch {
      throw new DriverError('INVALID_CONFIG', 'usage.webhook.url is not a URL.');
    }
    const loopback = isLoopbackHost(url.hostname.replace(/^\[|\]$/g, ''));
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
      throw new DriverError('INVALID_CONFIG', 'usage.webhook.url must be https, or http to a loopback address.');
    }
    if (url.username || url.password) throw new DriverError('INVALID_CONFIG', 'usage.webhook.url must not carry credentials; use tokenRef.');
  }
  const seen = new Set<string>();
  for (const price of usage.prices ?? []) {
    const key = `${price.vendor}\u0000${price.model}`;
    if (seen.has(key)) throw new DriverError('INVALID_CONFIG', `usage.prices names ${price.vendor} ${price.model} twice.`);
    seen.add(key);
  }
}
