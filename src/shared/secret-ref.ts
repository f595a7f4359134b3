/** The schema of a secret reference in config files (`env` or a private `file`); reading one is ./secrets.ts. */
import { Type, type Static } from '@sinclair/typebox';

export const SecretRef = Type.Union(
  [
    Type.Object({ env: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' }) }, { additionalProperties: false }),
    Type.Object({ file: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
  ],
);
export type SecretRef = Static<typeof SecretRef>;
