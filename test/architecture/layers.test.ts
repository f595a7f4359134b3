// The layer order and the no-cycle rule (.dependency-cruiser.cjs) hold for src/, and the same
// check demonstrably fails on a wrong-way import and on an import cycle (the fixture tree).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const config = join(root, '.dependency-cruiser.cjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** The violations as JSON (that reporter always exits 0). */
function violations(cwd: string): Violation[] {
  const result = spawnSync(process.execPath, [bin, 'src', '--config', config, '--output-type', 'json'], { cwd, encoding: 'utf8' });
  return (JSON.parse(result.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

/** The exit status of the command the test stage runs (scripts/test.mjs, stage "layers"). */
function stageStatus(cwd: string): number | null {
  return spawnSync(process.execPath, [bin, 'src', '--config', config], { cwd, encoding: 'utf8' }).status;
}

describe('layers', () => {
  it('src/ imports only downward and has no cycles', () => {
    assert.deepEqual(violations(root), []);
  });

  it('a provider importing the host and a type-only cycle both fail the check', () => {
    const fixture = join(import.meta.dirname, 'fixtures', 'wrong-way');
    assert.notEqual(stageStatus(fixture), 0);
    const found = violations(fixture).map((violation) => `${violation.rule.name}: ${violation.from} -> ${violation.to}`).sort();
    assert.deepEqual(found, ['layer-providers: src/providers/adapter.ts -> src/host/server.ts', 'no-circular: src/runtime/driver.ts -> src/runtime/loop.ts']);
  });
});
