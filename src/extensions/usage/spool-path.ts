/** Where the webhook spool lives: `usage.webhook.spoolDirectory` (relative to the config) or `<state>/usage-spool`. */
import { isAbsolute, join, resolve } from 'node:path';
import type { UsageConfig } from './config.js';

export function webhookSpoolDirectory(usage: UsageConfig | undefined, configDir: string, stateDirectory: string): string {
  const configured = usage?.webhook?.spoolDirectory;
  if (!configured) return join(stateDirectory, 'usage-spool');
  return isAbsolute(configured) ? configured : resolve(configDir, configured);
}
