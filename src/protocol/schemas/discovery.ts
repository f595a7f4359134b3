/** Discovery: the protocol document, providers with their health and model catalog, and liveness. */
import { Type, type Static } from '@sinclair/typebox';
import { MediaType, Timestamp } from './common.js';
import { open } from './shape.js';

export const ProtocolInfo = Type.Object(
  {
    protocol: Type.Literal('agenticdriver'),
    version: Type.Literal('1.0'),
    supportedVersions: Type.Array(Type.String({ minLength: 1 }), { contains: Type.Literal('1.0') }),
    features: Type.Array(Type.String()),
  },
  { ...open, $id: 'ProtocolInfo' },
);

export const ProviderHealth = Type.Object(
  {
    status: Type.Union(['ready', 'unauthenticated', 'unavailable', 'unsupported', 'unknown'].map((s) => Type.Literal(s))),
    code: Type.String({ minLength: 1 }),
    message: Type.String(),
    checkedAt: Timestamp,
  },
  { ...open, $id: 'ProviderHealth' },
);

export const ModelCatalog = Type.Object(
  {
    source: Type.Union([Type.Literal('provider'), Type.Literal('configured'), Type.Literal('unavailable')]),
    models: Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000 }),
    complete: Type.Boolean(),
  },
  { ...open, $id: 'ModelCatalog' },
);

export const Capabilities = Type.Object(
  { tools: Type.Boolean(), textStreaming: Type.Boolean() },
  { additionalProperties: Type.Boolean(), $id: 'Capabilities' },
);

export const Provider = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    name: Type.String(),
    vendor: Type.String({ minLength: 1 }),
    authMode: Type.Union([Type.Literal('api-key'), Type.Literal('cli-session'), Type.Literal('none')]),
    capabilities: Type.Ref(Capabilities),
    models: Type.Optional(Type.Array(Type.String())),
    usageStatId: Type.Optional(Type.String()),
    inputMediaTypes: Type.Optional(Type.Record(Type.String(), Type.Array(MediaType, { maxItems: 6 }))),
    health: Type.Optional(Type.Ref(ProviderHealth)),
    modelCatalog: Type.Optional(Type.Ref(ModelCatalog)),
  },
  { ...open, $id: 'Provider' },
);

export const ProviderList = Type.Object({ providers: Type.Array(Type.Ref(Provider)) }, { ...open, $id: 'ProviderList' });

export const Health = Type.Object(
  { status: Type.Literal('ok'), protocol: Type.Literal('agenticdriver.v1') },
  { ...open, $id: 'Health' },
);

export type ProtocolInfo = Static<typeof ProtocolInfo>;
export type Provider = Static<typeof Provider>;
export type ProviderHealth = Static<typeof ProviderHealth>;
export type ModelCatalog = Static<typeof ModelCatalog>;
export type Capabilities = Static<typeof Capabilities> & Record<string, boolean>;
export type ProviderList = Static<typeof ProviderList>;
