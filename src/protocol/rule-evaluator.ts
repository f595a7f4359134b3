/**
 * Evaluates the cross-field rule tables of `./rules.ts` on decoded JSON values, for the
 * runtime and the TypeScript client. The Go, Python and Rust clients evaluate the same
 * tables (`protocol/rules.json`) with evaluators that follow this one line by line; the
 * shared vectors in `protocol/fixtures/rules.json` hold all four to the same answers.
 */
import { RULE_SETS, type Condition, type Rule, type RuleSet, type Value } from './rules.js';

export interface RuleViolation {
  /** The id of the broken rule. */
  rule: string;
  message: string;
  /** The list items walked to reach it (`answer.hits[1]`), empty at the top. */
  at: string;
}

type Scope = Readonly<Record<string, unknown>>;

/** The first rule of the set `name` that `scope` breaks, or undefined when it keeps them all. */
export function evaluateRules(name: string, scope: Scope, sets: Readonly<Record<string, RuleSet>> = RULE_SETS): RuleViolation | undefined {
  return new Evaluation(sets).run(setOf(sets, name).rules, scope, '');
}

/** How every client words a violation: the message, where, and the rule's id in brackets. */
export function describeViolation(violation: RuleViolation): string {
  return `${violation.message}${violation.at ? ` (at ${violation.at})` : ''} [${violation.rule}]`;
}

function setOf(sets: Readonly<Record<string, RuleSet>>, name: string): RuleSet {
  const set = Object.hasOwn(sets, name) ? sets[name] : undefined;
  if (!set) throw new Error(`There is no rule set ${name}.`);
  return set;
}

class Evaluation {
  constructor(private readonly sets: Readonly<Record<string, RuleSet>>) {}

  run(rules: readonly Rule[], scope: Scope, at: string): RuleViolation | undefined {
    for (const rule of rules) {
      if (rule.when && !holds(rule.when, scope)) continue;
      if ('id' in rule) {
        if (!holds(rule.check, scope)) return { rule: rule.id, message: rule.message, at };
        continue;
      }
      if ('apply' in rule) {
        const inner: Record<string, unknown> = {};
        for (const [name, expression] of Object.entries(rule.with)) inner[name] = valueOf(expression, scope);
        const found = this.run(setOf(this.sets, rule.apply).rules, inner, at);
        if (found) return found;
        continue;
      }
      const items = rule.each ? listOf(valueOf(rule.each.in, scope)) : [undefined];
      for (const [index, item] of items.entries()) {
        let inner: Record<string, unknown> = { ...scope };
        if (rule.each) {
          inner[rule.each.as] = item;
          if (rule.each.index) inner[rule.each.index] = index;
        }
        if (rule.let) {
          const bound: Record<string, unknown> = { ...inner };
          for (const [name, expression] of Object.entries(rule.let)) bound[name] = valueOf(expression, inner);
          inner = bound;
        }
        const where = rule.each ? `${at ? `${at}/` : ''}${typeof rule.each.in === 'string' ? rule.each.in : 'items'}[${index}]` : at;
        const found = this.run(rule.rules, inner, where);
        if (found) return found;
      }
    }
    return undefined;
  }
}

function holds(condition: Condition, scope: Scope): boolean {
  if ('equal' in condition) return jsonEqual(valueOf(condition.equal[0], scope), valueOf(condition.equal[1], scope));
  if ('less' in condition) return (compare(valueOf(condition.less[0], scope), valueOf(condition.less[1], scope)) ?? 0) < 0;
  if ('atMost' in condition) return (compare(valueOf(condition.atMost[0], scope), valueOf(condition.atMost[1], scope)) ?? 1) <= 0;
  if ('present' in condition) return valueOf(condition.present, scope) !== undefined;
  if ('in' in condition) {
    const item = valueOf(condition.in[0], scope);
    return item !== undefined && listOf(valueOf(condition.in[1], scope)).some((candidate) => jsonEqual(candidate, item));
  }
  if ('unique' in condition) {
    const items = listOf(valueOf(condition.unique, scope));
    return items.every((item, index) => !items.slice(0, index).some((earlier) => jsonEqual(earlier, item)));
  }
  if ('iff' in condition) return holds(condition.iff[0], scope) === holds(condition.iff[1], scope);
  if ('not' in condition) return !holds(condition.not, scope);
  if ('and' in condition) return condition.and.every((part) => holds(part, scope));
  if ('uriWithoutCredentials' in condition) return !hasCredentials(valueOf(condition.uriWithoutCredentials, scope));
  throw new Error(`Unknown rule condition ${JSON.stringify(condition)}.`);
}

function valueOf(expression: Value, scope: Scope): unknown {
  if (typeof expression === 'string') return lookup(expression, scope);
  if (typeof expression !== 'object' || expression === null) return expression;
  if ('value' in expression) return expression.value;
  if ('count' in expression) {
    const items = listOf(valueOf(expression.count, scope));
    const where = expression.where;
    return where ? items.filter((it) => holds(where, { ...scope, it })).length : items.length;
  }
  if ('bytes' in expression) {
    const target = valueOf(expression.bytes, scope);
    if (typeof target === 'string') return utf8Length(target);
    return Array.isArray(target) ? target.reduce((sum: number, item) => sum + (typeof item === 'string' ? utf8Length(item) : 0), 0) : undefined;
  }
  if ('add' in expression) {
    const terms = expression.add.map((term) => valueOf(term, scope));
    return terms.every((term) => typeof term === 'number') ? (terms as number[]).reduce((sum, term) => sum + term, 0) : undefined;
  }
  if ('default' in expression) {
    for (const option of expression.default) {
      const found = valueOf(option, scope);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if ('lower' in expression) {
    const target = valueOf(expression.lower, scope);
    return typeof target === 'string' ? target.replace(/[A-Z]/g, (letter) => letter.toLowerCase()) : undefined;
  }
  if ('find' in expression) {
    const where = expression.where;
    return listOf(valueOf(expression.find, scope)).find((it) => holds(where, { ...scope, it }));
  }
  if ('map' in expression) {
    const key = valueOf(expression.map, scope);
    return typeof key === 'string' && Object.hasOwn(expression.to, key) ? expression.to[key] : undefined;
  }
  throw new Error(`Unknown rule value ${JSON.stringify(expression)}.`);
}

/** A path's value: `a.b` one value (undefined when absent); a path with `[]` the list of every value it reaches. */
function lookup(path: string, scope: Scope): unknown {
  const steps = stepsOf(path);
  if (!steps.some((step) => step.each)) {
    let current: unknown = scope;
    for (const step of steps) current = field(current, step.name);
    return current;
  }
  const found: unknown[] = [];
  const walk = (current: unknown, index: number): void => {
    if (index === steps.length) {
      if (current !== undefined) found.push(current);
      return;
    }
    const step = steps[index]!;
    const next = field(current, step.name);
    if (!step.each) return walk(next, index + 1);
    if (Array.isArray(next)) for (const item of next) walk(item, index + 1);
  };
  walk(scope, 0);
  return found;
}

const parsedPaths = new Map<string, { name: string; each: boolean }[]>();

function stepsOf(path: string): { name: string; each: boolean }[] {
  let steps = parsedPaths.get(path);
  if (!steps) {
    steps = path.split('.').map((part) => (part.endsWith('[]') ? { name: part.slice(0, -2), each: true } : { name: part, each: false }));
    parsedPaths.set(path, steps);
  }
  return steps;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field(value: unknown, name: string): unknown {
  return isObject(value) && Object.hasOwn(value, name) ? value[name] : undefined;
}

function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function definedKeys(value: Record<string, unknown>): string[] {
  return Object.keys(value).filter((key) => value[key] !== undefined);
}

/** JSON equality: absent equals only absent; objects by their (present) keys and values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  if (isObject(a) && isObject(b)) {
    const keys = definedKeys(a);
    return keys.length === definedKeys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}

/** Numbers by value, strings by code point; undefined for anything else. */
function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a !== 'string' || typeof b !== 'string') return undefined;
  const left = [...a];
  const right = [...b];
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    const difference = left[index]!.codePointAt(0)! - right[index]!.codePointAt(0)!;
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

const encoder = new TextEncoder();
const utf8Length = (text: string): number => encoder.encode(text).length;

/** Whether a URI's authority (after `://`, up to the first `/`, `?` or `#`) carries user information. */
function hasCredentials(uri: unknown): boolean {
  if (typeof uri !== 'string') return false;
  const start = uri.indexOf('://');
  if (start < 0) return false;
  const rest = uri.slice(start + 3);
  const end = rest.search(/[/?#]/);
  return (end < 0 ? rest : rest.slice(0, end)).includes('@');
}
