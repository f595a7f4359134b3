/**
 * `gemini-cli`: Gemini CLI driven by `gemini --output-format stream-json`, the user content
 * on stdin. Its settings and policy for the run come from two private files: every tool,
 * MCP server, extension, hook and memory file off, no telemetry, updates or retries.
 * Gemini exits with the HTTP status mod 256 on API errors, which the classifier reads too.
 *
 * The settings are the run's *workspace* settings (`<cwd>/.gemini/settings.json`), which
 * Gemini 0.61 reads without any ownership check and merges above the user's settings (only
 * the machine's system settings, an admin's, rank higher). It drops them in an untrusted
 * folder, so the run sets `GEMINI_CLI_TRUST_WORKSPACE=true` (and clears restricted mode);
 * and it skips them when the cwd is its home folder, which each run verifies is not so.
 * (A system settings file named by GEMINI_CLI_SYSTEM_SETTINGS_PATH would rank above the
 * admin's but is skipped unless it and every parent folder are root's: root-only hosts.)
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../contract/v1.js';
import { defineProviderKind } from '../registry.js';
import { CliProviderAdapter, type CliDialect, type CliStreamParser, type WarmSpawn } from './adapter.js';
import { cliConfigSchema, optionsFromConfig, type CliProviderOptions } from './config.js';
import { cliFailure, count, parseEventLine, record, text, usage, type FailureCode, type JsonRecord } from './events.js';
import { access, lstat, mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { GeminiAcp } from './gemini-acp.js';
import { dirname, join, relative } from 'node:path';
import type { CliProbe, CliStatus } from './probe.js';
import { BRIDGE_SERVER_NAME, type ToolBridge } from './mcp-bridge.js';
import type { NativeToolProfile } from './native-tools.js';
import { firstSemver } from './readiness.js';
import { linkFromAccount } from './session-folder.js';

const PRODUCT = 'Gemini CLI';
/** The workspace settings file, relative to the run's working directory. */
const SETTINGS_FILE = join('.gemini', 'settings.json');
const POLICY_FILE = 'gemini-policy.toml';
/** Gemini appends `--prompt` to the stdin content; this keeps the request itself on stdin. */
const PROMPT_SUFFIX = 'Answer the request above with text only.';

const SYSTEM_SETTINGS = {
  privacy: { usageStatisticsEnabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
  tools: { core: ['__agenticdriver_no_tools__'], discoveryCommand: '', callCommand: '' },
  hooksConfig: { enabled: false },
  mcp: { allowed: [], serverCommand: '' },
  admin: { extensions: { enabled: false }, mcp: { enabled: false }, skills: { enabled: false } },
  context: { fileName: '.agenticdriver-no-context', includeDirectories: [], loadMemoryFromIncludeDirectories: false },
  skills: { enabled: false },
};

/**
 * Admin-tier rules (above every user and default rule); within the tier the higher priority
 * wins, and Gemini rejects the whole file for a priority outside 0..999.
 */
const policyRule = (match: string, decision: 'allow' | 'ask_user' | 'deny', priority: number) => ['[[rule]]', match, `decision = "${decision}"`, `priority = ${priority}`, ''].join('\n');
const DENY_ALL_POLICY = policyRule('toolName = "*"', 'deny', 1);
const EXCEPTION_PRIORITY = 500;
/** Above every exception: no tool call may name a `.gemini` folder (the run's settings live in one). */
const SETTINGS_GUARD_POLICY = policyRule('toolName = "*"\nargsPattern = "\\\\.gemini"', 'deny', 900);

/**
 * Gemini's own tools per native tool profile: those it uses unasked, and those it must ask
 * about (relayed to the run's approval gate), with the ACP tool kinds they report. Its file
 * tools refuse paths outside the workspace (the run's working directory); no profile has
 * shell, web or memory tools.
 */
const READ_TOOLS = ['read_file', 'list_directory', 'glob', 'grep_search'];
const NATIVE_PROFILES: Record<Exclude<NativeToolProfile, 'off'>, { allow: string[]; ask: string[]; kinds: string[] }> = {
  'read-only': { allow: READ_TOOLS, ask: [], kinds: ['read', 'search'] },
  'workspace-write': { allow: READ_TOOLS, ask: ['write_file', 'replace'], kinds: ['read', 'search', 'edit'] },
};

/** The ACP kind of an MCP tool's calls; with `tools.core` limited as above, only the bridge's. */
const MCP_TOOL_KIND = 'other';

/** Gemini's names for the bridge's tools (`mcp_<server>_<tool>`). */
const bridgeToolName = (tool: string) => `mcp_${BRIDGE_SERVER_NAME}_${tool}`;

/**
 * The private settings and policy files of a run. `tools.core` is an allowlist of every tool,
 * MCP ones included: exactly the profile's and the bridge's; the admin policy denies all
 * else. With run tools the bridge is the only MCP server (its token only in the settings
 * file), limited to the run's tools, and one rule above the deny-all allows it.
 */
function runFiles(bridge: ToolBridge | undefined, profile: NativeToolProfile): { settings: string; policy: string } {
  const native = profile === 'off' ? { allow: [], ask: [] } : NATIVE_PROFILES[profile];
  const core = [...native.allow, ...native.ask, ...(bridge?.tools.map((tool) => bridgeToolName(tool.name)) ?? [])];
  const server = bridge && { httpUrl: bridge.url, headers: { Authorization: `Bearer ${bridge.token}` }, trust: true, includeTools: bridge.tools.map((tool) => tool.name) };
  const settings = {
    ...SYSTEM_SETTINGS,
    ...(core.length > 0 ? { tools: { ...SYSTEM_SETTINGS.tools, core } } : {}),
    ...(server ? { mcpServers: { [BRIDGE_SERVER_NAME]: server }, mcp: { allowed: [BRIDGE_SERVER_NAME], serverCommand: '' }, admin: { ...SYSTEM_SETTINGS.admin, mcp: { enabled: true } } } : {}),
  };
  const rules = [
    DENY_ALL_POLICY,
    SETTINGS_GUARD_POLICY,
    ...native.allow.map((tool) => policyRule(`toolName = "${tool}"`, 'allow', EXCEPTION_PRIORITY)),
    ...native.ask.map((tool) => policyRule(`toolName = "${tool}"`, 'ask_user', EXCEPTION_PRIORITY)),
    ...(bridge ? [policyRule(`mcpName = "${BRIDGE_SERVER_NAME}"`, 'allow', EXCEPTION_PRIORITY)] : []),
  ];
  return { settings: JSON.stringify(settings), policy: rules.join('\n') };
}
const LOCKED_DOWN_FILES = runFiles(undefined, 'off');
const lockedDownArgs = (root: string) => ['--extensions', 'none', '--admin-policy', join(root, POLICY_FILE), '--approval-mode', 'default', '--skip-trust'];
/** Gemini merges workspace settings only for a trusted folder; these make the run's trusted whatever the host's env says. */
const lockedDownEnv = { GEMINI_CLI_TRUST_WORKSPACE: 'true', GEMINI_RESTRICTED_MODE: 'false', NO_COLOR: '1' };

/** HTTP statuses as Gemini's exit codes (status mod 256). */
const EXIT_FAILURES: Record<number, FailureCode> = {
  41: 'CLI_AUTH_REQUIRED',
  [401 % 256]: 'CLI_AUTH_REQUIRED',
  [403 % 256]: 'CLI_AUTH_REQUIRED',
  [404 % 256]: 'UNSUPPORTED_MODEL',
  [429 % 256]: 'RATE_LIMITED',
};

export function classifyGeminiError(error: JsonRecord): FailureCode {
  const type = text(error.type) ?? '';
  const code = count(error.code);
  const message = text(error.message) ?? '';
  if (type.endsWith('QuotaError') || code === 429 || /\b429\b|RESOURCE_EXHAUSTED|rateLimitExceeded/.test(message)) return 'RATE_LIMITED';
  if (type === 'FatalAuthenticationError' || code === 401 || code === 403 || /\b401\b|UNAUTHENTICATED|PERMISSION_DENIED|invalid_grant|GEMINI_API_KEY/.test(message)) return 'CLI_AUTH_REQUIRED';
  if (type === 'ModelNotFoundError' || code === 404 || /\b404\b|NOT_FOUND|MODEL_NOT_FOUND/.test(message)) return 'UNSUPPORTED_MODEL';
  if (/fetch failed|ECONNREFUSED|ENOTFOUND|ETIMEDOUT/.test(message)) return 'PROVIDER_UNREACHABLE';
  return 'CLI_FAILED';
}

class GeminiStreamParser implements CliStreamParser {
  constructor(private readonly bridge: ToolBridge | undefined) {}

  private result: JsonRecord | undefined;

  line(line: string): ProviderPart[] {
    const event = parseEventLine(line, PRODUCT);
    switch (event.type) {
      case 'message':
        if (event.role === 'assistant' && typeof event.content === 'string' && event.content !== '') return [{ type: 'text-delta', text: event.content }];
        return [{ type: 'progress' }];
      case 'tool_use':
        if (this.bridge?.tools.some((tool) => bridgeToolName(tool.name) === event.tool_name)) return [{ type: 'progress' }];
        throw new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} attempted to use a tool, which this provider does not allow.`);
      case 'tool_result':
        if (this.bridge) return [{ type: 'progress' }];
        throw new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} attempted to use a tool, which this provider does not allow.`);
      case 'result':
        this.result = event;
        return [{ type: 'progress' }];
      default:
        return [{ type: 'progress' }];
    }
  }

  exit(code: number | null): ProviderPart[] {
    const result = this.result;
    // The exit code carries the HTTP status even when the error record does not.
    const byExit = code === null ? undefined : EXIT_FAILURES[code];
    if (result !== undefined && result.status !== 'success') {
      const byRecord = classifyGeminiError(record(result.error) ?? {});
      throw cliFailure(PRODUCT, byRecord === 'CLI_FAILED' ? (byExit ?? byRecord) : byRecord);
    }
    if (code !== 0) throw cliFailure(PRODUCT, byExit ?? 'CLI_FAILED');
    if (result === undefined) throw new DriverError('INCOMPLETE_STREAM', `${PRODUCT} ended without a result.`);
    const stats = record(result.stats) ?? {};
    // Every tool use was checked as it happened; without the bridge there may be none.
    if (!this.bridge && (count(stats.tool_calls) ?? 0) > 0) throw new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} reported tool calls, which this provider does not allow.`);
    return [
      { type: 'usage', usage: usage({ inputTokens: count(stats.input_tokens), outputTokens: count(stats.output_tokens), cachedInputTokens: count(stats.cached) }) },
      { type: 'finish', finishReason: 'stop' },
    ];
  }
}

/**
 * Gemini CLI has no status command (`/auth` is interactive), so sign-in is read from the
 * files it would use itself: the auth type selected in its settings and, for that type,
 * the key in its environment or its cached Google sign-in. Other auth types are unknown.
 */
async function geminiStatus(probe: CliProbe): Promise<CliStatus> {
  const home = join(probe.accountDirectory ?? probe.env.HOME ?? '', '.gemini');
  let selected: string | undefined;
  try {
    selected = text(record(record(record(JSON.parse(await readFile(join(home, 'settings.json'), 'utf8')))?.security)?.auth)?.selectedType);
  } catch {
    selected = undefined;
  }
  const hasKey = Boolean(probe.env.GEMINI_API_KEY);
  if (selected === undefined) return { signedIn: hasKey || undefined };
  if (selected === 'gemini-api-key') return { signedIn: hasKey };
  if (selected === 'oauth-personal') return { signedIn: await access(join(home, 'oauth_creds.json')).then(() => true, () => false) };
  return { signedIn: undefined };
}

/** Writes the run's settings into `cwd` (a fresh private folder) and, for a process, its policy at `root`. */
async function writeRunFiles(files: { settings: string; policy: string }, cwd: string, root?: string): Promise<void> {
  await mkdir(join(cwd, dirname(SETTINGS_FILE)), { mode: 0o700 });
  await writeFile(join(cwd, SETTINGS_FILE), files.settings, { mode: 0o600, flag: 'wx' });
  // Kept out of its file tools' listings and searches (the settings hold the bridge's token).
  await writeFile(join(cwd, '.geminiignore'), '.gemini/\n.geminiignore\n', { mode: 0o600 });
  if (root !== undefined) await writeFile(join(root, POLICY_FILE), files.policy, { mode: 0o600 });
}

/**
 * Refuses (CLI_UNAVAILABLE) a run whose workspace settings Gemini would not honour: it skips
 * them when the cwd is its home folder (`GEMINI_CLI_HOME`, else `HOME`), ignores them in an
 * untrusted folder, and reads them through a symbolic link to anywhere.
 */
export async function verifyGeminiRun(env: Record<string, string>, cwd: string): Promise<void> {
  const refuse = (why: string) => {
    throw new DriverError('CLI_UNAVAILABLE', `${PRODUCT} would ignore the run's locked-down settings: ${why}.`);
  };
  if (env.GEMINI_CLI_TRUST_WORKSPACE !== 'true' || env.GEMINI_RESTRICTED_MODE === 'true') refuse('the run folder would not be trusted');
  const home = env.GEMINI_CLI_HOME || env.HOME;
  const real = (path: string) => realpath(path).catch(() => path);
  if (home && (await real(home)) === (await real(cwd))) refuse(`its working directory ${cwd} is its home folder`);
  const file = join(cwd, SETTINGS_FILE);
  const stats = await lstat(file).catch(() => undefined);
  if (!stats?.isFile()) refuse(`${file} is missing or not a regular file`);
  if (stats && stats.uid !== (process.getuid?.() ?? stats.uid)) refuse(`${file} is not this user's`);
}

/** What a session's private Gemini home shares with the account: sign-in and user settings, not its saved chats. */
const ACCOUNT_ENTRIES = ['settings.json', 'oauth_creds.json', 'google_accounts.json', '.env'];

/** The workspace settings path relative to the run root, for one-shot plan files. */
const planSettingsPath = (root: string, cwd: string) => relative(root, join(cwd, SETTINGS_FILE));

/**
 * Each ACP session loads the settings of its own cwd: the run's settings go there (unless
 * already written, as for the process's own cwd) and are verified before `session/new`.
 */
async function prepareSession(files: { settings: string; policy: string }, spawn: WarmSpawn, cwd: string): Promise<void> {
  if (!(await lstat(join(cwd, SETTINGS_FILE)).then(() => true, () => false))) await writeRunFiles(files, cwd);
  await verifyGeminiRun({ ...spawn.env, ...lockedDownEnv }, cwd);
}

export const geminiCliDialect: CliDialect = {
  kind: 'gemini-cli',
  vendor: 'gemini-cli',
  product: PRODUCT,
  defaultName: 'Gemini CLI',
  defaultBinary: 'gemini',
  accountVariable: 'GEMINI_CLI_HOME',
  minimumVersion: '0.61.0',
  textStreaming: true,
  safetyEnv: { NO_COLOR: '1' },
  parseVersion: (output) => (/^\d+\.\d+\.\d+\s*$/m.test(output) ? firstSemver(output) : undefined),
  plan: ({ model, prompt, workspace, bridge, conversation }) => ({
    args: [
      '--prompt', PROMPT_SUFFIX, '--output-format', 'stream-json', ...lockedDownArgs(workspace.root), '--model', model,
      // A session turn's conversation is saved in the session's private GEMINI_CLI_HOME and resumed by id.
      ...(conversation === undefined ? [] : conversation.resumeId !== undefined ? ['--resume', conversation.resumeId] : ['--session-id', conversation.newId]),
    ],
    stdin: prompt,
    env: lockedDownEnv,
    files: (({ settings, policy }) => ({ [planSettingsPath(workspace.root, workspace.workDir)]: settings, [POLICY_FILE]: policy }))(runFiles(bridge, 'off')),
  }),
  verifyRun: verifyGeminiRun,
  parser: (bridge) => new GeminiStreamParser(bridge),
  nativeToolProfiles: ['read-only', 'workspace-write'],
  nativeSession: async (spawn, { profile, relay, bridge }, signal) => {
    const files = runFiles(bridge, profile);
    await writeRunFiles(files, spawn.cwd, spawn.root);
    return GeminiAcp.start(spawn, { args: lockedDownArgs(spawn.root), env: lockedDownEnv, prepare: (cwd) => prepareSession(files, spawn, cwd), classify: classifyGeminiError, toolKinds: [...NATIVE_PROFILES[profile].kinds, ...(bridge ? [MCP_TOOL_KIND] : [])], relay }, signal);
  },
  status: geminiStatus,
  resume: {
    prepareHome: async (account, home) => (await linkFromAccount(join(account, '.gemini'), join(home, '.gemini'), ACCOUNT_ENTRIES), { GEMINI_CLI_HOME: home }),
  },
  warm: {
    textStreaming: true,
    perModel: true,
    start: async (spawn, signal) => {
      await writeRunFiles(LOCKED_DOWN_FILES, spawn.cwd, spawn.root);
      await verifyGeminiRun({ ...spawn.env, ...lockedDownEnv }, spawn.cwd);
      return GeminiAcp.start(spawn, { args: lockedDownArgs(spawn.root), env: lockedDownEnv, prepare: (cwd) => prepareSession(LOCKED_DOWN_FILES, spawn, cwd), classify: classifyGeminiError, toolKinds: [] }, signal);
    },
  },
};

export const geminiCli = (options: CliProviderOptions = {}) => new CliProviderAdapter(geminiCliDialect, options);

export const GeminiCliProviderConfig = cliConfigSchema('gemini-cli', geminiCliDialect.nativeToolProfiles);
export const geminiCliKind = defineProviderKind({ kind: 'gemini-cli', configSchema: GeminiCliProviderConfig, create: (entry, env) => geminiCli(optionsFromConfig(entry, env)) });
