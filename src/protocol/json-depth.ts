/**
 * Nesting bounds for JSON that arrives from outside. Both checks are iterative, so they
 * run before anything recursive (structuredClone, JSON.stringify, schema walks) can
 * overflow the stack on a hostile document.
 */

/** Deepest nesting of objects and arrays a request body or a parsed model output may have. */
export const MAX_JSON_DEPTH = 128;

/** Whether JSON text nests objects/arrays deeper than `limit`; one linear scan, strings skipped. */
export function jsonTextTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i += 1;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth -= 1;
    }
  }
  return false;
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
