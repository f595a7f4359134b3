/**
 * The `usage` section of the host config: host identity, operator labels, the price table
 * and the record sinks (a JSONL file, an HTTP webhook). Validated strictly with the rest of
 * the config; `checkUsageConfig` (./config-rules.ts) adds the rules a schema cannot say.
 */
import { Type, type Static } from '@sinclair/typebox';
import { SecretRef } from '../../shared/secret-ref.js';

const strict = { additionalProperties: false } as const;
const Usd = Type.Number({ minimum: 0, maximum: 1_000_000 });

export const UsageFileSinkConfig = Type.Object(
  {
    /** The JSONL file; relative to the config's directory. */
    path: Type.String({ minLength: 1, maxLength: 4096 }),
    /** Rotate when the file would grow past this many bytes (default 10 MB). */
    maxBytes: Type.Optional(Type.Integer({ minimum: 4096, maximum: 1_073_741_824 })),
    /** Rotated files kept beside it (`path.1` newest, default 5). */
    keep: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  strict,
);

export const UsageWebhookSinkConfig = Type.Object(
  {
    /** HTTPS, or HTTP to a loopback address. */
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    /** Sent as `Authorization: Bearer <secret>`. */
    tokenRef: Type.Optional(SecretRef),
    /** Attempts per delivery round before the record waits in the spool for the next round (default 5). */
    maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    /** Per-attempt timeout (default 5,000 ms). */
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
    /** How often the spool is retried while records wait (default 30,000 ms). */
    retryIntervalMs: Type.Optional(Type.Integer({ minimum: 50, maximum: 3_600_000 })),
    /** Where undelivered records wait; relative to the config's directory (default `<state>/usage-spool`). */
    spoolDirectory: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** Records the spool holds at most, waiting and refused together (default 100,000); past it new records are not spooled. */
    maxSpoolRecords: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
    /** Bytes the spool holds at most (default 256 MiB); past it new records are not spooled. */
    maxSpoolBytes: Type.Optional(Type.Integer({ minimum: 65_536, maximum: 68_719_476_736 })),
  },
  strict,
);

export const UsagePrice = Type.Object(
  {
    vendor: Type.String({ minLength: 1, maxLength: 64 }),
    model: Type.String({ minLength: 1, maxLength: 256 }),
    inputUsdPerMTok: Usd,
    outputUsdPerMTok: Usd,
    cachedInputUsdPerMTok: Type.Optional(Usd),
  },
  strict,
);

export const UsageConfig = Type.Object(
  {
    /** Stable id of this host in every record (default: a random id per start). */
    hostId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$' })),
    /** Operator labels copied into every record (at most 32). */
    labels: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9._-]{0,63}$' }), Type.String({ maxLength: 128 }), { maxProperties: 32 }),
    ),
    /** API list prices that win over the built-in table. */
    prices: Type.Optional(Type.Array(UsagePrice, { maxItems: 1000 })),
    file: Type.Optional(UsageFileSinkConfig),
    webhook: Type.Optional(UsageWebhookSinkConfig),
  },
  strict,
);

export type UsageConfig = Static<typeof UsageConfig>;
export type UsageFileSinkConfig = Static<typeof UsageFileSinkConfig>;
export type UsageWebhookSinkConfig = Static<typeof UsageWebhookSinkConfig>;
