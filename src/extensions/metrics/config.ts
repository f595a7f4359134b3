/** The `metrics` section of the host config. */
import { Type, type Static } from '@sinclair/typebox';
import { SecretRef } from '../../shared/secret-ref.js';

export const MetricsConfig = Type.Object(
  {
    enabled: Type.Literal(true),
    /** The scraper's own bearer secret; absent: only loopback peers may scrape. */
    tokenRef: Type.Optional(SecretRef),
  },
  { additionalProperties: false },
);
export type MetricsConfig = Static<typeof MetricsConfig>;
