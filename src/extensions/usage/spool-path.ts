/**
 * Where a host's webhook spool lives: `usage.webhook.spoolDirectory` (relative to the config),
 * else `usage-spool` in the host's local state folder. A PostgreSQL replica (`slot`, e.g.
 * `replica-2`) gets its own subfolder of a configured spool directory, because replicas that
 * share a config share that path.
 */
import { isAbsolute, join, resolve } from 'node:path';
import type { UsageConfig } from './config.js';

export function webhookSpoolDirectory(usage: UsageConfig | undefined, configDir: string, localDirectory: string, slot?: string): string {
  const configured = usage?.webhook?.spoolDirectory;
  if (!configured) return join(localDirectory, 'usage-spool');
  const base = isAbsolute(configured) ? configured : resolve(configDir, configured);
  return slot ? join(base, slot) : base;
}
