/** The request-body nesting scan skips strings with native searches; it must agree with a plain character walk. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { jsonTextTooDeep } from '../../src/protocol/json-depth.js';

/** The reference: every character looked at, a backslash skipping the next one inside strings. */
function walk(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === '}' || c === ']') depth -= 1;
  }
  return false;
}

describe('jsonTextTooDeep', () => {
  it('agrees with a character walk on text made of quotes, backslashes and brackets', () => {
    const text = fc.array(fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', ','), { maxLength: 60 }).map((parts) => parts.join(''));
    fc.assert(fc.property(text, fc.integer({ min: 0, max: 4 }), (body, limit) => jsonTextTooDeep(body, limit) === walk(body, limit)), { numRuns: 20_000 });
  });

  it('sees nesting after long strings with escaped quotes, and none inside them', () => {
    const inside = JSON.stringify({ text: `${'[{'.repeat(500)}\\"${'\\'.repeat(7)}"` });
    assert.equal(jsonTextTooDeep(inside, 3), false);
    assert.equal(jsonTextTooDeep(`[[[[${JSON.stringify('x"\\'.repeat(10_000))}]]]]`, 3), true);
    assert.equal(jsonTextTooDeep(`[[${JSON.stringify('x"\\'.repeat(10_000))}]]`, 3), false);
  });
});
