/** The `sessions` section of the host config. */
import { Type, type Static } from '@sinclair/typebox';

export const SessionsConfig = Type.Object(
  {
    /** Idle time after which a session is gone (a running turn never counts). */
    retentionMs: Type.Integer({ minimum: 1000, maximum: 2_147_483_647 }),
    maxEntries: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxMessages: Type.Optional(Type.Integer({ minimum: 2, maximum: 100 })),
  },
  { additionalProperties: false },
);
export type SessionsConfig = Static<typeof SessionsConfig>;
