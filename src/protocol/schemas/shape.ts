/** The building blocks every schema file uses (not part of the published contract). */
import { Type } from '@sinclair/typebox';

/** Request objects: unknown fields are rejected. */
export const strict = { additionalProperties: false } as const;
/** Responses and events: unknown fields are tolerated. */
export const open = {} as const;
export const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
export const JsonObject = Type.Record(Type.String(), Type.Unknown());
export const Base64 = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[A-Za-z0-9+/]*={0,2}$' });
