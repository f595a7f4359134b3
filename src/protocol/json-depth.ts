/**
 * Nesting bounds for JSON that arrives from outside. Both checks are iterative, so they
 * run before anything recursive (structuredClone, JSON.stringify, schema walks) can
 * overflow the stack on a hostile document.
 */

/** Deepest nesting of objects and arrays a request body or a parsed model output may have. */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether JSON text nests objects/arrays deeper than `limit`; one linear scan. Strings are
 * skipped with native searches for their closing quote (one not escaped by an odd run of
 * backslashes), so a body that is mostly one long string — a document — costs next to nothing.
 */
export function jsonTextTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
      // An unterminated string nests nothing more; JSON.parse refuses it.
      if (end === -1) return false;
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth -= 1;
    }
  }
  return false;
}

/** Whether the quote at `at` follows an odd run of backslashes (each backslash is looked at once: runs end at quotes). */
function escaped(text: string, at: number): boolean {
  let slashes = 0;
  for (let k = at - 1; text.charCodeAt(k) === 0x5c /* \ */; k -= 1) slashes += 1;
  return slashes % 2 === 1;
}

/**
 * Whether a value nests objects/arrays deeper than `limit`. An object shared in several
 * places is walked again only when reached at a shallower depth, so the walk stays linear
 * in (objects x limit).
 */
export function valueTooDeep(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  const shallowest = new Map<object, number>();
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > limit) return true;
    const before = shallowest.get(node);
    if (before !== undefined && before <= depth) continue;
    shallowest.set(node, depth);
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
