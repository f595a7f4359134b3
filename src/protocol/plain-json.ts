/** Plain JSON: what survives the host's JSON parsing and a round trip unchanged. */

/** Values that would not survive a JSON round trip unchanged (an own `__proto__` key, or nesting past 64 levels). */
export function hasUnsafeKeys(value: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(value)) return value.some((item) => hasUnsafeKeys(item, depth + 1));
  if (value === null || typeof value !== 'object') return false;
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return true;
  return Object.values(value).some((child) => hasUnsafeKeys(child, depth + 1));
}
