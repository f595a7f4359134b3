/**
 * How long a client command of the built CLI takes as a whole process (issue 26: ≤ 0.3 s;
 * `status` took 1.57 s, `--version` 0.17 s). Starts a host from the built CLI on a fresh
 * config, then runs each command in turn, round after round, and prints the median and
 * spread of wall time and CPU time (user + system, from /proc on Linux) per command.
 *
 *   npm run build && npx tsx bench/cli-startup.ts [--runs N] [--json FILE]
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const args = process.argv.slice(2);
const option = (name: string) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const runs = Number(option('--runs') ?? 10);
const jsonFile = option('--json');
const TARGET_MS = 300;

const root = join(import.meta.dirname, '..');
const main = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  console.error('bench/cli-startup.ts times the built CLI: run `npm run build` first.');
  process.exit(1);
}

/** CPU seconds of every child this process has reaped so far (cutime + cstime), or undefined off Linux. */
function childCpuMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    // After "pid (comm) ", cutime and cstime are fields 14 and 15 (0-based from state).
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'ad-bench-cli-'));
const config = join(dir, 'config.json');
const env = { ...process.env, AGENTICDRIVER_CONFIG: '' };
const host = spawn(process.execPath, [main, 'serve', '--init', '--config', config, '--port', '0', '--json'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
try {
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: host.stdout! }).once('line', resolve);
    host.once('exit', (code) => reject(new Error(`the host exited (${code}) before listening`)));
  });
  const url = (JSON.parse(line) as { url: string }).url;
  const client = ['--config', config, '--url', url];
  const commands: { name: string; argv: string[] }[] = [
    { name: '--version', argv: ['--version'] },
    { name: 'status --json', argv: ['status', ...client, '--json'] },
    { name: 'run (mock)', argv: ['run', ...client, '--provider', 'mock', '--model', 'demo', '--input', 'Hello'] },
    { name: 'sessions list', argv: ['sessions', 'list', ...client, '--json'] },
    { name: 'providers list', argv: ['providers', 'list', '--config', config, '--json'] },
  ];
  const samples = new Map(commands.map((command) => [command.name, { wall: [] as number[], cpu: [] as number[] }]));
  for (const command of commands) spawnSync(process.execPath, [main, ...command.argv], { env }); // warm the file cache
  for (let round = 0; round < runs; round += 1) {
    for (const command of commands) {
      const cpuBefore = childCpuMs();
      const started = performance.now();
      const result = spawnSync(process.execPath, [main, ...command.argv], { env, encoding: 'utf8' });
      const wall = performance.now() - started;
      const cpuAfter = childCpuMs();
      if (result.status !== 0) throw new Error(`${command.name} failed: ${result.stderr}`);
      samples.get(command.name)!.wall.push(wall);
      if (cpuBefore !== undefined && cpuAfter !== undefined) samples.get(command.name)!.cpu.push(cpuAfter - cpuBefore);
    }
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
  };
  const rows = commands.map(({ name }) => {
    const { wall, cpu } = samples.get(name)!;
    return { command: name, runs, wallMedianMs: median(wall), wallMinMs: Math.min(...wall), wallMaxMs: Math.max(...wall), cpuMedianMs: median(cpu), targetMs: TARGET_MS };
  });
  const version = rows[0]!;
  console.log(`CLI commands as whole processes (built CLI, node ${process.version}, ${runs} rounds, load average ${readLoad()}); target ≤ ${TARGET_MS} ms wall`);
  console.log(['command'.padEnd(16), 'wall p50', '   min', '   max', 'CPU p50', '×--version', 'target'].join('  '));
  for (const row of rows) {
    const ratio = row.wallMedianMs / version.wallMedianMs;
    const verdict = row.command === '--version' ? '' : row.wallMedianMs <= TARGET_MS ? 'met' : `missed by ${Math.round(row.wallMedianMs - TARGET_MS)} ms`;
    console.log(
      [row.command.padEnd(16), fmt(row.wallMedianMs).padStart(8), fmt(row.wallMinMs).padStart(6), fmt(row.wallMaxMs).padStart(6), fmt(row.cpuMedianMs).padStart(7), `${ratio.toFixed(2)}×`.padStart(10), verdict].join('  '),
    );
  }
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify({ rows }, null, 2)}\n`);
} finally {
  host.kill('SIGTERM');
  await new Promise((resolve) => (host.exitCode !== null ? resolve(undefined) : host.once('exit', resolve)));
  rmSync(dir, { recursive: true, force: true });
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? `${Math.round(ms)} ms` : 'n/a';
}

function readLoad(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!;
  } catch {
    return 'n/a';
  }
}
