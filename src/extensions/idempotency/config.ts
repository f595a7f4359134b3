/** The `idempotency` section of the host config: operation record size and retention. */
import { Type, type Static } from '@sinclair/typebox';

export const IdempotencyConfig = Type.Object(
  {
    /** Largest operation record, in bytes of event JSON (default 8,000,000). */
    maxRecordBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1_000_000_000 })),
    /** How long finished operation records are kept (default 24 hours). */
    retentionMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 31_536_000_000 })),
  },
  { additionalProperties: false },
);
export type IdempotencyConfig = Static<typeof IdempotencyConfig>;
