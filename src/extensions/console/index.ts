/**
 * The operator console (`GET /console`, config section `console`): the built page, served outside
 * the host's token authentication under a strict Content-Security-Policy, to loopback peers
 * unless `allowRemote`. The page holds no data: it asks the operator for a token and calls the
 * operator endpoints, from the host's own origin.
 */
import { defineExtension } from '../../http/extension.js';
import { ConsoleConfig } from './config.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Where the console page is served. */
    console: { path: string };
  }
  interface ExtensionOptions {
    /** The built console's folder (default: dist/console of this package). */
    consoleDirectory?: string;
  }
}

export const consoleExtension = defineExtension({
  id: 'console',
  features: [],
  configSchema: ConsoleConfig,
  readConfig: (config) => (config.enabled ? config : undefined),
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
