#!/usr/bin/env node
/**
 * The operator CLI: `agenticdriver init | serve | status | doctor | audit | usage | run | ingest | jobs | sessions`.
 * Success output goes to stdout; a failure is one JSON error line on stderr and exit 1.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { DriverError, toDriverError } from '../protocol/errors.js';
import type { InitOptions } from './init.js';
import { parseGrouping, parseSince } from './usage.js';
import type { UsageGrouping } from '../store/usage-totals.js';

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * An action whose module loads only when its command runs, so a client command does not pay
 * for loading the host, the store and every provider.
 */
function lazy<A extends unknown[]>(load: () => Promise<(...args: A) => unknown>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    await (await load())(...args);
  };
}

function printJson(value: unknown, compact: boolean): void {
  process.stdout.write(`${compact ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`);
}

export function fail(error: unknown): never {
  const failure = error instanceof DriverError ? error : toDriverError(error);
  process.stderr.write(`${JSON.stringify({ error: failure.toJSON() })}\n`);
  process.exit(1);
}

const port = (value: string) => {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) throw new DriverError('INVALID_ARGUMENT', `--port must be 0-65535, not ${JSON.stringify(value)}.`);
  return Number(value);
};
const positiveInteger = (name: string) => (value: string) => {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new DriverError('INVALID_ARGUMENT', `${name} must be a whole number.`);
  return Number(value);
};

const program = new Command('agenticdriver')
  .description('Run LLM agents through one contract (AgenticDriver wire protocol 1.0).')
  .version(packageVersion)
  .showHelpAfterError(false)
  .exitOverride()
  .configureOutput({ writeErr: () => undefined });
const configOption = () => new Option('--config <path>', 'config file (overrides AGENTICDRIVER_CONFIG)');

program
  .command('init')
  .description('Create a config for the embedded defaults and a private token file; never overwrites.')
  .addOption(configOption())
  .option('--provider <kind>', 'provider kind: mock (default), openai, anthropic, gemini, xai, openai-compatible, codex, claude-code, gemini-cli')
  .option('--model <id...>', 'allowed model(s); required except for mock')
  .option('--api-key-env <name>', 'API kinds: environment variable holding the key')
  .option('--base-url <url>', 'API kinds: vendor base URL (required for openai-compatible)')
  .option('--binary <path>', 'CLI kinds: the CLI executable (default: from PATH)')
  .option('--account-directory <dir>', 'CLI kinds: the CLI account/config directory to use')
  .option('--embedding-model <dir>', 'a local sentence-embedding model (model.onnx + tokenizer.json) for the default corpus (default: the one under models/ beside the config, if any)')
  .option('--json', 'one-line JSON output')
  .action(async (options: InitOptions & { config?: string; json?: boolean }) => {
    const { resolveConfigPath } = await import('../host/config.js');
    const { initConfig } = await import('./init.js');
    const result = await initConfig(resolveConfigPath(options.config), options);
    printJson({ ...result, next: 'agenticdriver serve' }, options.json ?? false);
  });

program
  .command('serve')
  .description('Start the host.')
  .addOption(configOption())
  .option('--host <host>', 'listen address (overrides the config)')
  .option('--port <port>', 'listen port (overrides the config; 0 picks one)', port)
  .option('--init', 'create a default config first when none exists')
  .option('--json', 'print one JSON line when listening')
  .action(lazy(async () => (await import('./serve.js')).serve));

program
  .command('status')
  .description("Ask a running host for its protocol and this token's providers.")
  .addOption(configOption())
  .option('--url <url>', 'host URL (default: from the config)')
  .option('--token-id <id>', 'token entry to use (default: the first)')
  .option('--refresh', 'force fresh provider discovery')
  .option('--json', 'one-line JSON output')
  .action(lazy(async () => (await import('./remote.js')).statusCommand));

program
  .command('doctor')
  .description('Check the config, secrets, TLS identity and each provider; exit 1 unless all are usable.')
  .addOption(configOption())
  .option('--json', 'one-line JSON output')
  .action(async (options: { config?: string; json?: boolean }) => {
    const { doctor } = await import('./doctor.js');
    const report = await doctor(options.config);
    printJson(report, options.json ?? false);
    if (!report.ok) process.exitCode = 1;
  });

program
  .command('audit')
  .description('Print the approval audit log: every approval request, decision and refused decision, newest first.')
  .addOption(configOption())
  .option('--limit <n>', 'how many records (default 100)', positiveInteger('--limit'))
  .option('--json', 'one JSON line per record')
  .action(async (options: { config?: string; limit?: number; json?: boolean }) => {
    const { readAudit } = await import('./audit.js');
    const records = await readAudit(options.config, options.limit ?? 100);
    if (options.json) for (const record of records) process.stdout.write(`${JSON.stringify(record)}\n`);
    else printJson(records, false);
  });

program
  .command('usage')
  .description('Print run, token and cost totals from the state store: an aligned table, or one JSON object with --json.')
  .addOption(configOption())
  .option('--since <when>', 'only runs that finished since an ISO date/time or a duration back from now (90m, 24h, 7d)', (value: string) => parseSince(value))
  .option('--by <group>', 'group by subject, provider, model or day (UTC)', parseGrouping)
  .option('--json', 'one-line JSON output')
  .action(async (options: { config?: string; since?: string; by?: UsageGrouping; json?: boolean }) => {
    const { usageReport, formatUsageTable } = await import('./usage.js');
    const report = await usageReport(options.config, { ...(options.since ? { since: options.since } : {}), ...(options.by ? { by: options.by } : {}) });
    if (options.json) printJson(report, true);
    else process.stdout.write(`${formatUsageTable(report)}\n`);
  });

program
  .command('run')
  .description('Stream one run through a running host: text by default, JSONL events with --json.')
  .addOption(configOption())
  .requiredOption('--provider <id>', 'provider instance')
  .requiredOption('--model <id>', 'model')
  .option('--input <text>', 'the prompt (default: stdin)')
  .option('--url <url>', 'host URL (default: from the config)')
  .option('--token-id <id>', 'token entry to use (default: the first)')
  .option('--idle-timeout-ms <ms>', 'cancel after this much inactivity', positiveInteger('--idle-timeout-ms'))
  .option('--idempotency-key <key>', 'record the run under this key; repeating the command replays its outcome instead of running again')
  .option('--session <id:revision>', 'continue a conversation session at this revision (see `sessions create`)')
  .option('--retrieval <corpus>', 'ground the run on passages searched in this corpus, and print the sources after the answer')
  .option('--json', 'print every event as one JSON line')
  .action(lazy(async () => (await import('./remote.js')).runCommand));

program
  .command('ingest')
  .description('Ingest files and folders (.md, .txt, .eml, .pdf; recursively) into a retrieval corpus of a running host.')
  .argument('<path...>', 'files or folders')
  .addOption(configOption())
  .option('--corpus <id>', 'the corpus', 'default')
  .option('--url <url>', 'host URL (default: from the config)')
  .option('--token-id <id>', 'token entry to use (default: the first)')
  .option('--json', 'one JSON line per file, then the summary')
  .action(lazy(async () => (await import('./ingest.js')).ingestCommand));

/** Options every client command shares. */
const clientCommand = (command: Command) =>
  command.addOption(configOption()).option('--url <url>', 'host URL (default: from the config)').option('--token-id <id>', 'token entry to use (default: the first)');

const jobs = program.command('jobs').description('Durable jobs: runs that outlive the connection.');
clientCommand(jobs.command('submit'))
  .description('Submit a job (deduplicated by --key) and print it; --tail follows its events to the end.')
  .requiredOption('--key <key>', 'the job key: the same key and request give the same job')
  .requiredOption('--provider <id>', 'provider instance')
  .requiredOption('--model <id>', 'model')
  .option('--input <text>', 'the prompt (default: stdin)')
  .option('--tool <name...>', 'host tools the job may use')
  .option('--tail', 'follow the job until it ends')
  .option('--json', 'with --tail: every event as one JSON line')
  .action(lazy(async () => (await import('./jobs.js')).submitJobCommand));
clientCommand(jobs.command('read').argument('<id>')).description('Print a job.').action(lazy(async () => (await import('./jobs.js')).readJobCommand));
clientCommand(jobs.command('cancel').argument('<id>')).description('Cancel a job and print it.').action(lazy(async () => (await import('./jobs.js')).cancelJobCommand));
clientCommand(jobs.command('tail').argument('<id>'))
  .description('Follow a job\'s events to its end, reconnecting by itself; --after resumes after that sequence.')
  .option('--after <sequence>', 'the last sequence already seen (default 0)', positiveInteger('--after'))
  .option('--json', 'every event as one JSON line')
  .action(lazy(async () => (await import('./jobs.js')).tailJobCommand));

const sessions = program.command('sessions').description('Conversation sessions: continue with `run --session ID:REVISION`.');
clientCommand(sessions.command('create'))
  .description('Create a session and print it.')
  .requiredOption('--provider <id>', 'provider instance')
  .requiredOption('--model <id>', 'model')
  .option('--instructions <text>', 'instructions for every turn')
  .option('--native', 'mode native: the provider continues its own conversation (providers whose capabilities say nativeContinuation)')
  .action(lazy(async () => (await import('./jobs.js')).createSessionCommand));
clientCommand(sessions.command('read').argument('<id>')).description('Print a session and its history.').action(lazy(async () => (await import('./jobs.js')).readSessionCommand));
clientCommand(sessions.command('delete').argument('<id>')).description('Delete a session.').action(lazy(async () => (await import('./jobs.js')).deleteSessionCommand));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) process.exit(0);
    fail(new DriverError('INVALID_ARGUMENT', error.message.replace(/^error: /, '')));
  }
  fail(error);
}
