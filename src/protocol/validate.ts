/**
 * Runtime validators compiled from the wire schemas. One Ajv instance (JSON Schema
 * 2020-12) holds every named schema so `$ref`s resolve by id.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { NAMED_SCHEMAS, EVENT_SCHEMAS, type EventType } from './schemas.js';
import { describe, type Validator } from './validator.js';

export { describe, type Validator } from './validator.js';

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
type AddFormats = (ajv: Ajv2020) => unknown;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

const ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: true });
addFormats(ajv);
for (const schema of NAMED_SCHEMAS) ajv.addSchema(schema as object);

/** Compiled on first use: a process (e.g. one CLI command) pays only for the schemas it checks. */
export function validatorFor<T>(schema: TSchema): Validator<T> {
  const id = schema.$id;
  let compiled: ValidateFunction | undefined;
  const get = (): ValidateFunction => (compiled ??= id ? ajv.getSchema(id)! : ajv.compile(schema as object));
  const check = ((value: unknown) => get()(value)) as Validator<T>;
  check.explain = (value: unknown) => {
    const validate = get();
    return validate(value) ? undefined : describe(validate.errors);
  };
  return check;
}

const eventValidators = new Map<string, Validator<unknown>>();
for (const type of Object.keys(EVENT_SCHEMAS) as EventType[]) {
  eventValidators.set(type, validatorFor(EVENT_SCHEMAS[type]));
}

/** The payload validator of a known event type, or undefined for an unfamiliar type. */
export function eventValidator(type: string): Validator<unknown> | undefined {
  return eventValidators.get(type);
}
