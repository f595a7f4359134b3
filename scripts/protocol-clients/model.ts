/**
 * The wire schemas of protocol/schemas/agenticdriver.schema.json read into a small tree
 * the per-language emitters walk. Only the JSON Schema keywords the contract uses are
 * understood; anything else stops the generator, so a new keyword in src/protocol is
 * noticed here instead of being silently ignored by three clients.
 */

export type Node =
  | { kind: 'any' }
  | { kind: 'string'; minLength: number; maxLength?: number; pattern?: string; format?: 'date-time' | 'uuid' }
  | { kind: 'enum'; values: string[] }
  | { kind: 'integer' | 'number'; minimum?: number; maximum?: number }
  | { kind: 'boolean' }
  | { kind: 'array'; items: Node; minItems: number; maxItems?: number; unique: boolean; contains?: string }
  | { kind: 'object'; fields: Field[]; strict: boolean; extra?: Node; maxProperties?: number }
  | { kind: 'ref'; name: string }
  | { kind: 'anyOf'; options: Node[] };

export interface Field {
  name: string;
  node: Node;
  required: boolean;
}

export interface Definition {
  name: string;
  node: Node;
}

export interface WireModel {
  /** Every named schema, each after the ones it refers to. */
  definitions: Definition[];
  /** Known event types and the definition of each (from RunEvent). */
  events: { type: string; definition: string }[];
}

type Json = Record<string, unknown>;

const KNOWN = new Set([
  'type', 'required', 'properties', 'additionalProperties', 'patternProperties', 'minLength', 'maxLength', 'pattern',
  'format', 'const', 'anyOf', '$ref', 'minimum', 'maximum', 'items', 'minItems', 'maxItems', 'uniqueItems',
  'maxProperties', 'contains', '$id', 'title', 'description',
]);

function fail(where: string, what: string): never {
  throw new Error(`protocol-clients: ${where}: ${what} (teach scripts/protocol-clients/model.ts this keyword)`);
}

function node(schema: Json, where: string): Node {
  for (const key of Object.keys(schema)) if (!KNOWN.has(key)) fail(where, `unsupported keyword "${key}"`);
  if (typeof schema.$ref === 'string') {
    const match = /^#\/\$defs\/(\w+)$/.exec(schema.$ref);
    if (!match) fail(where, `unsupported $ref ${schema.$ref}`);
    return { kind: 'ref', name: match[1]! };
  }
  if (Array.isArray(schema.anyOf)) {
    const options = schema.anyOf.map((option, index) => node(option as Json, `${where}/anyOf/${index}`));
    if (options.every((option) => option.kind === 'enum')) {
      return { kind: 'enum', values: options.flatMap((option) => (option as { values: string[] }).values) };
    }
    return { kind: 'anyOf', options };
  }
  if (schema.const !== undefined) {
    if (typeof schema.const !== 'string') fail(where, 'only string constants are supported');
    return { kind: 'enum', values: [schema.const] };
  }
  switch (schema.type) {
    case undefined:
      if (Object.keys(schema).length > 0) fail(where, 'a schema without a type');
      return { kind: 'any' };
    case 'string': {
      const format = schema.format as string | undefined;
      if (format !== undefined && format !== 'date-time' && format !== 'uuid') fail(where, `unsupported format ${format}`);
      if (schema.maxLength === 0) fail(where, 'maxLength 0');
      return {
        kind: 'string',
        minLength: (schema.minLength as number | undefined) ?? 0,
        ...(schema.maxLength !== undefined ? { maxLength: schema.maxLength as number } : {}),
        ...(schema.pattern !== undefined ? { pattern: schema.pattern as string } : {}),
        ...(format ? { format } : {}),
      };
    }
    case 'integer':
    case 'number':
      return {
        kind: schema.type,
        ...(schema.minimum !== undefined ? { minimum: schema.minimum as number } : {}),
        ...(schema.maximum !== undefined ? { maximum: schema.maximum as number } : {}),
      };
    case 'boolean':
      return { kind: 'boolean' };
    case 'array': {
      let contains: string | undefined;
      if (schema.contains !== undefined) {
        const inner = node(schema.contains as Json, `${where}/contains`);
        if (inner.kind !== 'enum' || inner.values.length !== 1) fail(where, 'contains must be one string constant');
        contains = inner.values[0];
      }
      if (schema.maxItems === 0) fail(where, 'maxItems 0');
      return {
        kind: 'array',
        items: schema.items === undefined ? { kind: 'any' } : node(schema.items as Json, `${where}/items`),
        minItems: (schema.minItems as number | undefined) ?? 0,
        ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems as number } : {}),
        unique: schema.uniqueItems === true,
        ...(contains !== undefined ? { contains } : {}),
      };
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      const required = new Set((schema.required ?? []) as string[]);
      const fields = Object.entries(properties).map(([name, property]) => ({
        name,
        node: node(property, `${where}/${name}`),
        required: required.has(name),
      }));
      let extra: Node | undefined;
      const additional = schema.additionalProperties;
      if (schema.patternProperties !== undefined) {
        const patterns = Object.entries(schema.patternProperties as Record<string, Json>);
        if (patterns.length !== 1 || patterns[0]![0] !== '^(.*)$') fail(where, 'only the record pattern ^(.*)$ is supported');
        extra = node(patterns[0]![1], `${where}/*`);
      } else if (typeof additional === 'object' && additional !== null) {
        extra = node(additional as Json, `${where}/*`);
      }
      return {
        kind: 'object',
        fields,
        strict: additional === false,
        ...(extra && !(extra.kind === 'any') ? { extra } : {}),
        ...(schema.maxProperties !== undefined ? { maxProperties: schema.maxProperties as number } : {}),
      };
    }
    default:
      return fail(where, `unsupported type ${String(schema.type)}`);
  }
}

function refs(n: Node, into: Set<string>): Set<string> {
  switch (n.kind) {
    case 'ref':
      into.add(n.name);
      break;
    case 'array':
      refs(n.items, into);
      break;
    case 'object':
      for (const field of n.fields) refs(field.node, into);
      if (n.extra) refs(n.extra, into);
      break;
    case 'anyOf':
      for (const option of n.options) refs(option, into);
      break;
    default:
  }
  return into;
}

/** Reads the `$defs` of the published schema document. */
export function wireModel(document: { $defs: Record<string, Json> }): WireModel {
  const nodes = new Map(Object.entries(document.$defs).map(([name, schema]) => [name, node(schema, name)]));
  const ordered: Definition[] = [];
  const done = new Set<string>();
  const visit = (name: string, trail: string[]) => {
    if (done.has(name)) return;
    if (trail.includes(name)) fail(name, `a $ref cycle ${[...trail, name].join(' -> ')}`);
    const n = nodes.get(name) ?? fail(trail.at(-1) ?? name, `$ref to unknown ${name}`);
    for (const ref of refs(n, new Set())) visit(ref, [...trail, name]);
    done.add(name);
    ordered.push({ name, node: n });
  };
  for (const name of nodes.keys()) visit(name, []);
  const runEvent = nodes.get('RunEvent') ?? { kind: 'anyOf', options: [] };
  if (runEvent.kind !== 'anyOf') fail('RunEvent', 'must be a union of event references');
  const events = runEvent.options.map((option) => {
    if (option.kind !== 'ref') fail('RunEvent', 'every option must be a $ref');
    const target = nodes.get(option.name);
    const type = target?.kind === 'object' ? target.fields.find((field) => field.name === 'type')?.node : undefined;
    if (type?.kind !== 'enum' || type.values.length !== 1) fail(option.name, 'an event needs a constant type');
    return { type: type.values[0]!, definition: option.name };
  });
  return { definitions: ordered, events };
}

// ---------------------------------------------------------------------------
// Names and regular expressions shared by the emitters

export function words(name: string): string[] {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[^A-Za-z0-9]+/).filter(Boolean);
}

export const snake = (name: string): string => words(name).map((w) => w.toLowerCase()).join('_');
export const camel = (name: string): string =>
  words(name).map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase())).join('');

/** ECMAScript's `\s` (the patterns are ECMAScript regular expressions, as Ajv runs them). */
const JS_SPACE = '\\t\\n\\v\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';

/**
 * Rewrites an ECMAScript pattern for RE2 (Go) or Python's `re` with the same meaning:
 * `\d` is ASCII, `\s`/`\S` are ECMAScript's Unicode white space, `\uXXXX` escapes are
 * spelled the target's way, and (Python) `$` never matches before a final newline.
 */
export function portablePattern(pattern: string, target: 'go' | 'python'): string {
  const hex = (code: string) => (target === 'go' ? `\\x{${code}}` : `\\u${code.padStart(4, '0')}`);
  const space = JS_SPACE.replace(/\\x\{([0-9a-f]+)\}/g, (_, code: string) => hex(code));
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      i++;
      if (next === 'u') {
        out += hex(pattern.slice(i + 1, i + 5).toLowerCase());
        i += 4;
      } else if (next === 'd') out += inClass ? '0-9' : '[0-9]';
      else if (next === 's') out += inClass ? space : `[${space}]`;
      else if (next === 'S') {
        if (inClass) fail(pattern, '\\S inside a character class');
        out += `[^${space}]`;
      } else if (next === 'w' || next === 'W' || next === 'D' || next === 'b' || next === 'B') fail(pattern, `\\${next}`);
      else out += `\\${next}`;
      continue;
    }
    if (c === '[') inClass = true;
    if (c === ']') inClass = false;
    if (c === '$' && !inClass && target === 'python') {
      out += '\\Z';
      continue;
    }
    out += c;
  }
  return out;
}
