/** The operator console, started: the built page read from its folder and served under its own headers. */
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { CONSOLE_CSP, CONSOLE_PATH, ConsoleAssets, defaultConsoleDirectory, isConsoleOrigin } from './assets.js';
import type { ConsoleConfig } from './config.js';

export async function create({ config, host, options }: ExtensionDeps<ConsoleConfig>): Promise<ExtensionInstance> {
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
}
