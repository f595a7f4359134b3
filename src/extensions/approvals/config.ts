/** The `approvals` section of the host config. */
import { Type, type Static } from '@sinclair/typebox';

export const ApprovalsConfig = Type.Object(
  {
    interactive: Type.Literal(true),
    allowIdlePause: Type.Optional(Type.Boolean()),
    maxPending: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false },
);
export type ApprovalsConfig = Static<typeof ApprovalsConfig>;
