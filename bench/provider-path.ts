/**
 * The provider path (issue 17): the real host running `openai-compatible`, `openai`,
 * `anthropic` and `gemini` instances (and `mock`) against a lean loopback upstream that
 * answers instantly in each vendor's format, next to a bare node:http relay to the same
 * upstream as the baseline — all in one run, rounds interleaved, medians printed. Beside
 * them, the floor (bench/floor-server.ts): the least a server doing the host's job does, lean
 * and with its durable records, so that each target can be read against what no host can beat.
 *
 * Rows: JSON and SSE runs at c = 1 and c = 32 (runs/s, p50, p99, server CPU per run, ratio
 * to the relay); first text event over the upstream's own first byte (c = 1); text events
 * relayed per second on one long stream.
 *
 *   npx tsx bench/provider-path.ts [--requests N] [--rounds R] [--only KIND] [--modes json,sse] [--concurrency 1,32] [--load-only] [--dist] [--compare DIR] [--json FILE]
 *   AD_BENCH_HOST_FLAGS='--cpu-prof --cpu-prof-dir=DIR' npx tsx bench/provider-path.ts --only openai-compatible   # profile the host
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { API_KINDS } from './provider-servers.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1]! : fallback;
};
const REQUESTS = Number(option('requests', '2000'));
const ROUNDS = Number(option('rounds', '3'));
const FIRST_EVENT_RUNS = Number(option('first-event-runs', '200'));
const LONG_EVENTS = Number(option('long-events', '50000'));
const JSON_OUT = option('json', new URL('./results/provider-path.json', import.meta.url).pathname);
const TOKEN = 'bench-token-0123456789abcdefghijklmnop';
const CONCURRENCIES = option('concurrency', '1,32').split(',').map(Number);
const MODES = option('modes', 'json,sse').split(',');
/** --load-only: just the load rows (e.g. for a CPU profile of one mode and concurrency). */
const LOAD_ONLY = args.includes('--load-only');
/** The floor of the job beside the relay (bench/floor-server.ts), in every run whatever --only says. */
const FLOORS = ['floor', 'floor+durable'];
/** --dist: the built host (`npm run build` first; with --compare, in that tree too), as `npm start` runs it. */
const DIST = args.includes('--dist');

interface Proc {
  url: string;
  child: ChildProcess;
}

async function start(role: string, env: Record<string, string> = {}, tree?: string): Promise<Proc> {
  const flags = role === 'host' ? (process.env.AD_BENCH_HOST_FLAGS ?? '').split(' ').filter(Boolean) : [];
  const script = tree ? join(tree, 'bench/provider-servers.ts') : new URL('./provider-servers.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', script, role], {
    ...(tree ? { cwd: tree } : {}),
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, AD_BENCH_DIST: DIST ? '1' : '0', AD_BENCH_TOKEN: TOKEN, AD_BENCH_VENDOR_KEY: 'sk-bench', AD_BENCH_LONG_EVENTS: String(LONG_EVENTS), ...env },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

/** User + system CPU of a process so far, in ms (Linux /proc, 100 Hz ticks). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Target {
  name: string;
  proc: Proc;
  path: string;
  body: string;
}

function once(target: Target, agent: Agent, streaming: boolean, onFirstText?: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${target.proc.url}${target.path}`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(target.body),
          ...(streaming ? { accept: 'text/event-stream' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (onFirstText && chunk.includes('tok0')) {
            onFirstText();
            onFirstText = undefined;
          }
          text += chunk;
        });
        res.on('end', () => (res.statusCode === 200 && text.includes('tok17') ? resolve() : reject(new Error(`${target.name}: status ${res.statusCode}: ${text.slice(0, 300)}`))));
      },
    );
    req.on('error', reject);
    req.end(target.body);
  });
}

interface LoadRow {
  rps: number;
  p50: number;
  p99: number;
  cpuPerRun: number;
}

async function load(target: Target, streaming: boolean, concurrency: number, total: number): Promise<LoadRow> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let next = 0;
  const cpu0 = cpuMs(target.proc.child.pid!);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next += 1;
        const t0 = performance.now();
        await once(target, agent, streaming);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuMs(target.proc.child.pid!) - cpu0;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { rps: total / seconds, p50: pick(0.5), p99: pick(0.99), cpuPerRun: cpu / total };
}

/** Median time to the first text byte, sequential runs. */
async function firstText(target: Target, runs: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const t0 = performance.now();
    let t = 0;
    await once(target, agent, true, () => (t = performance.now() - t0));
    times.push(t);
  }
  agent.destroy();
  return median(times);
}

/** Text events per second through one long SSE stream; counts `tN ` deltas as they arrive. */
function longStream(target: Target): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(`${target.proc.url}${target.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(target.body), accept: 'text/event-stream' },
    });
    req.on('response', (res) => {
      let bytes = 0;
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        bytes += chunk.length;
        tail = chunk.slice(-64);
      });
      res.on('end', () => {
        const seconds = (performance.now() - t0) / 1000;
        if (res.statusCode !== 200 || !/finishReason|DONE/.test(tail)) reject(new Error(`${target.name}: long stream ended badly (${res.statusCode}, ${bytes} bytes): ${tail}`));
        else resolve(LONG_EVENTS / seconds);
      });
    });
    req.on('error', reject);
    req.end(target.body);
  });
}

/**
 * Issue 30's targets, each as figure / same-run baseline / ratio / met or missed, with the
 * `--compare` host's figure (`@before`) beside it when there is one.
 */
function printTargets(rows: Record<string, any>[]): void {
  const load = (mode: string, concurrency: number, target: string) => rows.find((r) => r.mode === mode && r.concurrency === concurrency && r.target === target);
  const first = (target: string) => rows.find((r) => r.metric === 'first-event-over-upstream-ms' && r.target === target);
  const lines: string[][] = [['target', 'figure', 'baseline (same run)', 'ratio', 'goal', 'status', 'before']];
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const before = (name: string, pick: (name: string) => string | undefined) => (compareTree ? (pick(`${name}@before`) ?? '') : '');
  const relayCpu = (mode: string) => load(mode, 32, 'relay');
  const cpuGoal = (name: string, goal: number) => {
    for (const mode of MODES) {
      const row = load(mode, 32, name);
      const relay = relayCpu(mode);
      if (!row || !relay) continue;
      const cpuOf = (target: string) => load(mode, 32, target)?.cpuPerRun.toFixed(3);
      lines.push([`CPU/run ${name} ${mode} c=32`, `${row.cpuPerRun.toFixed(3)} ms`, `relay ${relay.cpuPerRun.toFixed(3)} ms`, `${(row.cpuPerRun / relay.cpuPerRun).toFixed(2)}×`, `≤ ${goal.toFixed(2)} ms`, verdict(row.cpuPerRun <= goal), before(name, cpuOf)]);
    }
  };
  cpuGoal('mock', 0.1);
  cpuGoal('openai-compatible', 0.2);
  // The floor against the same goal: where it misses too, no design of the host can meet it.
  for (const name of FLOORS) cpuGoal(name, 0.2);
  for (const [mode, goal] of [['json', 0.4], ['sse', 0.6]] as const) {
    for (const name of ['openai-compatible', ...FLOORS]) {
      const row = load(mode, 32, name);
      const relay = load(mode, 32, 'relay');
      if (!row || !relay) continue;
      const ratioOf = (target: string) => load(mode, 32, target)?.ratioToRelay.toFixed(2).concat('×');
      lines.push([`runs/s ${name} ${mode} c=32`, row.rps.toFixed(0), `relay ${relay.rps.toFixed(0)}`, `${row.ratioToRelay.toFixed(2)}×`, `≥ ${goal.toFixed(2)}× (long-term 0.80×)`, verdict(row.ratioToRelay >= goal), before(name, ratioOf)]);
    }
  }
  const firstRelay = first('relay');
  const p50Relay = load('json', 1, 'relay');
  for (const name of ['openai-compatible', ...FLOORS]) {
    const firstRow = first(name);
    if (firstRow && firstRelay) {
      const over = firstRow.value - firstRelay.value;
      const overOf = (target: string) => {
        const found = first(target);
        return found ? `+${(found.value - firstRelay.value).toFixed(2)} ms` : undefined;
      };
      lines.push([`first text event ${name} c=1`, `+${firstRow.value.toFixed(2)} ms`, `relay +${firstRelay.value.toFixed(2)} ms`, `+${over.toFixed(2)} ms`, '≤ relay + 0.30 ms', verdict(over <= 0.3), before(name, overOf)]);
    }
    const p50 = load('json', 1, name);
    if (p50 && p50Relay) {
      const p50Of = (target: string) => load('json', 1, target)?.p50OverRelay.toFixed(2).concat('×');
      lines.push([`JSON p50 ${name} c=1`, `${p50.p50.toFixed(2)} ms`, `relay ${p50Relay.p50.toFixed(2)} ms`, `${p50.p50OverRelay.toFixed(2)}×`, '≤ 1.50×', verdict(p50.p50OverRelay <= 1.5), before(name, p50Of)]);
    }
  }
  for (const mode of MODES) {
    const reference = load(mode, 32, 'openai-compatible');
    if (!reference) continue;
    for (const kind of API_KINDS.filter((k) => k !== 'openai-compatible')) {
      const row = load(mode, 32, kind);
      if (!row) continue;
      const ratio = row.cpuPerRun / reference.cpuPerRun;
      lines.push([`CPU/run ${kind} ${mode} c=32`, `${row.cpuPerRun.toFixed(3)} ms`, `openai-compatible ${reference.cpuPerRun.toFixed(3)} ms`, `${ratio.toFixed(2)}×`, '≤ 1.20×', verdict(ratio <= 1.2), '']);
    }
  }
  if (lines.length === 1) return;
  const widths = lines[0]!.map((_, column) => Math.max(...lines.map((line) => line[column]!.length)));
  console.log('\nissue 30 targets (figure / same-run baseline / ratio / goal / status / --compare host):');
  for (const line of lines) console.log(`  ${line.map((cell, column) => cell.padEnd(widths[column]!)).join('  ')}`);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const upstream = await start('upstream');
const env = { AD_BENCH_UPSTREAM: upstream.url };
const [relay, host, floorLean, floorDurable] = await Promise.all([start('relay', env), start('host', env), start('floor', env), start('floor-durable', env)]);
// --compare DIR: a second host built from another checkout (e.g. the commit before this
// work, with this bench's provider-servers.ts and floor-server.ts copied in), measured in the same run as `KIND@before`.
const compareTree = option('compare', '');
const before = compareTree ? await start('host', env, compareTree) : undefined;
const runBody = (provider: string, model = 'demo') => JSON.stringify({ provider, model, input: 'Hello' });
const targets: Target[] = [
  { name: 'relay', proc: relay, path: '/v1/runs', body: '{}' },
  // The least a server doing the host's job does (bench/floor-server.ts): what no design of the host can go below.
  { name: 'floor', proc: floorLean, path: '/v1/runs', body: runBody('openai-compatible') },
  { name: 'floor+durable', proc: floorDurable, path: '/v1/runs', body: runBody('openai-compatible') },
  { name: 'mock', proc: host, path: '/v1/runs', body: JSON.stringify({ provider: 'mock', model: 'demo', input: 'tok0 tok17' }) },
  ...API_KINDS.map((kind) => ({ name: kind, proc: host, path: '/v1/runs', body: runBody(kind) })),
  ...(before ? [{ name: 'mock@before', proc: before, path: '/v1/runs', body: JSON.stringify({ provider: 'mock', model: 'demo', input: 'tok0 tok17' }) }] : []),
  ...(before ? API_KINDS.map((kind) => ({ name: `${kind}@before`, proc: before, path: '/v1/runs', body: runBody(kind) })) : []),
];
const only = option('only', '');
if (only) targets.splice(0, targets.length, ...targets.filter((t) => ['relay', ...FLOORS].includes(t.name) || only.split(',').includes(t.name.split('@')[0]!)));
const direct: Target = { name: 'upstream', proc: upstream, path: '/v1/chat/completions', body: JSON.stringify({ model: 'demo', stream: true, stream_options: { include_usage: true }, messages: [] }) };

try {
  console.log(`provider path: ${REQUESTS} runs per row at c=32 (${Math.max(200, REQUESTS / 10)} at c=1), ${ROUNDS} interleaved rounds, medians; node ${process.version}; host ${DIST ? 'built (dist/)' : 'from sources (tsx)'}`);
  const samples = new Map<string, LoadRow[]>();
  const firstSamples = new Map<string, number[]>();
  const longSamples = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const streaming of MODES.map((mode) => mode === 'sse')) {
      for (const concurrency of CONCURRENCIES) {
        const total = concurrency === 1 ? Math.max(200, REQUESTS / 10) : REQUESTS;
        for (const target of targets) {
          if (round === 0) await load(target, streaming, concurrency, Math.min(500, total)); // warm-up
          const row = await load(target, streaming, concurrency, total);
          const key = `${streaming ? 'sse' : 'json'}|${concurrency}|${target.name}`;
          samples.set(key, [...(samples.get(key) ?? []), row]);
        }
      }
    }
    for (const target of LOAD_ONLY ? [] : [direct, ...targets]) {
      const ms = await firstText(target, FIRST_EVENT_RUNS);
      firstSamples.set(target.name, [...(firstSamples.get(target.name) ?? []), ms]);
    }
    for (const target of LOAD_ONLY ? [] : [
      { ...targets[0]!, path: '/v1/runs?long' },
      ...targets.filter((t) => t.name.split('@')[0] === 'openai-compatible').map((t) => ({ ...t, body: runBody('openai-compatible', 'long') })),
    ]) {
      const rate = await longStream(target);
      longSamples.set(target.name, [...(longSamples.get(target.name) ?? []), rate]);
    }
    process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
  }

  const rows: Record<string, unknown>[] = [];
  console.log('\nmode  c   target             runs/s   ×relay   p50 ms  p99 ms  CPU ms/run');
  for (const streaming of MODES.map((mode) => mode === 'sse')) {
    for (const concurrency of CONCURRENCIES) {
      const mode = streaming ? 'sse' : 'json';
      const med = (name: string) => {
        const list = samples.get(`${mode}|${concurrency}|${name}`)!;
        return { rps: median(list.map((r) => r.rps)), p50: median(list.map((r) => r.p50)), p99: median(list.map((r) => r.p99)), cpuPerRun: median(list.map((r) => r.cpuPerRun)) };
      };
      const base = med('relay');
      for (const target of targets) {
        const r = med(target.name);
        const ratio = r.rps / base.rps;
        rows.push({ bench: 'provider-path', mode, concurrency, target: target.name, ...r, ratioToRelay: ratio, p50OverRelay: r.p50 / base.p50 });
        console.log(
          `${mode.padEnd(4)}  ${String(concurrency).padEnd(2)}  ${target.name.padEnd(17)}  ${r.rps.toFixed(0).padStart(7)}  ${ratio.toFixed(2).padStart(6)}×  ${r.p50.toFixed(2).padStart(6)}  ${r.p99.toFixed(2).padStart(6)}  ${r.cpuPerRun.toFixed(3).padStart(9)}`,
        );
      }
    }
  }
  const upstreamFirst = LOAD_ONLY ? 0 : median(firstSamples.get('upstream')!);
  console.log(`\nfirst text event, c=1 (median of ${FIRST_EVENT_RUNS} runs × ${ROUNDS} rounds), over the upstream's own first byte ${upstreamFirst.toFixed(3)} ms:`);
  for (const target of LOAD_ONLY ? [] : targets) {
    const over = median(firstSamples.get(target.name)!) - upstreamFirst;
    rows.push({ bench: 'provider-path', metric: 'first-event-over-upstream-ms', target: target.name, value: over });
    console.log(`  ${target.name.padEnd(17)} +${over.toFixed(3)} ms`);
  }
  console.log(`\none long stream of ${LONG_EVENTS} text chunks (median of ${ROUNDS}):`);
  for (const [name, list] of longSamples) {
    rows.push({ bench: 'provider-path', metric: 'long-stream-events-per-s', target: name, value: median(list) });
    console.log(`  ${name.padEnd(17)} ${median(list).toFixed(0).padStart(8)} events/s`);
  }
  printTargets(rows);
  mkdirSync(dirname(JSON_OUT), { recursive: true });
  writeFileSync(JSON_OUT, `${JSON.stringify({ node: process.version, requests: REQUESTS, rounds: ROUNDS, at: new Date().toISOString(), rows }, null, 2)}\n`);
  console.log(`\nwrote ${JSON_OUT}`);
} finally {
  for (const proc of [upstream, relay, host, floorLean, floorDurable, ...(before ? [before] : [])]) proc.child.kill('SIGTERM');
}
