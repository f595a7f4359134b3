/**
 * Dialect-aware compilation of caller-supplied JSON Schemas (structured output, tool
 * inputs). No `$schema` means draft-07; the 2020-12 URI selects 2020-12. Anything that
 * would need loading (external `$ref`), asynchronous validation or an unknown dialect is
 * rejected before any model call. Every `pattern`, `patternProperties` and
 * `propertyNames` pattern runs on a linear-time engine (./linear-regexp.ts): one
 * request's schema can never stall the event loop.
 */
import AjvDraft07 from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { DriverError } from '../protocol/errors.js';
import { describe } from '../protocol/validate.js';
import { linearRegExp } from './linear-regexp.js';

type AddFormats = (ajv: unknown) => unknown;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);
const Draft07 = ((AjvDraft07 as unknown as { default?: typeof AjvDraft07 }).default ?? AjvDraft07) as unknown as typeof AjvDraft07.default;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

export type Dialect = 'draft-07' | '2020-12';

export interface CompiledSchema {
  dialect: Dialect;
  /** Undefined when valid, else a short description of the first problem. */
  check(value: unknown): string | undefined;
}

export function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = schema.$schema;
  if (declared === undefined) return 'draft-07';
  if (typeof declared !== 'string') throw invalidSchema('$schema must be a string');
  const bare = declared.replace(/#$/, '');
  if (bare === DRAFT_2020) return '2020-12';
  if (bare === DRAFT_07 || bare === DRAFT_07.replace('http:', 'https:')) return 'draft-07';
  throw invalidSchema(`unsupported JSON Schema dialect ${JSON.stringify(declared)}`);
}

function invalidSchema(reason: string): DriverError {
  return new DriverError('INVALID_SCHEMA', `The JSON Schema is not usable: ${reason}.`);
}

/** Walks the schema for features we refuse: `$async` and references outside the document. */
function assertSelfContained(node: unknown, depth = 0): void {
  if (depth > 64) throw invalidSchema('it is nested too deeply');
  if (Array.isArray(node)) {
    for (const item of node) assertSelfContained(item, depth + 1);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$async') throw invalidSchema('asynchronous schemas are not supported');
    if ((key === '$ref' || key === '$dynamicRef' || key === '$recursiveRef') && typeof value === 'string' && !value.startsWith('#')) {
      throw invalidSchema(`external reference ${JSON.stringify(value)} is not supported`);
    }
    if (key === 'enum' || key === 'const' || key === 'examples' || key === 'default') continue;
    assertSelfContained(value, depth + 1);
  }
}

const cache = new Map<string, CompiledSchema>();
const CACHE_LIMIT = 256;

export function compileSchema(schema: unknown): CompiledSchema {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw invalidSchema('it must be an object');
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit) return hit;

  const dialect = dialectOf(schema as Record<string, unknown>);
  assertSelfContained(schema);
  const options = { strict: false, allErrors: false, validateSchema: true, addUsedSchema: false, code: { regExp: linearRegExp } } as const;
  const ajv = dialect === '2020-12' ? new Ajv2020(options) : new Draft07(options);
  addFormats(ajv);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object);
  } catch (error) {
    throw invalidSchema(error instanceof Error ? error.message.slice(0, 200) : 'it does not compile');
  }
  const compiled: CompiledSchema = {
    dialect,
    check: (value) => (validate(value) ? undefined : describe(validate.errors)),
  };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, compiled);
  return compiled;
}
