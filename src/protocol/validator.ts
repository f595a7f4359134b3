/**
 * What a wire validator is, and how its first problem reads. Shared by the validators of
 * ./validate.ts (compiled ahead of time into protocol/validators/wire.js) and the smaller set
 * the console's bundle carries in their place (console/src/validators.ts).
 */

/** What the schema checks report: the first problem found (allErrors is off). */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

export interface Validator<T> {
  (value: unknown): value is T;
  /** A short human description of the first problem, or undefined when valid. */
  explain(value: unknown): string | undefined;
}

export function describe(errors: readonly SchemaError[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'is invalid';
  const where = first.instancePath ? first.instancePath : 'value';
  if (first.keyword === 'additionalProperties') {
    return `${where} has an unknown field "${String((first.params as { additionalProperty?: string }).additionalProperty)}"`;
  }
  return `${where} ${first.message ?? 'is invalid'}`;
}
