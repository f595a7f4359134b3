/**
 * `npm run build` (scripts/build.mjs, run by `npm start`) builds only what changed: nothing
 * when no input changed, the console bundle when one of its inputs did, and it removes the
 * outputs of sources that are gone. It works on a copy of the build the `build` stage made,
 * so that no test pays for a cold compile; that a changed TypeScript input compiles again is
 * the same comparison (bench/build.ts times both).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { ROOT } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

function build(out: string): string {
  const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--out', out], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  return run.stderr;
}

it('builds what changed and nothing else', () => {
  const out = tempDir('agenticdriver-build-');
  cpSync(join(ROOT, 'dist'), out, { recursive: true });
  const bundle = join(out, 'console', 'app.js');
  const bundledAt = statSync(bundle).mtimeMs;

  assert.equal(build(out), 'typescript: up to date\nconsole: up to date\n');
  assert.equal(statSync(bundle).mtimeMs, bundledAt, 'nothing was rebuilt');

  // An output whose source is gone, and a changed console input (as the record of the last build's inputs sees it).
  writeFileSync(join(out, 'shared', 'removed-source.js'), 'export {};\n');
  writeFileSync(join(out, 'shared', 'removed-source.d.ts'), 'export {};\n');
  const stampFile = join(out, '.build-inputs.json');
  const stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as { console: { digest: string } };
  writeFileSync(stampFile, JSON.stringify({ ...stamp, console: { ...stamp.console, digest: 'changed' } }));
  assert.equal(build(out), 'typescript: up to date\ntypescript: removed 2 outputs of deleted sources\nconsole: bundled\n');
  assert.ok(!existsSync(join(out, 'shared', 'removed-source.js')) && existsSync(join(out, 'shared', 'clock.js')));
  assert.ok(statSync(bundle).mtimeMs > bundledAt, 'the console bundle was made again');
  assert.equal(build(out), 'typescript: up to date\nconsole: up to date\n');
});
