/** The `console` section of the host config. */
import { Type, type Static } from '@sinclair/typebox';

export const ConsoleConfig = Type.Object(
  {
    enabled: Type.Boolean(),
    /** Serve the page to clients off loopback too (default false: loopback clients only). */
    allowRemote: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ConsoleConfig = Static<typeof ConsoleConfig>;
