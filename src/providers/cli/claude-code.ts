/**
 * `claude-code`: Claude Code driven by `claude -p --output-format stream-json` with partial
 * messages, so text streams token by token. Success is judged by `is_error` and
 * `api_error_status`, never by the result's `subtype` (which says "success" for API errors).
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart, ToolCall } from '../contract/v1.js';
import { defineProviderKind } from '../registry.js';
import { CliProviderAdapter, type CliDialect, type CliStreamParser } from './adapter.js';
import { cliConfigSchema, optionsFromConfig, type CliProviderOptions } from './config.js';
import { cliFailure, count, parseEventLine, record, text, usage, type FailureCode, type JsonRecord } from './events.js';
import { converse, runCommand, type CliProbe, type CliStatus } from './probe.js';
import { firstSemver } from './readiness.js';
import { BRIDGE_SERVER_NAME, type BridgeTool, type ToolBridge } from './mcp-bridge.js';
import { nativeCall, type NativeToolProfile } from './native-tools.js';
import { SingleUseStreamSession } from './claude-stream-session.js';
import { linkFromAccount } from './session-folder.js';
import type { RunWorkspace } from './workspace.js';
import { join } from 'node:path';

const PRODUCT = 'Claude Code';

/**
 * No slash commands, skills, hooks or session files; `--restricted` also confines file tools
 * to the working directory. Built-in tools and permission mode: see `NATIVE_PROFILES`.
 */
const SAFETY_ARGS = [
  '--restricted',
  '--disable-slash-commands',
  '--strict-mcp-config',
  '--no-session-persistence',
  '--settings', '{"disableAllHooks":true}',
];

/**
 * Built-in tools per native tool profile and the permission mode that goes with it. With a
 * profile, whatever Claude would ask permission for goes to the bridge's permission tool.
 */
const NATIVE_PROFILES: Record<NativeToolProfile, { tools: string[]; permissionMode: string }> = {
  off: { tools: [], permissionMode: 'dontAsk' },
  'read-only': { tools: ['Read', 'Glob', 'Grep'], permissionMode: 'default' },
  'workspace-write': { tools: ['Read', 'Glob', 'Grep', 'Edit', 'Write'], permissionMode: 'acceptEdits' },
};
const nativeArgs = (profile: NativeToolProfile) => ['--tools', NATIVE_PROFILES[profile].tools.join(','), '--permission-mode', NATIVE_PROFILES[profile].permissionMode];
const OFF_ARGS = [...SAFETY_ARGS, ...nativeArgs('off')];

/** The bridge tool Claude asks (`--permission-prompt-tool`) before a native action it may not take unasked. */
const PERMISSION_TOOL = 'native-permission';
const BRIDGE_CALL_TIMEOUT_MS = 3_600_000;

/** stream-json output with partial messages, so text streams token by token. */
const STREAM_ARGS = ['--print', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'];
const NO_MCP = ['--mcp-config', '{"mcpServers":{}}'];
const MCP_CONFIG_FILE = 'claude-mcp.json';
/** Claude's names for the bridge's tools: `mcp__<server>__<tool>`. */
const BRIDGE_TOOL_PREFIX = `mcp__${BRIDGE_SERVER_NAME}__`;

/**
 * With run tools: only the bridge's MCP server (its token in a private file, not argv) and
 * only its tools allowed; every other tool stays off and unasked-for permissions are denied.
 */
function bridgeArgs(bridge: ToolBridge | undefined, workspace: RunWorkspace, profile: NativeToolProfile): { args: string[]; files: Record<string, string> } {
  // --safe-mode also drops every MCP server, so only runs without the bridge can have it.
  if (!bridge) return { args: ['--safe-mode', ...NO_MCP], files: {} };
  // A call may wait on a person's approval: Claude's per-call limit (default about a minute) is raised.
  const config = { mcpServers: { [BRIDGE_SERVER_NAME]: { type: 'http', url: bridge.url, headers: { Authorization: `Bearer ${bridge.token}` }, timeout: BRIDGE_CALL_TIMEOUT_MS } } };
  const allowed = bridge.tools.map((tool) => `${BRIDGE_TOOL_PREFIX}${tool.name}`);
  return {
    args: [
      '--mcp-config', join(workspace.root, MCP_CONFIG_FILE),
      ...(allowed.length > 0 ? ['--allowedTools', allowed.join(',')] : []),
      ...(profile === 'off' ? [] : ['--permission-prompt-tool', `${BRIDGE_TOOL_PREFIX}${PERMISSION_TOOL}`]),
    ],
    files: { [MCP_CONFIG_FILE]: JSON.stringify(config) },
  };
}

/**
 * Claude's permission prompt tool: gets `{tool_name, input, tool_use_id}` and answers
 * `{behavior: "allow", updatedInput}` once the run's gate approved the action as `native_<tool_name>`.
 */
function permissionTool(relay: (call: ToolCall) => Promise<void>): BridgeTool {
  return {
    name: PERMISSION_TOOL,
    description: 'Decides whether Claude Code may take a native action.',
    inputSchema: { properties: { tool_name: { type: 'string' }, input: { type: 'object' }, tool_use_id: { type: 'string' } }, required: ['tool_name', 'input'] },
    call: async (args) => {
      const tool = text(args.tool_name) ?? 'unknown';
      const input = record(args.input) ?? {};
      await relay(nativeCall(tool, input, text(args.tool_use_id) ?? `native-${randomUUID()}`));
      return JSON.stringify({ behavior: 'allow', updatedInput: input });
    },
  };
}

/** Telemetry, update checks, side traffic and the CLI's own retries off. */
const SAFETY_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  CLAUDE_CODE_MAX_RETRIES: '0',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
};

export function classifyClaudeResult(result: JsonRecord): FailureCode {
  const status = count(result.api_error_status);
  const message = text(result.result) ?? '';
  if (status === 401 || status === 403 || /^(Not logged in|Invalid API key)/.test(message)) return 'CLI_AUTH_REQUIRED';
  if (status === 429 || /limit reached/i.test(message)) return 'RATE_LIMITED';
  if (status === 404) return 'UNSUPPORTED_MODEL';
  if (result.api_error === 'connection_failed' || /^API Error: Connection/.test(message)) return 'PROVIDER_UNREACHABLE';
  return 'CLI_FAILED';
}

class ClaudeStreamParser implements CliStreamParser {
  constructor(
    private readonly bridge: ToolBridge | undefined,
    private readonly profile: NativeToolProfile,
  ) {}

  private result: JsonRecord | undefined;
  private failure: FailureCode | undefined;
  private streamedThisMessage = false;
  private emitted = false;

  line(line: string): ProviderPart[] {
    const event = parseEventLine(line, PRODUCT);
    switch (event.type) {
      case 'stream_event':
        return this.streamEvent(record(event.event) ?? {});
      case 'assistant':
        return this.assistant(record(event.message) ?? {}, text(event.error));
      case 'rate_limit_event':
        if (record(event.rate_limit_info)?.status === 'rejected') this.failure = 'RATE_LIMITED';
        return [{ type: 'progress' }];
      case 'result':
        return this.finalResult(event);
      default:
        return [{ type: 'progress' }];
    }
  }

  exit(code: number | null): ProviderPart[] {
    const result = this.result;
    if (result === undefined) {
      if (code === 0) throw new DriverError('INCOMPLETE_STREAM', `${PRODUCT} ended without a result.`);
      throw cliFailure(PRODUCT, this.failure ?? 'CLI_FAILED');
    }
    if (result.is_error === true || typeof result.result !== 'string') throw cliFailure(PRODUCT, this.failure ?? classifyClaudeResult(result));
    if (Array.isArray(result.permission_denials) && result.permission_denials.length > 0) {
      throw new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} asked for a permission this provider does not grant.`);
    }
    if (code !== 0) throw cliFailure(PRODUCT, 'CLI_FAILED');
    const parts: ProviderPart[] = [];
    if (!this.emitted && result.result !== '') parts.push({ type: 'text-delta', text: result.result });
    const reported = record(result.usage) ?? {};
    const input = count(reported.input_tokens);
    const cacheRead = count(reported.cache_read_input_tokens);
    const cacheCreation = count(reported.cache_creation_input_tokens);
    const cost = typeof result.total_cost_usd === 'number' && result.total_cost_usd >= 0 ? result.total_cost_usd : undefined;
    parts.push({
      type: 'usage',
      usage: usage({
        inputTokens: input === undefined ? undefined : input + (cacheRead ?? 0) + (cacheCreation ?? 0),
        outputTokens: count(reported.output_tokens),
        cachedInputTokens: cacheRead,
        apiEquivalentCostUsd: cost,
      }),
    });
    parts.push({ type: 'finish', finishReason: result.stop_reason === 'max_tokens' ? 'length' : 'stop' });
    return parts;
  }

  private streamEvent(event: JsonRecord): ProviderPart[] {
    if (event.type === 'message_start') this.streamedThisMessage = false;
    if (event.type === 'content_block_start') this.refuseToolUse(record(event.content_block));
    const delta = record(event.delta);
    if (event.type === 'content_block_delta' && delta?.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') {
      this.streamedThisMessage = true;
      this.emitted = true;
      return [{ type: 'text-delta', text: delta.text }];
    }
    return [{ type: 'progress' }];
  }

  private assistant(message: JsonRecord, error: string | undefined): ProviderPart[] {
    if (error === 'rate_limit') this.failure = 'RATE_LIMITED';
    if (error === 'authentication_failed') this.failure = 'CLI_AUTH_REQUIRED';
    if (error !== undefined || message.model === '<synthetic>') return [{ type: 'progress' }];
    const blocks = Array.isArray(message.content) ? message.content.map(record) : [];
    for (const block of blocks) this.refuseToolUse(block);
    if (this.streamedThisMessage) return [{ type: 'progress' }];
    const parts: ProviderPart[] = [];
    for (const block of blocks) {
      if (block?.type === 'text' && typeof block.text === 'string' && block.text !== '') parts.push({ type: 'text-delta', text: block.text });
    }
    if (parts.length > 0) this.emitted = true;
    return parts.length > 0 ? parts : [{ type: 'progress' }];
  }

  private finalResult(event: JsonRecord): ProviderPart[] {
    this.result = event;
    return [{ type: 'progress' }];
  }

  private refuseToolUse(block: JsonRecord | undefined): void {
    const name = text(block?.name) ?? '';
    if (block?.type === 'tool_use' && this.bridge?.tools.some((tool) => `${BRIDGE_TOOL_PREFIX}${tool.name}` === name)) return;
    if (block?.type === 'tool_use' && NATIVE_PROFILES[this.profile].tools.includes(name)) return;
    if (block?.type === 'tool_use' || block?.type === 'server_tool_use') {
      throw new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} attempted to use a tool, which this provider does not allow.`);
    }
  }
}

/**
 * `claude auth status` (JSON with `loggedIn`), then the model picker's list from the
 * `initialize` control request of the stream-json input mode (answered before any prompt).
 */
async function claudeStatus(probe: CliProbe, signal: AbortSignal): Promise<CliStatus> {
  const auth = await runCommand(probe, ['auth', 'status'], signal);
  let signedIn: boolean | undefined;
  try {
    const loggedIn = record(JSON.parse(auth.stdout))?.loggedIn;
    signedIn = typeof loggedIn === 'boolean' ? loggedIn : undefined;
  } catch {
    signedIn = undefined;
  }
  const models: string[] = [];
  const requestId = randomUUID();
  const answered = await converse(
    probe,
    ['--print', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', ...OFF_ARGS, '--safe-mode', ...NO_MCP],
    [{ type: 'control_request', request_id: requestId, request: { subtype: 'initialize', hooks: {}, sdkMcpServers: [] } }],
    (message) => {
      const response = record(message.response);
      if (message.type !== 'control_response' || response?.request_id !== requestId) return [];
      const rows = record(response.response)?.models;
      for (const row of Array.isArray(rows) ? rows : []) {
        for (const name of [text(record(row)?.value), text(record(row)?.resolvedModel)]) if (name) models.push(name);
      }
      return 'done';
    },
    signal,
  ).catch(() => false);
  return answered && models.length > 0 ? { signedIn, models, complete: true } : { signedIn };
}

export const claudeCodeDialect: CliDialect = {
  kind: 'claude-code',
  vendor: 'claude-code',
  product: PRODUCT,
  defaultName: 'Claude Code',
  defaultBinary: 'claude',
  accountVariable: 'CLAUDE_CONFIG_DIR',
  minimumVersion: '2.1.332',
  textStreaming: true,
  safetyEnv: SAFETY_ENV,
  parseVersion: (output) => (/\(Claude Code\)/.test(output) ? firstSemver(output) : undefined),
  plan: ({ model, prompt, bridge, workspace, nativeTools, conversation }) => {
    const tools = bridgeArgs(bridge, workspace, nativeTools);
    // A session turn saves its conversation (in the session's private CLAUDE_CONFIG_DIR) to resume it next turn.
    const persistence = conversation === undefined ? SAFETY_ARGS : [...SAFETY_ARGS.filter((arg) => arg !== '--no-session-persistence'), ...(conversation.resumeId !== undefined ? ['--resume', conversation.resumeId] : ['--session-id', conversation.newId])];
    return {
      args: [...STREAM_ARGS, ...persistence, ...nativeArgs(nativeTools), ...tools.args, '--model', model],
      stdin: prompt,
      env: SAFETY_ENV,
      files: tools.files,
    };
  },
  parser: (bridge, nativeTools) => new ClaudeStreamParser(bridge, nativeTools),
  nativeToolProfiles: ['read-only', 'workspace-write'],
  permissionTool,
  warm: {
    textStreaming: true,
    perModel: true,
    singleUse: true,
    start: async (spawn) => {
      const args = [...STREAM_ARGS, '--input-format', 'stream-json', ...OFF_ARGS, '--safe-mode', ...NO_MCP, '--model', spawn.model];
      return new SingleUseStreamSession(spawn, args, PRODUCT, () => new ClaudeStreamParser(undefined, 'off'));
    },
  },
  status: claudeStatus,
  resume: {
    // The sign-in stays in the account directory (Claude's credential store is told so); settings are linked.
    prepareHome: async (account, home) => (await linkFromAccount(account, home, ['settings.json']), { CLAUDE_CONFIG_DIR: home, CLAUDE_SECURESTORAGE_CONFIG_DIR: account }),
  },
};

export const claudeCode = (options: CliProviderOptions = {}) => new CliProviderAdapter(claudeCodeDialect, options);

export const ClaudeCodeProviderConfig = cliConfigSchema('claude-code', claudeCodeDialect.nativeToolProfiles);
export const claudeCodeKind = defineProviderKind({ kind: 'claude-code', configSchema: ClaudeCodeProviderConfig, create: (entry, env) => claudeCode(optionsFromConfig(entry, env)) });
