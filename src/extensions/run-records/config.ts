/** The `runRecords` section of the host config. */
import { Type, type Static } from '@sinclair/typebox';

export const RunRecordsConfig = Type.Object(
  {
    /** How long a finished attached run's record (its state, result and events) is kept (default 24 hours). */
    retentionMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 31_536_000_000 })),
  },
  { additionalProperties: false },
);
export type RunRecordsConfig = Static<typeof RunRecordsConfig>;

export const DEFAULT_RUN_RETENTION_MS = 24 * 60 * 60 * 1000;
