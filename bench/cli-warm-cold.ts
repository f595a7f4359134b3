/**
 * CLI providers, warm vs cold: time from starting a run to its first text event, for each
 * real pinned CLI (test/cli-tools) against a loopback model server. Cold = a new CLI
 * process per run; warm = a pooled long-lived process (Codex app-server, Gemini --acp)
 * serving each run in a fresh thread/session. Prints the median and the speed-up.
 *
 *   node test/cli-tools/setup.mjs && npx tsx bench/cli-warm-cold.ts [--runs N]
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { claudeCode, codex, geminiCli, type CliProviderOptions } from '../src/providers/cli/index.js';
import type { ProviderAdapter } from '../src/runtime/provider.js';
import { API_KEY, binary, claudeAccount, codexAccount, geminiAccount, hostEnvironment, request, scratchDirectory, startRefusingProxy } from '../test/providers/cli/harness.js';
import { startAnthropicMessagesServer, startGeminiServer, startOpenAIResponsesServer, type VendorServer } from '../test/vendors/index.js';

const runsIndex = process.argv.indexOf('--runs');
const RUNS = runsIndex >= 0 ? Number(process.argv[runsIndex + 1]) : 5;

interface Cli {
  name: string;
  model: string;
  start(options: { apiKey: string }): Promise<VendorServer>;
  make(server: VendorServer, directory: string, common: CliProviderOptions): Promise<ProviderAdapter>;
  warm: boolean;
}

const CLIS: Cli[] = [
  {
    name: 'codex',
    model: 'gpt-5.5',
    warm: true,
    start: startOpenAIResponsesServer,
    make: async (server, directory, common) => codex({ ...common, binary: binary('codex'), accountDirectory: await codexAccount(directory, server.url), environment: async () => ({ LOOPBACK_OPENAI_KEY: API_KEY }) }),
  },
  {
    name: 'claude-code',
    model: 'claude-test',
    warm: false,
    start: startAnthropicMessagesServer,
    make: async (server, directory, common) => claudeCode({ ...common, binary: binary('claude'), accountDirectory: await claudeAccount(directory), environment: async () => ({ ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_API_KEY: API_KEY }) }),
  },
  {
    name: 'gemini-cli',
    model: 'gemini-2.5-flash',
    warm: true,
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
  for (let i = 0; i < RUNS; i += 1) coldTimes.push(await firstTextMs(cold, server, cli.model));
  let warmCell = 'n/a (no isolating long-lived mode)';
  if (cli.warm) {
    const warm = await cli.make(server, await mkdtemp(join(scratch.path, `${cli.name}-warm-`)), { ...common, warm: { processes: 1, idleMs: 60_000 } });
    await firstTextMs(warm, server, cli.model); // the cold start that fills the pool
    const warmTimes: number[] = [];
    for (let i = 0; i < RUNS; i += 1) warmTimes.push(await firstTextMs(warm, server, cli.model));
    await warm.close?.();
    warmCell = `${median(warmTimes).toFixed(0).padStart(5)}    ${(median(coldTimes) / median(warmTimes)).toFixed(1)}x`;
  }
  console.log(`${cli.name.padEnd(11)} ${median(coldTimes).toFixed(0).padStart(5)}    ${warmCell}`);
  await server.close();
}
await proxy.close();
await scratch.remove();
if (proxy.attempts.length > 0) console.log(`warning: ${proxy.attempts.length} connection(s) tried to leave the machine`);
