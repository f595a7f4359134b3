/**
 * Rust emitter: one `fn(&Value, &str) -> Checked<()>` per named wire schema, built from
 * the primitives of clients/rust/src/validate/check.rs (hand-written, the runtime of this
 * file), plus the check of a whole event by type. The crate has no regular-expression
 * engine, so each pattern maps to a matcher in validate/formats.rs by the table below; a
 * new pattern in src/protocol stops the generator until it has one.
 */
import { snake, type Node, type WireModel } from './model.js';

export const RUST_FILE = 'clients/rust/src/generated/checks.rs';
export const RUST_MOD = 'clients/rust/src/generated/mod.rs';

export const rustCheckName = (definition: string): string => snake(definition);

/** ECMAScript pattern → [matcher in validate/formats.rs, what it accepts]. */
const PATTERNS: Record<string, [string, string]> = {
  '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,79}$': ['is_provider_id', 'a provider id'],
  '^[a-zA-Z0-9][a-zA-Z0-9._:/\\[\\]-]{0,199}$': ['is_model_id', 'a model id'],
  '^[a-zA-Z0-9][a-zA-Z0-9._:/-]{0,199}$': ['is_embedding_model', 'an embedding model name'],
  '^[a-zA-Z_][a-zA-Z0-9_]{0,63}$': ['is_tool_name', 'a tool name'],
  '^[a-zA-Z][a-zA-Z0-9._-]{0,79}$': ['is_capability_name', 'a capability name'],
  '^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$': ['is_opaque_key', 'an opaque key'],
  '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$': ['is_lower_uuid', 'a lowercase UUID'],
  '^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$': ['is_uuid_shape_any_case', 'a UUID'],
  '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$': ['is_host_timestamp', 'a host timestamp (UTC, milliseconds)'],
  '^[0-9a-f]{64}$': ['is_sha256', 'a lowercase SHA-256 hex digest'],
  '^(https|app)://\\S+$': ['is_source_uri', 'an https:// or app:// URI'],
  '^[^/\\\\\\u0000-\\u001f]+$': ['is_artifact_name', 'a file name without slashes or control characters'],
  '^[A-Za-z0-9+/]*={0,2}$': ['is_base64', 'base64'],
  '\\S': ['has_non_space', 'not only white space'],
};

const FORMATS: Record<string, [string, string]> = {
  'date-time': ['is_date_time', 'an RFC 3339 date-time'],
  uuid: ['is_uuid_format', 'a UUID'],
};

const quote = (text: string): string => JSON.stringify(text);
const float = (value: number | undefined, fallback: string): string =>
  value === undefined ? fallback : Number.isInteger(value) ? `${value}.0` : String(value);
const size = (value: number | undefined): string => (value === undefined ? 'usize::MAX' : String(value));

/** A Rust expression of type `Checked<()>` checking the value `v` at path `p`. */
function check(n: Node): string {
  switch (n.kind) {
    case 'any':
      return 'Ok(())';
    case 'ref':
      return `${rustCheckName(n.name)}(v, p)`;
    case 'boolean':
      return 'boolean(v, p).map(drop)';
    case 'enum':
      return `literal(v, p, &[${n.values.map(quote).join(', ')}]).map(drop)`;
    case 'integer':
    case 'number':
      return `${n.kind}(v, p, ${float(n.minimum, 'f64::NEG_INFINITY')}, ${float(n.maximum, 'f64::INFINITY')}).map(drop)`;
    case 'string': {
      // `matching` checks for a string itself; a length step is there only when bounded.
      const steps = n.minLength > 0 || n.maxLength !== undefined ? [`string(v, p, ${n.minLength}, ${size(n.maxLength)})?;`] : [];
      const matchers: [string, string][] = [];
      if (n.pattern !== undefined) {
        const matcher = PATTERNS[n.pattern];
        if (!matcher) throw new Error(`protocol-clients: no Rust matcher for the pattern ${n.pattern}; add one to clients/rust/src/validate/formats.rs and to PATTERNS in scripts/protocol-clients/rust.ts`);
        matchers.push(matcher);
      }
      if (n.format !== undefined) matchers.push(FORMATS[n.format]!);
      if (matchers.length === 0) return `string(v, p, ${n.minLength}, ${size(n.maxLength)}).map(drop)`;
      for (const [matcher, what] of matchers) steps.push(`matching(v, p, ${matcher}, ${quote(what)})?;`);
      if (steps.length === 1) return steps[0]!.replace(/\?;$/, '.map(drop)');
      return `{ ${steps.join(' ')} Ok(()) }`;
    }
    case 'array': {
      const steps = [`let items = array(v, p, ${n.minItems}, ${size(n.maxItems)})?;`];
      if (n.items.kind !== 'any') steps.push(`each(items, p, ${callable(n.items)})?;`);
      if (n.unique) steps.push('unique(items, p)?;');
      if (n.contains !== undefined) steps.push(`contains(items, p, ${quote(n.contains)})?;`);
      return `{ ${steps.join(' ')} Ok(()) }`;
    }
    case 'anyOf':
      return `any_of(v, p, &[${n.options.map((option) => `&|v: &Value, p: &str| -> Checked<()> { ${check(option)} }`).join(', ')}])`;
    case 'object': {
      const names = n.fields.map((field) => quote(field.name)).join(', ');
      const steps = [n.strict ? `let o = Obj::strict(v, p, &[${names}])?;` : `let o = Obj::open(v, p)?;`];
      for (const field of n.fields) {
        steps.push(`o.${field.required ? 'with' : 'opt_with'}(${quote(field.name)}, ${callable(field.node)})?;`);
      }
      if (n.maxProperties !== undefined) steps.push(`max_properties(&o, ${n.maxProperties})?;`);
      if (n.extra) steps.push(`o.others(&[${names}], ${callable(n.extra)})?;`);
      if (steps.length === 1) return n.strict ? `Obj::strict(v, p, &[]).map(drop)` : 'object(v, p).map(drop)';
      return `{ ${steps.join(' ')} Ok(()) }`;
    }
  }
}

/** A function value `(v, p) -> Checked<()>` for a node: the named check itself, or a closure. */
function callable(n: Node): string {
  if (n.kind === 'ref') return rustCheckName(n.name);
  if (n.kind === 'any') return '|_, _| Ok(())';
  return `|v, p| ${check(n)}`;
}

export function emitRust(model: WireModel): string {
  const checks = model.definitions.map(
    (definition) => {
      const body = check(definition.node);
      const block = body.startsWith('{ ') ? body : `{ ${body} }`;
      return `pub fn ${rustCheckName(definition.name)}(v: &Value, p: &str) -> Checked<()> ${block}\n`;
    },
  );
  const events = model.events.map((event) => `${quote(event.type)} => ${rustCheckName(event.definition)},\n`).join('');
  return [
    '// Code generated by scripts/generate-protocol.ts from protocol/schemas/agenticdriver.schema.json; DO NOT EDIT.\n',
    '//! The wire shapes of protocol 1.0, one check per named schema. Run `npm run protocol`\n',
    '//! after changing `src/protocol`. The primitives are in `validate/check.rs`, the pattern\n',
    '//! matchers in `validate/formats.rs`, the cross-field rules in `validate/rules.rs`.\n',
    '#![allow(dead_code, clippy::all)]\n',
    'use crate::validate::check::*;\n',
    'use crate::validate::formats::*;\n',
    'use serde_json::Value;\n\n',
    checks.join('\n'),
    '\n/// The check of a whole event of a known type; `None` for an unfamiliar type.\n',
    `pub fn event_check(kind: &str) -> Option<fn(&Value, &str) -> Checked<()>> {\nSome(match kind {\n${events}_ => return None,\n})\n}\n`,
  ].join('');
}

export const RUST_MOD_TEXT = [
  '// Code generated by scripts/generate-protocol.ts; DO NOT EDIT.\n',
  '//! Wire-layer code generated from `protocol/schemas/agenticdriver.schema.json`.\n',
  '#[cfg(feature = "async")]\n',
  'pub mod checks;\n',
  'pub mod codes;\n',
  '#[cfg(feature = "async")]\n',
  'pub mod operations;\n',
  'pub mod types;\n',
].join('');
