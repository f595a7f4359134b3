/**
 * Validators of the named wire schemas, compiled ahead of time (protocol/validators/wire.js,
 * written by `npm run protocol` from ./schemas.ts with Ajv's standalone code: JSON Schema
 * 2020-12, formats checked). Using one needs neither TypeBox nor Ajv at run time. The module
 * is plain JavaScript in the published protocol/ folder, two levels up from src/ and dist/ alike.
 */
import { BY_EVENT_TYPE, BY_ID, type CompiledValidator } from '../../protocol/validators/wire.js';
import { describe, type Validator } from './validator.js';

export { describe, type SchemaError, type Validator } from './validator.js';

/** The `$id` of a named schema (`NAMED_SCHEMAS` in ./schemas.ts). */
export type SchemaName = keyof typeof BY_ID;

export type { CompiledValidator };
type Compiled = CompiledValidator;

function wrap<T>(validate: Compiled): Validator<T> {
  const check = ((value: unknown) => validate(value)) as Validator<T>;
  check.explain = (value: unknown) => (validate(value) ? undefined : describe(validate.errors));
  return check;
}

/** The validator of a named schema, by name or by the schema object itself (its `$id`). */
export function validatorFor<T>(schema: SchemaName | { $id?: string }): Validator<T> {
  const name = typeof schema === 'string' ? schema : schema.$id;
  const validate = name === undefined ? undefined : (BY_ID as Record<string, Compiled>)[name];
  if (!validate) throw new Error(`No compiled validator for schema ${name ?? '(unnamed)'}: name it in NAMED_SCHEMAS and run \`npm run protocol\`.`);
  return wrap<T>(validate);
}

const eventValidators = new Map<string, Validator<unknown>>(Object.entries(BY_EVENT_TYPE as Record<string, Compiled>).map(([type, validate]) => [type, wrap(validate)]));

/** The payload validator of a known event type, or undefined for an unfamiliar type. */
export function eventValidator(type: string): Validator<unknown> | undefined {
  return eventValidators.get(type);
}
