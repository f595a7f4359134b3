/**
 * `npm run bench`: every benchmark in turn, each in its own process writing its JSON under
 * bench/results/, then one table of all figures with their baselines and the issue-17
 * targets, written to bench/results/all.json as well.
 *
 *   npm run bench -- [--skip host,provider,decoders,idle,cli,ingest,hostile,startup,governance] [--quick]
 *
 * `--quick` shortens every bench (a smoke run; figures are then rough). The idle-streams
 * row comes from bench/sse-hold.ts when that bench is present (it owns the 10,000 idle
 * SSE streams figure); the CLI rows need `node test/cli-tools/setup.mjs` first, the startup
 * rows a build (`npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const skipIndex = args.indexOf('--skip');
const skip = new Set(skipIndex >= 0 ? args[skipIndex + 1]!.split(',') : []);
const quick = args.includes('--quick');
const here = new URL('.', import.meta.url).pathname;
const results = join(here, 'results');
mkdirSync(results, { recursive: true });

interface Bench {
  key: string;
  script: string;
  args: string[];
}
const BENCHES: Bench[] = [
  { key: 'host', script: 'host-overhead.ts', args: quick ? ['--requests', '500'] : [] },
  { key: 'provider', script: 'provider-path.ts', args: quick ? ['--requests', '300', '--rounds', '1', '--first-event-runs', '20', '--long-events', '5000'] : [] },
  { key: 'decoders', script: 'decoders.ts', args: quick ? ['--rounds', '1'] : [] },
  { key: 'idle', script: 'sse-hold.ts', args: [] },
  { key: 'cli', script: 'cli-warm-cold.ts', args: quick ? ['--runs', '1'] : [] },
  { key: 'ingest', script: 'retrieval-ingest.ts', args: quick ? ['--pdf-pages', '200', '--sections', '1000', '--rounds', '1'] : [] },
  { key: 'hostile', script: 'hostile-ingestion.ts', args: [] },
  { key: 'startup', script: 'cli-startup.ts', args: quick ? ['--runs', '3'] : [] },
  { key: 'governance', script: 'governance.ts', args: quick ? ['--runs', '2000'] : [] },
];

type Row = Record<string, any>;
const collected = new Map<string, Row[] | string>();
for (const bench of BENCHES) {
  if (skip.has(bench.key)) continue;
  const script = join(here, bench.script);
  if (!existsSync(script)) {
    collected.set(bench.key, `not present (${bench.script})`);
    continue;
  }
  const out = join(results, bench.script.replace(/\.ts$/, '.json'));
  console.error(`\n=== ${bench.script}`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', script, ...bench.args, '--json', out], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0 || !existsSync(out)) {
    collected.set(bench.key, `failed (exit ${run.status ?? run.signal})`);
    continue;
  }
  const json = JSON.parse(readFileSync(out, 'utf8')) as { rows?: Row[] } & Row;
  collected.set(bench.key, json.rows ?? [json]);
}

const table: string[][] = [['figure', 'value', 'baseline (same run)', 'ratio', 'target', 'status']];
const fmt = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const status = (ok: boolean, missBy?: string) => (ok ? 'met' : `missed${missBy ? ` by ${missBy}` : ''}`);
const rowsOf = (key: string): Row[] => {
  const value = collected.get(key);
  if (typeof value === 'string') table.push([`${key}: ${value}`, '', '', '', '', '']);
  return Array.isArray(value) ? value : [];
};

for (const row of rowsOf('host')) {
  if (row.target === 'bare node:http') continue;
  const bare = rowsOf('host').find((r) => r.mode === row.mode && r.target === 'bare node:http')!;
  table.push([`host, mock, ${row.mode} c=${row.concurrency} runs/s`, fmt(row.rps), `bare ${fmt(bare.rps)}`, `${row.ratioToBare.toFixed(2)}×`, '', '']);
}

const provider = rowsOf('provider');
/** The host's API kinds, judged against issue 17's goals (not `mock`, nor the floor beside the relay). */
const isApiKind = (target: string) => !['mock', 'floor', 'floor+durable'].includes(target);
for (const row of provider.filter((r) => r.mode)) {
  if (row.target === 'relay') continue;
  const relay = provider.find((r) => r.mode === row.mode && r.concurrency === row.concurrency && r.target === 'relay')!;
  const api = isApiKind(row.target);
  if (row.concurrency === 32) {
    const ok = row.ratioToRelay >= 0.8;
    table.push([`${row.target}, ${row.mode} c=32 runs/s (CPU ${row.cpuPerRun.toFixed(2)} ms/run)`, fmt(row.rps), `relay ${fmt(relay.rps)} (CPU ${relay.cpuPerRun.toFixed(2)})`, `${row.ratioToRelay.toFixed(2)}×`, api ? '≥ 0.80×' : '', api ? status(ok, `${(0.8 - row.ratioToRelay).toFixed(2)}×`) : '']);
  } else {
    const ok = row.p50OverRelay <= 1.5;
    table.push([`${row.target}, ${row.mode} c=1 p50 ms`, row.p50.toFixed(2), `relay ${relay.p50.toFixed(2)}`, `${row.p50OverRelay.toFixed(2)}×`, api ? '≤ 1.5×' : '', api ? status(ok, `${(row.p50OverRelay - 1.5).toFixed(2)}×`) : '']);
  }
}
for (const row of provider.filter((r) => r.metric === 'first-event-over-upstream-ms')) {
  if (row.target === 'relay') continue;
  const relay = provider.find((r) => r.metric === row.metric && r.target === 'relay')!;
  const api = isApiKind(row.target);
  const over = row.value - relay.value;
  table.push([`${row.target}, first text event over upstream first byte (c=1)`, `+${row.value.toFixed(2)} ms`, `relay +${relay.value.toFixed(2)} ms`, `${over >= 0 ? '+' : ''}${over.toFixed(2)} ms`, api ? '≤ relay + 0.5 ms' : '', api ? status(over <= 0.5, `${(over - 0.5).toFixed(2)} ms`) : '']);
}
const longRows = provider.filter((r) => r.metric === 'long-stream-events-per-s');
const longRelay = longRows.find((r) => r.target === 'relay');
for (const row of longRows.filter((r) => r.target !== 'relay')) {
  table.push([`${row.target}, text events/s on one long stream`, fmt(row.value), longRelay ? `relay ${fmt(longRelay.value)}` : '', longRelay ? `${(row.value / longRelay.value).toFixed(2)}×` : '', '', '']);
}

const decoders = rowsOf('decoders');
const esp = decoders.find((r) => String(r.decoder).includes('eventsource-parser'));
for (const row of decoders) {
  const target = row.decoder.startsWith('python') ? 30 : row.decoder.includes('eventsource-parser') ? undefined : 100;
  if (row.mbPerS === undefined) {
    table.push([`decoder: ${row.decoder}`, 'skipped', '', '', target ? `≥ ${target} MB/s` : '', String(row.skipped).slice(0, 60)]);
    continue;
  }
  const isTs = row.decoder.startsWith('ts client');
  table.push([
    `decoder: ${row.decoder}, MB/s`,
    row.mbPerS.toFixed(1),
    isTs && esp?.mbPerS ? `eventsource-parser ${esp.mbPerS.toFixed(1)}` : '',
    isTs && esp?.mbPerS ? `${(row.mbPerS / esp.mbPerS).toFixed(2)}×` : '',
    target ? `≥ ${target} MB/s` : '',
    target ? status(row.mbPerS >= target, `${(target - row.mbPerS).toFixed(1)} MB/s`) : '',
  ]);
}

for (const row of rowsOf('idle')) {
  const rssOk = row.heldRssMB < 1024 && row.endedEarly === 0;
  table.push([`${fmt(row.streams)} idle SSE streams, host RSS holding`, `${fmt(row.heldRssMB)} MB`, `empty ${fmt(row.emptyRssMB)} MB`, '', '< 1 GiB', status(rssOk)]);
  table.push([`  heartbeats within ±1 s of the interval`, `${row.heartbeatsOnTimePct.toFixed(2)} %`, `${row.silentStreams} silent streams`, '', 'on time', status(row.heartbeatsOnTimePct >= 99 && row.silentStreams === 0)]);
  table.push([`  a new run while holding, p50 / max`, `${row.newRunP50Ms.toFixed(1)} / ${row.newRunMaxMs.toFixed(1)} ms`, '', '', 'served promptly', '']);
}

const CLI_BASELINE: Record<string, number> = { codex: 38, 'claude-code': 100, 'gemini-cli': 34 };
for (const row of rowsOf('cli')) {
  const before = CLI_BASELINE[row.target];
  table.push([`CLI warm start to first text, ${row.target} (cold ${fmt(row.coldMs)} ms)`, `${fmt(row.warmMs)} ms`, before ? `recorded ${before} ms` : '', before ? `${(row.warmMs / before).toFixed(2)}×` : '', 'no regression', '']);
}

const INGEST_LABELS: Record<string, string> = {
  'pdf-pages-per-s': 'ingest: PDF pages/s (pdf.js extraction + chunking)',
  'markdown-sections-per-s': 'ingest: Markdown sections/s (extraction + chunking)',
};
for (const row of rowsOf('ingest')) {
  const label = INGEST_LABELS[row.metric];
  if (label) table.push([`${label}, ${fmt(row.units)} in ${row.documents} files`, fmt(row.value), '', '', '', '']);
}

const hostile = rowsOf('hostile');
const idleHealth = hostile.find((row) => row.scenario === 'idle host (baseline)');
for (const row of hostile.filter((r) => r !== idleHealth)) {
  table.push([
    `hostile ingestion: ${row.scenario}, slowest GET /health (host loop ${Number(row.hostLoopMaxMs).toFixed(0)} ms)`,
    `${Number(row.slowestMs).toFixed(0)} ms`,
    idleHealth ? `idle ${Number(idleHealth.slowestMs).toFixed(0)} ms` : '',
    '',
    '≤ 50 ms',
    status(row.slowestMs <= 50, `${(row.slowestMs - 50).toFixed(0)} ms`),
  ]);
  table.push([`  host RSS growth, peak (${row.outcomes})`, `${Number(row.peakGrowthMb ?? row.rssGrowthMb).toFixed(0)} MB`, '', '', 'bounded', '']);
  if (row.otherSubjectSmallPdfMs !== undefined) table.push([`  the other subject's small PDF`, `${Number(row.otherSubjectSmallPdfMs).toFixed(0)} ms`, 'before: 35,000 ms', '', '', '']);
}

const startup = rowsOf('startup');
const version = startup.find((row) => row.command === '--version');
for (const row of startup.filter((entry) => entry.command !== '--version')) {
  table.push([
    `CLI \`${row.command}\` as a whole process, wall p50 (CPU ${fmt(row.cpuMedianMs)} ms)`,
    `${fmt(row.wallMedianMs)} ms`,
    version ? `--version ${fmt(version.wallMedianMs)} ms` : '',
    version ? `${(row.wallMedianMs / version.wallMedianMs).toFixed(2)}×` : '',
    `≤ ${row.targetMs} ms`,
    status(row.wallMedianMs <= row.targetMs, `${fmt(row.wallMedianMs - row.targetMs)} ms`),
  ]);
}

for (const row of rowsOf('governance')) {
  if (row.metric === 'governance-checks-cpu-ms-per-run') {
    table.push([
      'governance checks, CPU per run (3 scopes, 8 counters)',
      `${row.value.toFixed(4)} ms`,
      `mock run ${row.baseline.toFixed(4)} ms`,
      `${(row.value / row.baseline).toFixed(3)}×`,
      `≤ ${row.goal} ms`,
      status(row.met, `${(row.value - row.goal).toFixed(4)} ms`),
    ]);
  } else {
    table.push(['  with the SQLite store\'s transactions, CPU per run', `${row.value.toFixed(4)} ms`, `mock run ${row.baseline.toFixed(4)} ms`, `${(row.value / row.baseline).toFixed(2)}×`, '', '']);
  }
}

const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
console.log(`\nAll benchmark figures (node ${process.version}; ratios compare figures measured in the same run)`);
for (const [index, row] of table.entries()) {
  console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
  if (index === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
}
const allJson = join(results, 'all.json');
writeFileSync(allJson, `${JSON.stringify({ at: new Date().toISOString(), node: process.version, table, benches: Object.fromEntries(collected) }, null, 2)}\n`);
console.log(`\nwrote ${allJson}`);
