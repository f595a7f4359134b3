/**
 * `codex`: Codex CLI driven by `codex exec --json` (JSONL, prompt on stdin via `-`).
 * exec mode reports each agent message whole, so text does not stream token by token.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../contract/v1.js';
import { defineProviderKind } from '../registry.js';
import { CliProviderAdapter, type CliDialect, type CliStreamParser } from './adapter.js';
import { cliConfigSchema, optionsFromConfig, type CliProviderOptions } from './config.js';
import { cliFailure, count, parseEventLine, record, text, usage, type FailureCode } from './events.js';
import { CodexAppServer } from './codex-app-server.js';
import { converse, runCommand, type CliProbe, type CliStatus } from './probe.js';
import { firstSemver } from './readiness.js';
import { BRIDGE_SERVER_NAME, type ToolBridge } from './mcp-bridge.js';
import { linkFromAccount } from './session-folder.js';

const PRODUCT = 'Codex CLI';

/**
 * Overrides that keep Codex to text generation: no shell, web, browser, MCP, hooks, plugins,
 * telemetry or endless reconnects. Codex 0.171 still offers `apply_patch`; the read-only
 * sandbox refuses it and the parser reports any file change as a policy violation.
 */
const SAFETY_OVERRIDES = [
  'approval_policy="never"',
  'sandbox_mode="read-only"',
  'web_search="disabled"',
  'mcp_servers={}',
  'project_doc_max_bytes=0',
  'check_for_update_on_startup=false',
  'analytics.enabled=false',
  'features.plugins=false',
  'features.unbounded_connection_retries=false',
  'features.shell_tool=false',
  'features.unified_exec=false',
  'features.apps=false',
  'features.hooks=false',
  'features.multi_agent=false',
  'features.goals=false',
  'features.view_image=false',
  'features.browser_use=false',
  'features.computer_use=false',
  'features.image_generation=false',
  'features.sleep_tool=false',
  'features.remote_plugin=false',
  'features.tool_suggest=false',
  'tools.experimental_request_user_input.enabled=false',
];

/** Classifies Codex's native failure text by its anchored prefixes. */
export function classifyCodexFailure(message: string): FailureCode {
  if (/^unexpected status 401\b/.test(message) || /^Missing environment variable/.test(message) || /access token could not be refreshed/.test(message)) return 'CLI_AUTH_REQUIRED';
  if (/^(unexpected status 429\b|exceeded retry limit, last status: 429)/.test(message)) return 'RATE_LIMITED';
  if (/^unexpected status 404\b.*model .*does not exist/s.test(message)) return 'UNSUPPORTED_MODEL';
  if (/^(Connection failed|error sending request|stream disconnected before completion)/.test(message)) return 'PROVIDER_UNREACHABLE';
  return 'CLI_FAILED';
}

const FORBIDDEN_ITEMS = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'web_search', 'collab_tool_call']);

/** The variable that hands the bridge's bearer token to Codex (never argv). */
const BRIDGE_TOKEN_VARIABLE = 'AGENTICDRIVER_MCP_TOKEN';

/**
 * With run tools: the bridge as Codex's only MCP server, limited to the run's tools. Codex's
 * own approval prompt is pre-answered: the runtime's approval gate decides on every call.
 */
function bridgeOverrides(bridge: ToolBridge | undefined): string[] {
  if (!bridge) return SAFETY_OVERRIDES;
  const tools = bridge.tools.map((tool) => JSON.stringify(tool.name)).join(', ');
  const server = `{ url = ${JSON.stringify(bridge.url)}, bearer_token_env_var = "${BRIDGE_TOKEN_VARIABLE}", enabled_tools = [${tools}], default_tools_approval_mode = "approve", required = true, tool_timeout_sec = 3600 }`;
  return SAFETY_OVERRIDES.map((override) => (override === 'mcp_servers={}' ? `mcp_servers={ ${BRIDGE_SERVER_NAME} = ${server} }` : override));
}

/**
 * `workspace-write`: Codex's file edits (`apply_patch`; its shell stays off) in the run's
 * working directory only, no network, not even /tmp; under the `untrusted` approval policy
 * Codex asks about every change, which is relayed.
 */
const WORKSPACE_WRITE_OVERRIDES = [
  'sandbox_workspace_write.writable_roots=[]',
  'sandbox_workspace_write.network_access=false',
  'sandbox_workspace_write.exclude_tmpdir_env_var=true',
  'sandbox_workspace_write.exclude_slash_tmp=true',
];

class CodexExecParser implements CliStreamParser {
  constructor(private readonly bridge: ToolBridge | undefined) {}

  private completed = false;
  private failure: string | undefined;
  private threadId: string | undefined;
  private readonly sent = new Map<string, string>();

  line(line: string): ProviderPart[] {
    const event = parseEventLine(line, PRODUCT);
    switch (event.type) {
      case 'thread.started':
        this.threadId = text(event.thread_id);
        return [{ type: 'progress' }];
      case 'item.started':
      case 'item.updated':
      case 'item.completed':
        return this.item(record(event.item));
      case 'turn.completed': {
        this.completed = true;
        const reported = record(event.usage) ?? {};
        const input = count(reported.input_tokens);
        return [{ type: 'usage', usage: usage({ inputTokens: input, outputTokens: count(reported.output_tokens), cachedInputTokens: count(reported.cached_input_tokens), reasoningTokens: count(reported.reasoning_output_tokens) }) }];
      }
      case 'turn.failed':
        this.failure = text(record(event.error)?.message) ?? '';
        return [];
      case 'error': {
        const message = text(event.message) ?? '';
        if (!message.startsWith('Reconnecting')) this.failure ??= message;
        return [{ type: 'progress' }];
      }
      default:
        return [{ type: 'progress' }];
    }
  }

  conversationId(): string | undefined {
    return this.threadId;
  }

  exit(code: number | null, _signal: NodeJS.Signals | null, stderrTail: string): ProviderPart[] {
    if (this.failure !== undefined) throw cliFailure(PRODUCT, classifyCodexFailure(this.failure));
    if (code !== 0) throw cliFailure(PRODUCT, classifyCodexFailure(lastLine(stderrTail).replace(/^Error: /, '')));
    if (!this.completed) throw new DriverError('INCOMPLETE_STREAM', `${PRODUCT} ended without completing the turn.`);
    return [{ type: 'finish', finishReason: 'stop' }];
  }

  private item(item: Record<string, unknown> | undefined): ProviderPart[] {
    const type = text(item?.type);
    const bridged = type === 'mcp_tool_call' && item?.server === BRIDGE_SERVER_NAME && this.bridge?.tools.some((tool) => tool.name === item.tool);
    if (type !== undefined && FORBIDDEN_ITEMS.has(type) && !bridged) throw new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} attempted a ${type} action, which this provider does not allow.`);
    if (type !== 'agent_message') return [{ type: 'progress' }];
    const id = text(item?.id) ?? '';
    const snapshot = text(item?.text) ?? '';
    const previous = this.sent.get(id) ?? '';
    if (!snapshot.startsWith(previous)) throw new DriverError('INVALID_CLI_OUTPUT', `${PRODUCT} rewrote an agent message it had already reported.`);
    this.sent.set(id, snapshot);
    return snapshot.length > previous.length ? [{ type: 'text-delta', text: snapshot.slice(previous.length) }] : [{ type: 'progress' }];
  }
}

const CATALOG_PAGES = 20;
const CATALOG_MODELS = 1000;

/** `codex login status` (exit 0 signed in, 1 not), then the bundled catalog from `app-server`'s `model/list`. */
async function codexStatus(probe: CliProbe, signal: AbortSignal): Promise<CliStatus> {
  const login = await runCommand(probe, ['login', 'status', ...SAFETY_OVERRIDES.flatMap((override) => ['--config', override])], signal);
  const signedIn = login.code === 0 ? true : login.code === 1 ? false : undefined;
  const models: string[] = [];
  let pages = 0;
  let complete = false;
  const listPage = (cursor?: string) => ({ id: ++pages + 1, method: 'model/list', params: { limit: 100, includeHidden: true, ...(cursor ? { cursor } : {}) } });
  const finished = await converse(
    probe,
    ['app-server', ...SAFETY_OVERRIDES.flatMap((override) => ['--config', override])],
    [{ id: 1, method: 'initialize', params: { clientInfo: { name: 'agenticdriver_catalog', version: '1.0.0' } } }],
    (message) => {
      if (message.id === 1) return [{ method: 'initialized' }, listPage()];
      if (typeof message.id !== 'number' || message.id < 2) return [];
      const result = record(message.result);
      if (!result || !Array.isArray(result.data)) return 'done';
      for (const row of result.data) {
        const model = text(record(row)?.model);
        if (model) models.push(model);
      }
      const cursor = text(result.nextCursor);
      if (!cursor) complete = true;
      return cursor && pages < CATALOG_PAGES && models.length < CATALOG_MODELS ? [listPage(cursor)] : 'done';
    },
    signal,
  ).catch(() => false);
  return finished && models.length > 0 ? { signedIn, models, complete } : { signedIn };
}

/** What a session's private CODEX_HOME shares with the account: its sign-in and its config, not its sessions or state. */
const ACCOUNT_ENTRIES = ['config.toml', 'auth.json'];

const lastLine = (stderr: string) => stderr.trim().split('\n').at(-1)?.trim() ?? '';

export const codexDialect: CliDialect = {
  kind: 'codex',
  vendor: 'codex',
  product: PRODUCT,
  defaultName: 'Codex CLI',
  defaultBinary: 'codex',
  accountVariable: 'CODEX_HOME',
  minimumVersion: '0.171.0',
  textStreaming: false,
  safetyEnv: { NO_COLOR: '1' },
  parseVersion: (output) => (/^codex-cli \d/m.test(output) ? firstSemver(output) : undefined),
  plan: ({ model, prompt, bridge, conversation }) => ({
    args: [
      'exec',
      // A session turn keeps its thread (in the session's private CODEX_HOME) and may resume it.
      ...(conversation?.resumeId !== undefined ? ['resume', conversation.resumeId] : []),
      '--json',
      '--skip-git-repo-check',
      ...(conversation ? [] : ['--ephemeral']),
      ...(conversation?.resumeId !== undefined ? [] : ['--sandbox', 'read-only']),
      '--model',
      model,
      ...bridgeOverrides(bridge).flatMap((override) => ['--config', override]),
      '-',
    ],
    stdin: prompt,
    env: { NO_COLOR: '1', ...(bridge ? { [BRIDGE_TOKEN_VARIABLE]: bridge.token } : {}) },
  }),
  parser: (bridge) => new CodexExecParser(bridge),
  // Codex reads files only through its shell, whose read-only sandbox reads the whole machine: no `read-only` profile.
  nativeToolProfiles: ['workspace-write'],
  nativeSession: (spawn, { relay, bridge }, signal) =>
    CodexAppServer.start(
      { ...spawn, env: { ...spawn.env, ...(bridge ? { [BRIDGE_TOKEN_VARIABLE]: bridge.token } : {}) } },
      [...bridgeOverrides(bridge), ...WORKSPACE_WRITE_OVERRIDES],
      classifyCodexFailure,
      signal,
      { sandbox: 'workspace-write', approvalPolicy: 'untrusted', items: ['fileChange', ...(bridge ? ['mcpToolCall'] : [])], relay },
    ),
  status: codexStatus,
  // `exec resume` has no --sandbox: the read-only sandbox comes from the overrides' `sandbox_mode`.
  resume: { prepareHome: async (account, home) => (await linkFromAccount(account, home, ACCOUNT_ENTRIES), { CODEX_HOME: home }) },
  warm: { textStreaming: true, perModel: false, start: (spawn, signal) => CodexAppServer.start(spawn, SAFETY_OVERRIDES, classifyCodexFailure, signal) },
};

export const codex = (options: CliProviderOptions = {}) => new CliProviderAdapter(codexDialect, options);

export const CodexProviderConfig = cliConfigSchema('codex', codexDialect.nativeToolProfiles);
export const codexKind = defineProviderKind({ kind: 'codex', configSchema: CodexProviderConfig, create: (entry, env) => codex(optionsFromConfig(entry, env)) });
