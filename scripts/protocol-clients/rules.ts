/**
 * The cross-field rule tables (src/protocol/rules.ts) as published (`protocol/rules.json`)
 * and as each client reads them: Go embeds `clients/go/generated/rules.json`, Rust includes
 * `clients/rust/src/generated/rules.json`, Python imports `generated/rules.py` (the same data
 * as a Python literal). Before anything is written, `ruleTableProblems` checks the tables: a
 * typo in a rule would otherwise be read as an absent value by four evaluators.
 */
import { ANSWER_RULES, REQUEST_RULES, RULE_SETS, STREAM_RULES, type Condition, type Rule, type RuleSet, type Value } from '../../src/protocol/rules.js';

export const RULES_DOCUMENT = 'protocol/rules.json';
export const GO_RULES_FILE = 'clients/go/generated/rules.json';
export const RUST_RULES_FILE = 'clients/rust/src/generated/rules.json';
export const PYTHON_RULES_FILE = 'clients/python/src/agenticdriver/generated/rules.py';

export interface RulesDocument {
  description: string;
  ruleSets: Record<string, RuleSet>;
}

export function rulesDocument(): RulesDocument {
  const problems = ruleTableProblems(RULE_SETS);
  if (problems.length > 0) throw new Error(`protocol-clients: the rule tables are inconsistent:\n${problems.join('\n')}`);
  return {
    description:
      'Cross-field rules of AgenticDriver wire protocol 1.0, generated from src/protocol/rules.ts (the vocabulary is described there). ' +
      'protocol/operations.json names the rule set of each answer (answerRules) and request (requestRules).',
    ruleSets: RULE_SETS,
  };
}

const CONDITIONS: Record<string, string[]> = {
  equal: ['equal'],
  less: ['less'],
  atMost: ['atMost'],
  present: ['present'],
  in: ['in'],
  unique: ['unique'],
  iff: ['iff'],
  not: ['not'],
  and: ['and'],
  uriWithoutCredentials: ['uriWithoutCredentials'],
};
const VALUES: Record<string, string[]> = {
  value: ['value'],
  count: ['count', 'where'],
  bytes: ['bytes'],
  add: ['add'],
  default: ['default'],
  lower: ['lower'],
  find: ['find', 'where'],
  map: ['map', 'to'],
};

/** Everything wrong with the tables: unknown operators, unbound names, duplicate ids, bad applications. */
export function ruleTableProblems(sets: Readonly<Record<string, RuleSet>>): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  const used = new Set<string>([...Object.values(ANSWER_RULES), ...Object.values(REQUEST_RULES), ...Object.values(STREAM_RULES)]);

  const operator = (object: object, table: Record<string, string[]>, where: string): string | undefined => {
    const keys = Object.keys(object);
    const name = keys.find((key) => Object.hasOwn(table, key));
    if (!name) problems.push(`${where}: unknown operator ${JSON.stringify(object)}`);
    else if (keys.some((key) => !table[name]!.includes(key))) problems.push(`${where}: ${name} takes only ${table[name]!.join(', ')}`);
    return name;
  };
  const path = (text: string, names: Set<string>, where: string) => {
    const root = text.split('.')[0]!.replace(/\[\]$/, '');
    if (!names.has(root)) problems.push(`${where}: ${text} refers to ${root}, which is not bound here`);
    if (text.split('.').some((step) => step === '' || step === '[]' || /\[(?!\]$)/.test(step))) problems.push(`${where}: ${text} is not a path`);
  };
  const value = (v: Value, names: Set<string>, where: string): void => {
    if (typeof v === 'string') return path(v, names, where);
    if (typeof v !== 'object' || v === null) return;
    const name = operator(v, VALUES, where);
    const o = v as Record<string, unknown>;
    switch (name) {
      case 'count':
      case 'find':
        value(o[name] as Value, names, where);
        if (o.where !== undefined) condition(o.where as Condition, new Set([...names, 'it']), where);
        else if (name === 'find') problems.push(`${where}: find needs where`);
        break;
      case 'bytes':
      case 'lower':
      case 'map':
        value(o[name] as Value, names, where);
        break;
      case 'add':
      case 'default':
        for (const term of o[name] as Value[]) value(term, names, where);
        break;
      default:
    }
  };
  const condition = (c: Condition, names: Set<string>, where: string): void => {
    const name = operator(c, CONDITIONS, where);
    const operand = (c as Record<string, unknown>)[name ?? ''];
    switch (name) {
      case 'iff':
      case 'and':
        for (const part of operand as Condition[]) condition(part, names, where);
        break;
      case 'not':
        condition(operand as Condition, names, where);
        break;
      case 'equal':
      case 'less':
      case 'atMost':
      case 'in':
        for (const part of operand as Value[]) value(part, names, where);
        break;
      case 'present':
      case 'unique':
      case 'uriWithoutCredentials':
        value(operand as Value, names, where);
        break;
      default:
    }
  };
  const rules = (list: readonly Rule[], names: Set<string>, where: string): void => {
    for (const rule of list) {
      if (rule.when) condition(rule.when, names, where);
      if ('id' in rule) {
        if (ids.has(rule.id)) problems.push(`${where}: rule id ${rule.id} is used twice`);
        ids.add(rule.id);
        condition(rule.check, names, `${where} ${rule.id}`);
      } else if ('apply' in rule) {
        const target = Object.hasOwn(sets, rule.apply) ? sets[rule.apply] : undefined;
        used.add(rule.apply);
        if (!target) problems.push(`${where}: applies unknown rule set ${rule.apply}`);
        for (const [param, bound] of Object.entries(rule.with)) {
          if (target && !target.params.includes(param)) problems.push(`${where}: ${rule.apply} has no parameter ${param}`);
          value(bound, names, where);
        }
      } else {
        const inner = new Set(names);
        if (rule.each) {
          value(rule.each.in, names, where);
          inner.add(rule.each.as);
          if (rule.each.index) inner.add(rule.each.index);
        }
        const lets = Object.entries(rule.let ?? {});
        for (const [, bound] of lets) value(bound, inner, where);
        for (const [name] of lets) inner.add(name);
        rules(rule.rules, inner, where);
      }
    }
  };
  for (const [name, set] of Object.entries(sets)) rules(set.rules, new Set(set.params), name);
  for (const [operation, name] of Object.entries(ANSWER_RULES)) {
    if (sets[name]?.params.slice(0, 2).join() !== 'answer,request') problems.push(`answer rules of ${operation}: ${name} must take (answer, request, ...)`);
  }
  for (const [operation, name] of Object.entries(REQUEST_RULES)) {
    if (sets[name]?.params.join() !== 'request') problems.push(`request rules of ${operation}: ${name} must take (request)`);
  }
  for (const name of Object.keys(sets)) if (!used.has(name)) problems.push(`rule set ${name} is never used`);
  return problems;
}

/** The same data as a Python literal (JSON's true/false/null spelled the Python way). */
function pythonLiteral(value: unknown, indent: string): string {
  const inner = `${indent}    `;
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${pythonLiteral(item, inner)},\n`).join('')}${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${pythonLiteral(item, inner)},\n`).join('')}${indent}}`;
}

export function emitPythonRules(document: RulesDocument): string {
  return [
    '# Code generated by scripts/generate-protocol.ts from protocol/rules.json; DO NOT EDIT.\n',
    '"""The cross-field rule tables of protocol 1.0 (src/protocol/rules.ts describes the\n',
    'vocabulary), read by ``_rules.py``. Run ``npm run protocol`` after changing ``src/protocol``."""\n',
    'from __future__ import annotations\n\n',
    'from typing import Any, Dict\n\n',
    `RULE_SETS: Dict[str, Any] = ${pythonLiteral(document.ruleSets, '')}\n`,
  ].join('');
}
