/** The `applicationTools` section of the host config. */
import { Type, type Static } from '@sinclair/typebox';

export const ApplicationToolsConfig = Type.Object(
  {
    enabled: Type.Literal(true),
    requireApproval: Type.Optional(Type.Boolean()),
    maxPending: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false },
);
export type ApplicationToolsConfig = Static<typeof ApplicationToolsConfig>;
