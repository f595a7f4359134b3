/**
 * The wire validators inside the console's bundle: Ajv's standalone code compiled ahead of
 * time (scripts/build-console.ts) for only the schemas the console checks, rather than the
 * whole table of protocol/validators/wire.js. The bundle puts this module in place of
 * src/protocol/validate.ts (same exports), so the TypeScript
 * client (src/client) checks every answer in the browser exactly as it does in Node. The
 * build compiles the schemas of the endpoints the console calls; asking for another one fails
 * loudly when used.
 */
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

/** Like src/protocol/validate.ts: by name or by the schema object itself (its `$id`). */
export function validatorFor<T>(schema: string | { $id?: string }): Validator<T> {
  const id = typeof schema === 'string' ? schema : schema.$id;
  const check = ((value: unknown) => lookup(id)(value)) as Validator<T>;
  check.explain = (value: unknown) => {
    const validate = lookup(id);
    return validate(value) ? undefined : describe(validate.errors);
  };
  return check;
}

/** The payload validator of a known event type, when the build compiled it. */
export function eventValidator(type: string): Validator<unknown> | undefined {
  const id = eventSchemaId(type);
  return table[id] ? validatorFor(id) : undefined;
}
