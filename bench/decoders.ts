/**
 * Client SSE decoders over one recorded ~100 MB event stream (bench/decoders/stream.ts):
 * the TypeScript client's SseFrameReader next to `eventsource-parser` in the same process
 * and rounds (interleaved, medians), then the Go client (a Go benchmark), the Python client
 * (scripts/bench_sse.py) and the Rust client (an ignored test run in release mode). Every
 * decoder is fed 64 KiB reads and counts the frames it returns. A language whose toolchain
 * is missing is reported as skipped.
 *
 *   npx tsx bench/decoders.ts [--rounds R] [--only ts,go,python,rust] [--json FILE]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { SseFrameReader } from '../src/client/sse.js';
import { ensureStream } from './decoders/stream.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1]! : fallback;
};
const ROUNDS = Number(option('rounds', '5'));
const ONLY = option('only', 'ts,go,python,rust').split(',');
const JSON_OUT = option('json', new URL('./results/decoders.json', import.meta.url).pathname);
const root = new URL('..', import.meta.url).pathname;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const stream = ensureStream();
const body = readFileSync(stream.path);
const reads: Uint8Array[] = [];
for (let offset = 0; offset < body.length; offset += 65_536) reads.push(body.subarray(offset, offset + 65_536));
const mb = body.length / 1e6;

function timeIt(decode: () => number): { mbPerS: number; frames: number } {
  const started = performance.now();
  const frames = decode();
  return { mbPerS: mb / ((performance.now() - started) / 1000), frames };
}

const tsDecoders: Record<string, () => number> = {
  'ts client (SseFrameReader)': () => {
    const reader = new SseFrameReader();
    let frames = 0;
    for (const read of reads) frames += reader.push(read).length;
    reader.end();
    return frames;
  },
  'ts eventsource-parser 4.1.3': () => {
    let frames = 0;
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const parser = createParser({ onEvent: () => (frames += 1) });
    for (const read of reads) parser.feed(decoder.decode(read, { stream: true }));
    decoder.decode();
    return frames;
  },
};

interface Row {
  decoder: string;
  mbPerS?: number;
  frames?: number;
  skipped?: string;
}
const rows: Row[] = [];

/** Runs a command whose output has `AD_SSE_BENCH {json}` lines (or a Go benchmark line); the median of the rounds. */
function external(decoder: string, command: string, commandArgs: string[], cwd: string, env: Record<string, string> = {}): void {
  const result = spawnSync(command, commandArgs, { cwd, env: { ...process.env, AD_SSE_BENCH_FILE: stream.path, AD_SSE_BENCH_ROUNDS: String(ROUNDS), ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error || result.status !== 0) {
    rows.push({ decoder, skipped: result.error ? String(result.error.message) : `exit ${result.status}: ${(result.stderr || result.stdout).slice(-300)}` });
    return;
  }
  const out = result.stdout;
  const values = [...out.matchAll(/AD_SSE_BENCH (\{.*\})/g)].map((m) => JSON.parse(m[1]!) as { mbPerS: number; frames: number });
  const go = [...out.matchAll(/BenchmarkSSEDecoder\S*\s+\d+\s+\d+ ns\/op\s+([\d.]+) MB\/s/g)].map((m) => ({ mbPerS: Number(m[1]), frames: NaN }));
  const all = [...values, ...go];
  if (all.length === 0) rows.push({ decoder, skipped: `no figures in output: ${out.slice(-300)}` });
  else rows.push({ decoder, mbPerS: median(all.map((v) => v.mbPerS)), ...(Number.isNaN(all[0]!.frames) ? {} : { frames: all[0]!.frames }) });
}

console.log(`client SSE decoders over ${stream.path} (${mb.toFixed(1)} MB), 64 KiB reads, median of ${ROUNDS} rounds`);
if (ONLY.includes('ts')) {
  const samples = new Map<string, { mbPerS: number; frames: number }[]>();
  for (let round = 0; round < ROUNDS + 1; round += 1) {
    for (const [name, decode] of Object.entries(tsDecoders)) {
      const sample = timeIt(decode);
      if (round > 0) samples.set(name, [...(samples.get(name) ?? []), sample]); // round 0 warms up
    }
  }
  for (const [name, list] of samples) rows.push({ decoder: name, mbPerS: median(list.map((s) => s.mbPerS)), frames: list[0]!.frames });
}
if (ONLY.includes('go')) external('go client (sseReader)', 'go', ['test', '-run', '^$', '-bench', 'BenchmarkSSEDecoder', '-benchtime', `${ROUNDS}x`, '-count', '1'], join(root, 'clients/go'));
if (ONLY.includes('python')) {
  const python = [join(root, 'clients/python/.venv/bin/python'), 'python3'].find((p) => spawnSync(p, ['--version']).status === 0) ?? 'python3';
  external('python client (SseDecoder)', python, [join(root, 'clients/python/scripts/bench_sse.py'), stream.path, String(ROUNDS)], root);
}
if (ONLY.includes('rust')) {
  external('rust client (SseDecoder, release)', 'cargo', ['test', '--release', '--lib', '--offline', '--', '--ignored', '--nocapture', '--exact', 'sse::tests::sse_throughput'], join(root, 'clients/rust'));
}

console.log('decoder                              MB/s    frames');
for (const row of rows) {
  console.log(`${row.decoder.padEnd(35)} ${row.mbPerS === undefined ? `skipped: ${row.skipped}` : `${row.mbPerS.toFixed(1).padStart(6)}  ${row.frames ?? ''}`}`);
}
mkdirSync(dirname(JSON_OUT), { recursive: true });
writeFileSync(JSON_OUT, `${JSON.stringify({ file: stream.path, bytes: body.length, rounds: ROUNDS, at: new Date().toISOString(), rows: rows.map((r) => ({ bench: 'decoders', ...r })) }, null, 2)}\n`);
console.log(`wrote ${JSON_OUT}`);
