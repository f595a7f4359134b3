/**
 * CLI providers, warm vs cold: time from starting a run to its first text event, for each
 * real pinned CLI (test/cli-tools) against a loopback model server. Cold = a new CLI
 * process per run; warm = a pooled long-lived process (Codex app-server, Gemini --acp)
 * serving each run in a fresh thread/session, or for Claude a started single-use spare.
 * Prints the median and the speed-up.
 *
 *   node test/cli-tools/setup.mjs && npx tsx bench/cli-warm-cold.ts [--runs N] [--json FILE]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { claudeCode, codex, geminiCli, type CliProviderOptions } from '../src/providers/cli/index.js';
import type { ProviderAdapter } from '../src/providers/contract/v1.js';
import { API_KEY, binary, claudeAccount, codexAccount, geminiAccount, hostEnvironment, request, scratchDirectory, startRefusingProxy } from '../test/providers/cli/harness.js';
import { startAnthropicMessagesServer, startGeminiServer, startOpenAIResponsesServer, type VendorServer } from '../test/vendors/index.js';

const runsIndex = process.argv.indexOf('--runs');
const RUNS = runsIndex >= 0 ? Number(process.argv[runsIndex + 1]) : 5;
const jsonIndex = process.argv.indexOf('--json');
const JSON_OUT = jsonIndex >= 0 ? process.argv[jsonIndex + 1]! : new URL('./results/cli-warm-cold.json', import.meta.url).pathname;
const results: Record<string, unknown>[] = [];

interface Cli {
  name: string;
  model: string;
  start(options: { apiKey: string }): Promise<VendorServer>;
  make(server: VendorServer, directory: string, common: CliProviderOptions): Promise<ProviderAdapter>;
}

const CLIS: Cli[] = [
  {
    name: 'codex',
    model: 'gpt-5.5',
    start: startOpenAIResponsesServer,
    make: async (server, directory, common) => codex({ ...common, binary: binary('codex'), accountDirectory: await codexAccount(directory, server.url), environment: async () => ({ LOOPBACK_OPENAI_KEY: API_KEY }) }),
  },
  {
    name: 'claude-code',
    model: 'claude-test',
    start: startAnthropicMessagesServer,
    make: async (server, directory, common) => claudeCode({ ...common, binary: binary('claude'), accountDirectory: await claudeAccount(directory), environment: async () => ({ ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_API_KEY: API_KEY }) }),
  },
  {
    name: 'gemini-cli',
    model: 'gemini-2.5-flash',
    start: startGeminiServer,
    make: async (server, directory, common) => geminiCli({ ...common, binary: binary('gemini'), accountDirectory: await geminiAccount(directory), environment: async () => ({ GOOGLE_GEMINI_BASE_URL: server.origin, GEMINI_API_KEY: API_KEY }) }),
  },
];

async function firstTextMs(adapter: ProviderAdapter, server: VendorServer, model: string): Promise<number> {
  server.push({ turn: { text: ['first ', 'text'], usage: { input: 1, output: 2 } } });
  const started = performance.now();
  let first: number | undefined;
  for await (const part of adapter.stream(request('say something', model), new AbortController().signal)) {
    if (part.type === 'text-delta') first ??= performance.now() - started;
  }
  if (first === undefined) throw new Error('no text event');
  return first;
}

/** Time given between runs, in both modes alike, for a spare to finish starting. */
const SPARE_START_MS = 1_500;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const proxy = await startRefusingProxy();
const scratch = await scratchDirectory('bench');
console.log(`CLI first-text-event latency, median of ${RUNS} runs (ms)`);
console.log('cli          cold     warm     speed-up');
for (const cli of CLIS) {
  const server = await cli.start({ apiKey: API_KEY });
  const common: CliProviderOptions = { models: [cli.model], hostEnvironment: hostEnvironment(proxy) };
  const cold = await cli.make(server, await mkdtemp(join(scratch.path, `${cli.name}-cold-`)), common);
  await firstTextMs(cold, server, cli.model); // readiness check and disk caches
  const coldTimes: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, SPARE_START_MS));
    coldTimes.push(await firstTextMs(cold, server, cli.model));
  }
  const warm = await cli.make(server, await mkdtemp(join(scratch.path, `${cli.name}-warm-`)), { ...common, warm: { processes: 1, idleMs: 60_000 } });
  await firstTextMs(warm, server, cli.model); // the cold start that fills the pool
  const warmTimes: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, SPARE_START_MS)); // a single-use spare starts after each run
    warmTimes.push(await firstTextMs(warm, server, cli.model));
  }
  await warm.close?.();
  const speedUp = `${(median(coldTimes) / median(warmTimes)).toFixed(1)}x`;
  results.push({ bench: 'cli-warm-cold', target: cli.name, coldMs: median(coldTimes), warmMs: median(warmTimes) });
  console.log(`${cli.name.padEnd(11)} ${median(coldTimes).toFixed(0).padStart(5)}    ${median(warmTimes).toFixed(0).padStart(5)}    ${speedUp}`);
  await server.close();
}
await proxy.close();
await scratch.remove();
mkdirSync(dirname(JSON_OUT), { recursive: true });
writeFileSync(JSON_OUT, `${JSON.stringify({ runs: RUNS, at: new Date().toISOString(), rows: results }, null, 2)}\n`);
if (proxy.attempts.length > 0) console.log(`warning: ${proxy.attempts.length} connection(s) tried to leave the machine`);
