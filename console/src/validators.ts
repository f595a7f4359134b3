/**
 * The wire validators inside the console's bundle: compiled ahead of time by Ajv's standalone
 * code (scripts/build-console.ts), because a page under `script-src 'self'` may not generate
 * code. The bundle puts this module in place of src/protocol/validate.ts, so the TypeScript
 * client (src/client) checks every answer in the browser exactly as it does in Node. The
 * build compiles the schemas of the endpoints the console calls; asking for another one fails
 * loudly when used.
 */
import type { TSchema } from '@sinclair/typebox';
import * as compiled from 'virtual:console-validators';
import { DriverError } from '../../src/protocol/errors.js';
import { eventSchemaId } from '../../src/protocol/schemas.js';
import { describe, type Validator } from '../../src/protocol/validator.js';

export { describe, type Validator } from '../../src/protocol/validator.js';

const table = compiled as unknown as Record<string, compiled.CompiledValidator | undefined>;

function lookup(id: string | undefined): compiled.CompiledValidator {
  const found = id ? table[id] : undefined;
  if (!found) throw new DriverError('UNSUPPORTED_ENVIRONMENT', `The console was built without a validator for ${id ?? 'an unnamed schema'}.`);
  return found;
}

export function validatorFor<T>(schema: TSchema): Validator<T> {
  const check = ((value: unknown) => lookup(schema.$id)(value)) as Validator<T>;
  check.explain = (value: unknown) => {
    const validate = lookup(schema.$id);
    return validate(value) ? undefined : describe(validate.errors);
  };
  return check;
}

/** The payload validator of a known event type, when the build compiled it. */
export function eventValidator(type: string): Validator<unknown> | undefined {
  const id = eventSchemaId(type);
  return table[id] ? validatorFor({ $id: id } as TSchema) : undefined;
}
