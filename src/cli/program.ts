/**
 * The `agenticdriver` command tree. Each action loads its module only when its command runs,
 * so a client command does not pay for loading the host, the store and every provider.
 * docs/host.md documents every command and flag here (test/core/docs.test.ts checks both ways).
 */
import { Command, Option } from 'commander';
import { DriverError } from '../protocol/errors.js';

/** An action whose module loads only when its command runs. */
function lazy<A extends unknown[]>(load: () => Promise<(...args: A) => unknown>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    await (await load())(...args);
  };
}

const port = (value: string) => {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) throw new DriverError('INVALID_ARGUMENT', `--port must be 0-65535, not ${JSON.stringify(value)}.`);
  return Number(value);
};
const positiveInteger = (name: string) => (value: string) => {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new DriverError('INVALID_ARGUMENT', `${name} must be a whole number.`);
  return Number(value);
};
const oneOf = (name: string, allowed: readonly string[]) => (value: string, previous: string[] | undefined) => {
  if (!allowed.includes(value)) throw new DriverError('INVALID_ARGUMENT', `${name} takes ${allowed.join(', ')}, not ${JSON.stringify(value)}.`);
  return [...(previous ?? []), value];
};

const configOption = () => new Option('--config <path>', 'config file (overrides AGENTICDRIVER_CONFIG)');
const jsonOption = (what = 'JSON output (also when stdout is not a terminal)') => new Option('--json', what);

/** Options every client command (one that talks to a running host) shares. */
const clientCommand = (command: Command) =>
  command.addOption(configOption()).option('--url <url>', 'host URL (default: from the config)').option('--token-id <id>', 'token entry to use (default: the first)');

/** A command group (bare, it prints its help: see ./main.ts). */
const group = (parent: Command, name: string, description: string) => parent.command(name).description(description);

const JOB_OPERATIONS = ['submit', 'read', 'cancel'] as const;
const SESSION_OPERATIONS = ['create', 'read', 'continue', 'delete'] as const;

export function buildProgram(version: string): Command {
  const program = new Command('agenticdriver')
    .description('Run LLM agents through one contract (AgenticDriver wire protocol 1.0).')
    .version(version)
    .showHelpAfterError(false)
    .exitOverride();

  program
    .command('init')
    .description('Create a config for the embedded defaults and private token files; never overwrites.')
    .addOption(configOption())
    .option('--provider <kind>', 'provider kind: mock (default), openai, anthropic, gemini, xai, openai-compatible, codex, claude-code, gemini-cli')
    .option('--model <id...>', 'allowed model(s); required except for mock')
    .option('--api-key-env <name>', 'API kinds: environment variable holding the key')
    .option('--base-url <url>', 'API kinds: vendor base URL (required for openai-compatible)')
    .option('--binary <path>', 'CLI kinds: the CLI executable (default: from PATH)')
    .option('--account-directory <dir>', 'CLI kinds: the CLI account/config directory to use')
    .option('--embedding-model <dir>', 'a local sentence-embedding model (model.onnx + tokenizer.json) for the default corpus (default: the one under models/ beside the config, if any)')
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./init.js')).initCommand));

  program
    .command('serve')
    .description('Start the host; SIGHUP reloads its config (tokens, providers, limits).')
    .addOption(configOption())
    .option('--host <host>', 'listen address (overrides the config)')
    .option('--port <port>', 'listen port (overrides the config; 0 picks one)', port)
    .option('--init', 'create a default config first when none exists')
    .option('--json', 'print one JSON line when listening')
    .action(lazy(async () => (await import('./serve.js')).serve));

  clientCommand(program.command('status'))
    .description("Ask a running host for its protocol and this token's providers.")
    .option('--refresh', 'force fresh provider discovery')
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./remote.js')).statusCommand));

  program
    .command('doctor')
    .description('Check the config, secrets, TLS identity and each provider; exit 1 unless all are usable.')
    .addOption(configOption())
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./doctor.js')).doctorCommand));

  program
    .command('audit')
    .description('Print the approval audit log: every approval request, decision and refused decision, newest first.')
    .addOption(configOption())
    .option('--limit <n>', 'how many records (default 100)', positiveInteger('--limit'))
    .addOption(jsonOption('one JSON line per record (also when stdout is not a terminal)'))
    .action(lazy(async () => (await import('./audit.js')).auditCommand));

  program
    .command('usage')
    .description('Print run, token and cost totals from the state store: an aligned table at a terminal, else one JSON object.')
    .addOption(configOption())
    .option('--since <when>', 'only runs that finished since an ISO date/time or a duration back from now (90m, 24h, 7d)')
    .option('--by <group>', 'group by subject, provider, model or day (UTC)')
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./usage.js')).usageCommand));

  clientCommand(program.command('run'))
    .description('Stream one run through a running host: text by default, JSONL events with --json.')
    .requiredOption('--provider <id>', 'provider instance')
    .requiredOption('--model <id>', 'model')
    .option('--input <text>', 'the prompt (default: stdin)')
    .option('--idle-timeout-ms <ms>', 'cancel after this much inactivity', positiveInteger('--idle-timeout-ms'))
    .option('--idempotency-key <key>', 'record the run under this key; repeating the command replays its outcome instead of running again')
    .option('--session <id:revision>', 'continue a conversation session at this revision (see `sessions create`); prints the next ID:REVISION on stderr')
    .option('--retrieval <corpus>', 'ground the run on passages searched in this corpus, and print the sources after the answer')
    .option('--json', 'print every event as one JSON line')
    .action(lazy(async () => (await import('./remote.js')).runCommand));

  clientCommand(program.command('ingest'))
    .description('Ingest files and folders (.md, .txt, .eml, .pdf; recursively) into a retrieval corpus of a running host.')
    .argument('<path...>', 'files or folders')
    .option('--corpus <id>', 'the corpus', 'default')
    .option('--json', 'one JSON line per file, then the summary')
    .action(lazy(async () => (await import('./ingest.js')).ingestCommand));

  const jobs = group(program, 'jobs', 'Durable jobs: runs that outlive the connection.');
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
  clientCommand(jobs.command('list'))
    .description("This token's subject's jobs, newest first.")
    .option('--state <state>', 'only jobs in this state: queued, running, completed, failed, cancelled, interrupted')
    .option('--limit <n>', 'how many (default 20, at most 100)', positiveInteger('--limit'))
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./jobs.js')).listJobsCommand));
  clientCommand(jobs.command('read').argument('<id>')).description('Print a job.').action(lazy(async () => (await import('./jobs.js')).readJobCommand));
  clientCommand(jobs.command('cancel').argument('<id>')).description('Cancel a job and print it.').action(lazy(async () => (await import('./jobs.js')).cancelJobCommand));
  clientCommand(jobs.command('tail').argument('<id>'))
    .description("Follow a job's events to its end, reconnecting by itself; --after resumes after that sequence.")
    .option('--after <sequence>', 'the last sequence already seen (default 0)', positiveInteger('--after'))
    .option('--json', 'every event as one JSON line')
    .action(lazy(async () => (await import('./jobs.js')).tailJobCommand));

  const sessions = group(program, 'sessions', 'Conversation sessions: continue with `run --session ID:REVISION`.');
  clientCommand(sessions.command('create'))
    .description('Create a session and print it.')
    .requiredOption('--provider <id>', 'provider instance')
    .requiredOption('--model <id>', 'model')
    .option('--instructions <text>', 'instructions for every turn')
    .option('--native', 'mode native: the provider continues its own conversation (providers whose capabilities say nativeContinuation)')
    .action(lazy(async () => (await import('./jobs.js')).createSessionCommand));
  clientCommand(sessions.command('list'))
    .description("This token's subject's sessions, most recently used first.")
    .option('--limit <n>', 'how many (default 20, at most 100)', positiveInteger('--limit'))
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./jobs.js')).listSessionsCommand));
  clientCommand(sessions.command('read').argument('<id>')).description('Print a session and its history.').action(lazy(async () => (await import('./jobs.js')).readSessionCommand));
  clientCommand(sessions.command('delete').argument('<id>')).description('Delete a session.').action(lazy(async () => (await import('./jobs.js')).deleteSessionCommand));

  const providers = group(program, 'providers', 'List, add and remove provider instances in the config (then SIGHUP the host to apply).');
  providers
    .command('list')
    .description('The configured provider instances and which tokens may use each.')
    .addOption(configOption())
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./providers.js')).listProvidersCommand));
  providers
    .command('add')
    .description('Add a provider instance and grant it to tokens; the config is validated before it is written.')
    .argument('<kind>', 'mock, openai, anthropic, gemini, xai, openai-compatible, codex, claude-code or gemini-cli')
    .addOption(configOption())
    .option('--id <id>', 'instance id (default: the kind)')
    .option('--model <id...>', 'allowed model(s); required except for mock')
    .option('--api-key-env <name>', 'API kinds: environment variable holding the key (default: the vendor\'s usual name)')
    .option('--api-key-file <path>', 'API kinds: a private file (chmod 600) holding the key, instead of a variable')
    .option('--base-url <url>', 'API kinds: vendor base URL (required for openai-compatible)')
    .option('--binary <path>', 'CLI kinds: the CLI executable (default: from PATH)')
    .option('--account-directory <dir>', 'CLI kinds: the CLI account/config directory to use')
    .option('--grant <token-id...>', 'tokens that may use it (default: every token)')
    .option('--no-grant', 'grant it to no token')
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./providers.js')).addProviderCommand));
  providers
    .command('remove')
    .description('Remove a provider instance and every grant of it.')
    .argument('<id>', 'instance id')
    .addOption(configOption())
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./providers.js')).removeProviderCommand));

  const tokens = group(program, 'tokens', 'List, add, remove and grant bearer tokens in the config (then SIGHUP the host to apply).');
  tokens
    .command('list')
    .description('The token entries, their subjects and grants; never a token value.')
    .addOption(configOption())
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./tokens.js')).listTokensCommand));
  const grantOptions = (command: Command) =>
    command
      .option('--provider <id...>', 'provider instances')
      .option('--jobs <operation...>', `durable-job operations: ${JOB_OPERATIONS.join(', ')}`, oneOf('--jobs', JOB_OPERATIONS))
      .option('--sessions <operation...>', `session operations: ${SESSION_OPERATIONS.join(', ')}`, oneOf('--sessions', SESSION_OPERATIONS))
      .option('--operator', 'the operator grant (the console and /v1/operator/...)');
  grantOptions(
    tokens
      .command('add')
      .description('Add a token entry with a new random token in a private file (credentials/<id>.token); prints the file, never the token.')
      .argument('<id>', 'token entry id')
      .addOption(configOption())
      .option('--subject <subject>', 'who the token acts for (default: the id)'),
  )
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./tokens.js')).addTokenCommand));
  tokens
    .command('remove')
    .description('Remove a token entry (its token file stays; delete it yourself).')
    .argument('<id>', 'token entry id')
    .addOption(configOption())
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./tokens.js')).removeTokenCommand));
  grantOptions(tokens.command('grant').description('Add grants to a token entry.').argument('<id>', 'token entry id').addOption(configOption()))
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./tokens.js')).grantTokenCommand));
  grantOptions(tokens.command('revoke').description('Take grants away from a token entry.').argument('<id>', 'token entry id').addOption(configOption()))
    .addOption(jsonOption())
    .action(lazy(async () => (await import('./tokens.js')).revokeTokenCommand));

  return program;
}
