/**
 * The operator console (`GET /console`, config section `console`): the built page, served outside
 * the host's token authentication under a strict Content-Security-Policy, to loopback peers
 * unless `allowRemote`. The page holds no data: it asks the operator for a token and calls the
 * operator endpoints, from the host's own origin.
 */
import { Type } from '@sinclair/typebox';
import { defineExtension } from '../../http/extension.js';
import { CONSOLE_CSP, CONSOLE_PATH, ConsoleAssets, defaultConsoleDirectory, isConsoleOrigin } from './assets.js';

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

export const ConsoleConfig = Type.Object(
  {
    enabled: Type.Boolean(),
    /** Serve the page to clients off loopback too (default false: loopback clients only). */
    allowRemote: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const consoleExtension = defineExtension({
  id: 'console',
  features: [],
  configSchema: ConsoleConfig,
  readConfig: (config) => (config.enabled ? config : undefined),
  async create({ config, host, options }) {
    const assets = await ConsoleAssets.load(options.consoleDirectory ?? defaultConsoleDirectory(), config.allowRemote === true);
    return {
      services: { console: { path: CONSOLE_PATH } },
      ownsOrigin: (origin, hostHeader) => isConsoleOrigin(origin, hostHeader, host.listen.tls !== undefined, host.listen.host),
      publicRoutes: async (app) => {
        for (const url of assets.paths) {
          app.route({
            method: 'GET',
            url,
            handler: async (request, reply) => {
              const { type, body } = assets.file(request.url, request.socket.remoteAddress);
              return reply.type(type).header('Content-Security-Policy', CONSOLE_CSP).header('Referrer-Policy', 'no-referrer').header('X-Frame-Options', 'DENY').send(body);
            },
          });
        }
      },
    };
  },
});
