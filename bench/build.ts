/**
 * What `npm start` spends on building (issue 26, item 12): scripts/build.mjs into a temp
 * folder — a cold build (tsc and the console bundle), a rebuild after a change (the stamp of
 * inputs differs: tsc's incremental pass and the console bundle again, as after a `git pull`
 * that touched both), and a rebuild with nothing changed (what `npm start` costs every time
 * after the first). Wall time and the CPU time of the build's processes (Linux /proc), median
 * of the rounds.
 *
 *   npx tsx bench/build.ts [--rounds N] [--json FILE]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, json: { type: 'string' } } });
const rounds = Number(values.rounds);
const root = join(import.meta.dirname, '..');
const out = mkdtempSync(join(tmpdir(), 'agenticdriver-bench-build-'));

/** CPU seconds used by this process's finished children so far (cutime + cstime from /proc). */
function childrenCpu(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** One build: its wall time and the CPU time of its processes. */
function build(): { wall: number; cpu: number } {
  const cpuBefore = childrenCpu();
  const started = performance.now();
  const result = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--out', out], { stdio: 'inherit' });
  const wall = (performance.now() - started) / 1000;
  if (result.status !== 0) throw new Error(`the build failed (exit ${result.status})`);
  return { wall, cpu: childrenCpu() - cpuBefore };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const samples: Record<string, { wall: number[]; cpu: number[] }> = { cold: { wall: [], cpu: [] }, changed: { wall: [], cpu: [] }, unchanged: { wall: [], cpu: [] } };
const record = (name: string, sample: { wall: number; cpu: number }) => {
  samples[name]!.wall.push(sample.wall);
  samples[name]!.cpu.push(sample.cpu);
};

try {
  for (let round = 0; round < rounds; round += 1) {
    rmSync(out, { recursive: true, force: true });
    record('cold', build());
    // A changed input: the stamp no longer matches, so both steps run again (tsc incrementally).
    writeFileSync(join(out, '.build-inputs.json'), '{}');
    record('changed', build());
    record('unchanged', build());
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}

const rows = Object.entries(samples).map(([name, { wall, cpu }]) => ({ build: name, wallSeconds: median(wall), cpuSeconds: median(cpu) }));
console.log(`\nscripts/build.mjs, median of ${rounds} rounds:`);
for (const row of rows) console.log(`  ${row.build.padEnd(10)} wall ${row.wallSeconds.toFixed(2).padStart(6)} s   CPU ${row.cpuSeconds.toFixed(2).padStart(6)} s`);
if (values.json) writeFileSync(values.json, JSON.stringify({ rows }, null, 2));
