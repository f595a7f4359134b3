/**
 * The clients' generated wire layers, written by scripts/generate-protocol.ts from the
 * published schema document: one emitter per language, each file passed through the
 * language's own formatter so the checked-in output is exactly what `--check` rebuilds.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { wireModel } from './model.js';
import { emitGo, GO_FILE } from './go.js';
import { emitGoTypes, GO_TYPES_FILE } from './go-types.js';
import { emitRust, RUST_FILE, RUST_MOD, RUST_MOD_TEXT } from './rust.js';
import { emitRustTypes, RUST_TYPES_FILE } from './rust-types.js';
import { emitPythonTypes, PYTHON_TYPES_FILE } from './python-types.js';
import { emitPython, PYTHON_FILE, PYTHON_INIT, PYTHON_INIT_TEXT } from './python.js';
import {
  emitGoOperations,
  emitPythonCodes,
  emitPythonOperations,
  emitRustCodes,
  emitRustOperations,
  GO_OPERATIONS_FILE,
  PYTHON_CODES_FILE,
  PYTHON_OPERATIONS_FILE,
  RUST_CODES_FILE,
  RUST_OPERATIONS_FILE,
  type OperationsDocument,
} from './operations.js';
import { emitPythonRules, GO_RULES_FILE, PYTHON_RULES_FILE, RUST_RULES_FILE, type RulesDocument } from './rules.js';

function formatted(command: string, args: string[], text: string, cwd: string): string {
  return execFileSync(command, args, { input: text, cwd, encoding: 'utf8', stdio: ['pipe', 'pipe', 'inherit'] });
}

const rustfmt = (root: string): string[] => ['--edition', '2021', '--config-path', join(root, 'clients/rust/rustfmt.toml'), '--emit', 'stdout'];

/** The published documents the clients are generated from. */
export interface Published {
  schema: { $defs: Record<string, Record<string, unknown>> };
  operations: OperationsDocument;
  status: Record<string, number>;
  rules: RulesDocument;
  /** protocol/rules.json as published: Go and Rust read the same text. */
  rulesText: string;
}

/** Path (from the repository root) → file text. */
export function clientFiles({ schema, operations, status, rules, rulesText }: Published, root: string): Record<string, string> {
  const model = wireModel(schema);
  const rust = (text: string) => formatted('rustfmt', rustfmt(root), text, join(root, 'clients/rust'));
  return {
    [GO_OPERATIONS_FILE]: formatted('gofmt', [], emitGoOperations(operations, status), join(root, 'clients/go')),
    [PYTHON_OPERATIONS_FILE]: emitPythonOperations(operations),
    [PYTHON_CODES_FILE]: emitPythonCodes(status),
    [RUST_OPERATIONS_FILE]: rust(emitRustOperations(operations)),
    [RUST_CODES_FILE]: rust(emitRustCodes(status)),
    [GO_FILE]: formatted('gofmt', [], emitGo(model), join(root, 'clients/go')),
    [GO_TYPES_FILE]: formatted('gofmt', [], emitGoTypes(model), join(root, 'clients/go')),
    [PYTHON_INIT]: PYTHON_INIT_TEXT,
    [PYTHON_FILE]: emitPython(model),
    [PYTHON_TYPES_FILE]: emitPythonTypes(model),
    [RUST_MOD]: RUST_MOD_TEXT,
    [RUST_FILE]: formatted('rustfmt', rustfmt(root), emitRust(model), join(root, 'clients/rust')),
    [RUST_TYPES_FILE]: formatted('rustfmt', rustfmt(root), emitRustTypes(model), join(root, 'clients/rust')),
    [GO_RULES_FILE]: rulesText,
    [RUST_RULES_FILE]: rulesText,
    [PYTHON_RULES_FILE]: emitPythonRules(rules),
  };
}
