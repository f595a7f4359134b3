/**
 * The regular-expression engine for caller-supplied JSON Schemas: RE2 semantics on
 * `re2js` (pure JavaScript), so matching time is linear in the input whatever the
 * pattern. A `pattern` written for JavaScript is translated first (`\u0041`, named
 * groups); what RE2 cannot express — backreferences, lookahead, lookbehind — fails to
 * compile, which the schema compiler reports as INVALID_SCHEMA before any model call.
 */
import { RE2JS } from 're2js';

export interface LinearRegExp {
  test(input: string): boolean;
  toString(): string;
}

export class UnsupportedPatternError extends Error {
  constructor(readonly pattern: string, reason: string) {
    super(`pattern ${JSON.stringify(pattern.slice(0, 100))} is not supported: ${reason} (patterns use RE2 syntax: no backreferences or lookaround)`);
    this.name = 'UnsupportedPatternError';
  }
}

/**
 * Ajv's `code.regExp` contract: called with the pattern and the `u` flag, returns an
 * object with `test`. `toString` keys Ajv's per-schema cache, so it names the pattern.
 */
export function linearRegExp(pattern: string, flags: string): LinearRegExp {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    throw new UnsupportedPatternError(pattern, error instanceof Error ? error.message.slice(0, 120) : 'it does not compile');
  }
  return {
    test: (input) => compiled.test(input),
    toString: () => `/${pattern}/${flags}`,
  };
}
// Ajv emits this name only into standalone code, which we never generate.
linearRegExp.code = 'linearRegExp';
