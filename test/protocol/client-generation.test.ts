import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { goRuleName, GO_FILE } from '../../scripts/protocol-clients/go.js';
import { portablePattern, wireModel } from '../../scripts/protocol-clients/model.js';
import { pythonCheckName, PYTHON_FILE } from '../../scripts/protocol-clients/python.js';

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
    for (const event of model.events) assert.match(go, new RegExp(`"${event.type.replaceAll('.', '\\.')}":\\s+${goRuleName(event.definition)},`), event.type);
  });

  it('refuse a keyword the emitters do not understand instead of dropping it', () => {
    assert.throws(() => wireModel({ $defs: { Odd: { type: 'string', multipleOf: 2 } } }), /unsupported keyword "multipleOf"/);
    assert.throws(() => wireModel({ $defs: { Odd: { $ref: '#/$defs/Missing' } } }), /unknown Missing/);
  });

  it('keep ECMAScript pattern meaning in RE2 and Python re', () => {
    assert.equal(portablePattern('^\\d{2}$', 'go'), '^[0-9]{2}$');
    assert.equal(portablePattern('^\\d{2}$', 'python'), '^[0-9]{2}\\Z');
    assert.equal(portablePattern('^[^\\u0000-\\u001f]+$', 'go'), '^[^\\x{0000}-\\x{001f}]+$');
    assert.ok(portablePattern('\\S', 'go').startsWith('[^\\t\\n\\v\\f\\r \\x{a0}'));
  });
});
