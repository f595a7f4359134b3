/**
 * What a compiled wire validator is, and how its first problem reads. Shared by the Ajv
 * validators compiled at run time (./validate.ts) and the ones the console's bundle carries
 * precompiled (a page under `script-src 'self'` may not generate code).
 */
import type { ErrorObject } from 'ajv';

export interface Validator<T> {
  (value: unknown): value is T;
  /** A short human description of the first problem, or undefined when valid. */
  explain(value: unknown): string | undefined;
}

export function describe(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'is invalid';
  const where = first.instancePath ? first.instancePath : 'value';
  if (first.keyword === 'additionalProperties') {
    return `${where} has an unknown field "${String((first.params as { additionalProperty?: string }).additionalProperty)}"`;
  }
  return `${where} ${first.message ?? 'is invalid'}`;
}
