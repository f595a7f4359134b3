/** `GET /v1/protocol` and `GET /v1/providers[?refresh=true]`. */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { PROTOCOL_NAME, SUPPORTED_VERSIONS, WIRE_VERSION } from '../../protocol/version.js';
import type { Provider, ProtocolInfo } from '../../protocol/schemas.js';
import { describeProvider, type AgenticDriver } from '../../runtime/driver.js';
import type { ProviderDiscovery } from '../../runtime/discovery.js';
import { routeOf } from '../../http/endpoints.js';

export function discoveryRoutes(driver: AgenticDriver, discovery: ProviderDiscovery, features: readonly string[]): FastifyPluginAsync {
  return async (app) => {
    app.route({
      ...routeOf('getProtocol'),
      handler: async (): Promise<ProtocolInfo> => ({
        protocol: PROTOCOL_NAME,
        version: WIRE_VERSION,
        supportedVersions: [...SUPPORTED_VERSIONS],
        features: [...features],
      }),
    });

    app.route({ ...routeOf('listProviders'), handler: listProviders });

    async function listProviders(request: FastifyRequest): Promise<{ providers: Provider[] }> {
      const refresh = request.url.endsWith('?refresh=true');
      const granted = request.principal.providers;
      const adapters = [...granted].map((id) => driver.provider(id)).filter((adapter) => adapter !== undefined);
      const providers = await Promise.all(
        adapters.map(async (adapter) => {
          const inspection = await discovery.inspect(adapter, refresh);
          const provider = describeProvider(adapter.info);
          provider.health = inspection.health;
          if (inspection.modelCatalog) provider.modelCatalog = inspection.modelCatalog;
          return provider;
        }),
      );
      return { providers };
    }
  };
}
