/** The standalone validators scripts/build-console.ts compiles into the bundle, one export per schema id. */
declare module 'virtual:console-validators' {
  import type { ErrorObject } from 'ajv';
  export interface CompiledValidator {
    (value: unknown): boolean;
    errors?: ErrorObject[] | null;
  }
}
