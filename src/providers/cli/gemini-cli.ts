/**
 * `gemini-cli`: Gemini CLI driven by `gemini --output-format stream-json`, the user content
 * on stdin. Its settings and policy for the run come from two private files: every tool,
 * MCP server, extension, hook and memory file off, no telemetry, updates or retries.
 * Gemini exits with the HTTP status mod 256 on API errors, which the classifier reads too.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../spec/v1.js';
import { defineProviderKind } from '../registry.js';
import { CliProviderAdapter, type CliDialect, type CliStreamParser } from './adapter.js';
import { cliConfigSchema, optionsFromConfig, type CliProviderOptions } from './config.js';
import { cliFailure, count, parseEventLine, record, text, usage, type FailureCode, type JsonRecord } from './events.js';
import { access, readFile, writeFile } from 'node:fs/promises';
import { GeminiAcp } from './gemini-acp.js';
import { join } from 'node:path';
import type { CliProbe, CliStatus } from './probe.js';
import { BRIDGE_SERVER_NAME, type ToolBridge } from './mcp-bridge.js';
import type { NativeToolProfile } from './native-tools.js';
import { firstSemver } from './readiness.js';

const PRODUCT = 'Gemini CLI';
const SETTINGS_FILE = 'gemini-system-settings.json';
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
function runFiles(bridge: ToolBridge | undefined, profile: NativeToolProfile): Record<string, string> {
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
    ...native.allow.map((tool) => policyRule(`toolName = "${tool}"`, 'allow', EXCEPTION_PRIORITY)),
    ...native.ask.map((tool) => policyRule(`toolName = "${tool}"`, 'ask_user', EXCEPTION_PRIORITY)),
    ...(bridge ? [policyRule(`mcpName = "${BRIDGE_SERVER_NAME}"`, 'allow', EXCEPTION_PRIORITY)] : []),
  ];
  return { [SETTINGS_FILE]: JSON.stringify(settings), [POLICY_FILE]: rules.join('\n') };
}
const LOCKED_DOWN_FILES = runFiles(undefined, 'off');
const lockedDownArgs = (root: string) => ['--extensions', 'none', '--admin-policy', join(root, POLICY_FILE), '--approval-mode', 'default', '--skip-trust'];
const lockedDownEnv = (root: string) => ({ GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(root, SETTINGS_FILE), NO_COLOR: '1' });

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

async function writeRunFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) await writeFile(join(root, path), content, { mode: 0o600 });
}

export const geminiCliDialect: CliDialect = {
  kind: 'gemini-cli',
  vendor: 'gemini-cli',
  product: PRODUCT,
  defaultName: 'Gemini CLI',
  defaultBinary: 'gemini',
  accountVariable: 'GEMINI_CLI_HOME',
  // It skips GEMINI_CLI_SYSTEM_SETTINGS_PATH unless the file and every parent are root's and writable by no one else.
  runFilesOwner: 'root',
  minimumVersion: '0.61.0',
  textStreaming: true,
  safetyEnv: { NO_COLOR: '1' },
  parseVersion: (output) => (/^\d+\.\d+\.\d+\s*$/m.test(output) ? firstSemver(output) : undefined),
  plan: ({ model, prompt, workspace, bridge }) => ({
    args: ['--prompt', PROMPT_SUFFIX, '--output-format', 'stream-json', ...lockedDownArgs(workspace.root), '--model', model],
    stdin: prompt,
    env: lockedDownEnv(workspace.root),
    files: runFiles(bridge, 'off'),
  }),
  parser: (bridge) => new GeminiStreamParser(bridge),
  nativeToolProfiles: ['read-only', 'workspace-write'],
  nativeSession: async (spawn, { profile, relay, bridge }, signal) => {
    await writeRunFiles(spawn.root, runFiles(bridge, profile));
    return GeminiAcp.start(spawn, { args: lockedDownArgs(spawn.root), env: lockedDownEnv(spawn.root), classify: classifyGeminiError, toolKinds: [...NATIVE_PROFILES[profile].kinds, ...(bridge ? [MCP_TOOL_KIND] : [])], relay }, signal);
  },
  status: geminiStatus,
  warm: {
    textStreaming: true,
    perModel: true,
    start: async (spawn, signal) => {
      await writeRunFiles(spawn.root, LOCKED_DOWN_FILES);
      return GeminiAcp.start(spawn, { args: lockedDownArgs(spawn.root), env: lockedDownEnv(spawn.root), classify: classifyGeminiError, toolKinds: [] }, signal);
    },
  },
};

export const geminiCli = (options: CliProviderOptions = {}) => new CliProviderAdapter(geminiCliDialect, options);

export const GeminiCliProviderConfig = cliConfigSchema('gemini-cli', geminiCliDialect.nativeToolProfiles);
export const geminiCliKind = defineProviderKind({ kind: 'gemini-cli', configSchema: GeminiCliProviderConfig, create: (entry, env) => geminiCli(optionsFromConfig(entry, env)) });
