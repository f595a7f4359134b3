import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { goRuleName, GO_FILE } from '../../scripts/protocol-clients/go.js';
import { GO_TYPES_FILE } from '../../scripts/protocol-clients/go-types.js';
import { portablePattern, wireModel } from '../../scripts/protocol-clients/model.js';
import { emitPythonTypes, PYTHON_TYPES_FILE } from '../../scripts/protocol-clients/python-types.js';
import { pythonCheckName, PYTHON_FILE } from '../../scripts/protocol-clients/python.js';
import { emitRustTypes, RUST_TYPES_FILE } from '../../scripts/protocol-clients/rust-types.js';
import { emitRust, rustCheckName, RUST_FILE } from '../../scripts/protocol-clients/rust.js';

const root = join(import.meta.dirname, '..', '..');
const document = JSON.parse(readFileSync(join(root, 'protocol/schemas/agenticdriver.schema.json'), 'utf8')) as {
  $defs: Record<string, Record<string, unknown>>;
};

describe('generated client wire layers', () => {
  it('match the published schema document (npm run protocol regenerates them)', () => {
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/generate-protocol.ts', '--check'], { cwd: root, stdio: 'pipe' });
  });

  it('give every named schema and every event type a rule in each client', () => {
    const model = wireModel(document);
    assert.equal(model.definitions.length, Object.keys(document.$defs).length);
    const go = readFileSync(join(root, GO_FILE), 'utf8');
    for (const name of Object.keys(document.$defs)) assert.match(go, new RegExp(`^var ${goRuleName(name)} = `, 'm'), name);
    const python = readFileSync(join(root, PYTHON_FILE), 'utf8');
    for (const name of Object.keys(document.$defs)) assert.match(python, new RegExp(`^${pythonCheckName(name)}: Check = `, 'm'), name);
    for (const event of model.events) assert.ok(python.includes(`    "${event.type}": ${pythonCheckName(event.definition)},\n`), event.type);
    const rust = readFileSync(join(root, RUST_FILE), 'utf8');
    for (const name of Object.keys(document.$defs)) assert.match(rust, new RegExp(`^pub fn ${rustCheckName(name)}\\(v: &Value, p: &str\\) -> Checked<\\(\\)> \\{`, 'm'), name);
    for (const event of model.events) assert.ok(rust.includes(`"${event.type}" => ${rustCheckName(event.definition)},`), event.type);
    for (const event of model.events) assert.match(go, new RegExp(`"${event.type.replaceAll('.', '\\.')}":\\s+${goRuleName(event.definition)},`), event.type);
  });

  it('refuse a keyword the emitters do not understand instead of dropping it', () => {
    assert.throws(() => wireModel({ $defs: { Odd: { type: 'string', multipleOf: 2 } } }), /unsupported keyword "multipleOf"/);
    assert.throws(() => wireModel({ $defs: { Odd: { $ref: '#/$defs/Missing' } } }), /unknown Missing/);
  });

  it('name every object the Python types need', () => {
    assert.throws(
      () => emitPythonTypes(wireModel({ $defs: { Outer: { type: 'object', required: ['inner'], properties: { inner: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } } } } } })),
      /name the object at Outer\.inner/,
    );
    const types = readFileSync(join(root, PYTHON_TYPES_FILE), 'utf8');
    for (const name of ['RunRequest', 'RunResult', 'RetrievalHit', 'SourceLocation', 'ApplicationTool', 'ToolExecutionOutput']) {
      assert.match(types, new RegExp(`^class ${name}\\(`, 'm'), name);
    }
    assert.match(types, /^RunEvent = Union\[RunStartedEvent, /m);
  });

  it('generate the Go wire structs under their public names, each once', () => {
    const types = readFileSync(join(root, GO_TYPES_FILE), 'utf8');
    const handWritten = readFileSync(join(root, 'clients/go/types.go'), 'utf8');
    for (const name of ['RunRequest', 'RunResult', 'RetrievalHit', 'SourceLocation', 'ApplicationTool', 'OutputArtifact', 'ApprovalDecision']) {
      assert.match(types, new RegExp(`^type ${name} struct \\{`, 'm'), name);
      assert.doesNotMatch(handWritten, new RegExp(`^type ${name} struct`, 'm'), name);
    }
  });

  it('generate the Rust wire structs and enums under their public names, each once', () => {
    const types = readFileSync(join(root, RUST_TYPES_FILE), 'utf8');
    const handWritten = readFileSync(join(root, 'clients/rust/src/types.rs'), 'utf8');
    assert.match(handWritten, /^pub use crate::generated::types::\*;$/m);
    for (const name of ['RunRequest', 'RunResult', 'RetrievalHit', 'SourceLocation', 'DecidedCall', 'Capabilities', 'Usage']) {
      assert.match(types, new RegExp(`^pub struct ${name} \\{`, 'm'), name);
      assert.doesNotMatch(handWritten, new RegExp(`^pub struct ${name}\\b`, 'm'), name);
    }
    for (const name of ['Role', 'IdlePolicy', 'AuthMode', 'ApprovalAction', 'ProgressPhase']) {
      assert.match(types, new RegExp(`^pub enum ${name} \\{`, 'm'), name);
      assert.equal(types.split(`pub enum ${name} {`).length, 2, name);
    }
    // Request shapes reject unknown fields; response shapes ignore them.
    assert.match(types, /#\[serde\(rename_all = "camelCase", deny_unknown_fields\)\]\npub struct RunRequest \{/);
    assert.match(types, /#\[serde\(rename_all = "camelCase"\)\]\npub struct RunResult \{/);
    const inner = { type: 'object', required: ['a'], properties: { a: { type: 'string' } } };
    const runRequest = document.$defs.RunRequest!;
    const changed = { $defs: { ...document.$defs, RunRequest: { ...runRequest, properties: { ...(runRequest.properties as object), inner } } } };
    assert.throws(() => emitRustTypes(wireModel(changed)), /name the object at RunRequest\.inner/);
  });

  it('stop on a pattern the Rust client has no matcher for', () => {
    assert.throws(() => emitRust(wireModel({ $defs: { Odd: { type: 'string', pattern: '^x+$' } } })), /no Rust matcher for the pattern \^x\+\$/);
  });

  it('keep ECMAScript pattern meaning in RE2 and Python re', () => {
    assert.equal(portablePattern('^\\d{2}$', 'go'), '^[0-9]{2}$');
    assert.equal(portablePattern('^\\d{2}$', 'python'), '^[0-9]{2}\\Z');
    assert.equal(portablePattern('^[^\\u0000-\\u001f]+$', 'go'), '^[^\\x{0000}-\\x{001f}]+$');
    assert.ok(portablePattern('\\S', 'go').startsWith('[^\\t\\n\\v\\f\\r \\x{a0}'));
  });
});
