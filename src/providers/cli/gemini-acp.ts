/**
 * Gemini CLI's long-lived mode for warm reuse: one `gemini --acp` process (Agent Client
 * Protocol, JSON-RPC 2.0 on stdio) per model serves run after run, each in a fresh
 * `session/new` (so no run sees another's context). The process gets the same private
 * settings and deny-all policy as a one-shot run; it authenticates each session from the
 * account's selected auth type, so `authenticate` (which rewrites user settings) is never sent.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../contract/v1.js';
import type { WarmRun, WarmSession, WarmSpawn } from './adapter.js';
import { cliFailure, count, record, text, usage, type FailureCode, type JsonRecord } from './events.js';
import { handshake, nativeError, RpcProcess } from './rpc-process.js';
import { driveTurn, type TurnEvent } from './warm-turn.js';
import { nativeCall, type NativeRelay } from './native-tools.js';

const PRODUCT = 'Gemini CLI';
const ACP_PROTOCOL_VERSION = 1;

export interface GeminiAcpSetup {
  /** Extra arguments (policy, extensions, approval mode) and env (settings path) of the process. */
  args: string[];
  env: Record<string, string>;
  classify(error: JsonRecord): FailureCode;
  /** ACP tool kinds (`read`, `search`, `edit`) the CLI's own tools may report; none by default. */
  toolKinds: readonly string[];
  /** Run before each `session/new` with the session's cwd (whose settings Gemini loads for it). */
  prepare?(cwd: string): Promise<void>;
  /** Where `session/request_permission` goes (runs under a native tool profile); refused without. */
  relay?: NativeRelay;
}

export class GeminiAcp implements WarmSession {
  private constructor(
    private readonly rpc: RpcProcess,
    private readonly setup: GeminiAcpSetup,
  ) {}

  static async start(spawn: WarmSpawn, setup: GeminiAcpSetup, signal: AbortSignal): Promise<GeminiAcp> {
    const rpc = new RpcProcess(
      { ...spawn, env: { ...spawn.env, ...setup.env }, args: ['--acp', ...setup.args, '--model', spawn.model], outputLimitBytes: Number.POSITIVE_INFINITY },
      PRODUCT,
      true,
    );
    await handshake(rpc, signal, async () => {
      await rpc.request('initialize', { protocolVersion: ACP_PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
    });
    return new GeminiAcp(rpc, setup);
  }

  get alive(): boolean {
    return this.rpc.alive;
  }

  close(): Promise<void> {
    return this.rpc.close();
  }

  async *run(run: WarmRun, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    let sessionId: string | undefined;
    yield* driveTurn(
      this.rpc,
      {
        product: PRODUCT,
        outputLimitBytes: run.outputLimitBytes,
        begin: async (push) => {
          await this.setup.prepare?.(run.cwd);
          sessionId = text((await this.request('session/new', { cwd: run.cwd, mcpServers: [] })).sessionId);
          if (!sessionId) throw new DriverError('INVALID_CLI_OUTPUT', `${PRODUCT} opened a session without an id.`);
          this.rpc.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: run.prompt }] }).then(
            (result) => {
              for (const event of this.promptEnded(result)) push(event);
            },
            (error: unknown) => push({ error: this.failure(error), turnOver: nativeError(error) !== undefined }),
          );
        },
        message: (message, push) => {
          const params = record(message.params) ?? {};
          if (message.method !== 'session/update' || params.sessionId !== sessionId) return;
          push(this.update(record(params.update) ?? {}));
        },
        request: (message) => {
          const params = record(message.params) ?? {};
          const relay = this.setup.relay;
          if (message.method !== 'session/request_permission' || params.sessionId !== sessionId || !relay) return undefined;
          return permit(params, relay);
        },
      },
      signal,
    );
  }

  private async request(method: string, params: JsonRecord): Promise<JsonRecord> {
    try {
      return await this.rpc.request(method, params);
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** A refused request classified like a one-shot run's error record; the process's own end passes through. */
  private failure(error: unknown): DriverError {
    const native = nativeError(error);
    if (!native) return error instanceof DriverError ? error : new DriverError('CLI_FAILED', `${PRODUCT} failed.`);
    // -32000 is ACP's "authentication required".
    if (native.code === -32000 && /auth|api key/i.test(text(native.message) ?? '')) return cliFailure(PRODUCT, 'CLI_AUTH_REQUIRED');
    return cliFailure(PRODUCT, this.setup.classify(native));
  }

  private update(update: JsonRecord): { part: ProviderPart } | { error: DriverError } {
    switch (update.sessionUpdate) {
      case 'agent_message_chunk': {
        const chunk = text(record(update.content)?.text) ?? '';
        return { part: chunk === '' ? { type: 'progress' } : { type: 'text-delta', text: chunk } };
      }
      case 'tool_call':
      case 'tool_call_update':
        if (this.setup.toolKinds.includes(text(update.kind) ?? '')) return { part: { type: 'progress' } };
        return { error: new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} attempted to use a tool, which this provider does not allow.`) };
      default:
        return { part: { type: 'progress' } };
    }
  }

  private promptEnded(result: JsonRecord): TurnEvent[] {
    const stop = result.stopReason;
    if (stop !== 'end_turn' && stop !== 'max_tokens') return [{ error: cliFailure(PRODUCT, 'CLI_FAILED'), turnOver: true }];
    const tokens = record(record(record(result._meta)?.quota)?.token_count) ?? {};
    return [
      { part: { type: 'usage', usage: usage({ inputTokens: count(tokens.input_tokens), outputTokens: count(tokens.output_tokens) }) } },
      { part: { type: 'finish', finishReason: stop === 'max_tokens' ? 'length' : 'stop' } },
    ];
  }
}

/**
 * A permission request relayed as `native_<tool>` (the tool from Gemini's generated call id
 * `<tool>__<tool>_<time>_<n>` or `<tool>-<time>-<n>`, else the ACP kind) with what Gemini shows a person: title, paths and
 * proposed file contents. Approved → Gemini's allow-once option; otherwise the relay's error.
 */
async function permit(params: JsonRecord, relay: NativeRelay): Promise<JsonRecord> {
  const toolCall = record(params.toolCall) ?? {};
  const id = text(toolCall.toolCallId) ?? '';
  const tool = /^([a-z_]+?)(?:__|-\d+-\d+$)/.exec(id)?.[1] ?? text(toolCall.kind) ?? 'unknown';
  const list = (value: unknown) => (Array.isArray(value) ? value.map(record) : []);
  const locations = list(toolCall.locations).map((location) => text(location?.path)).filter((path) => path !== undefined);
  const changes = list(toolCall.content).filter((item) => item?.type === 'diff').map((item) => ({ path: text(item?.path), newText: text(item?.newText) }));
  const allowOnce = list(params.options).find((option) => option?.kind === 'allow_once')?.optionId;
  if (typeof allowOnce !== 'string') throw new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} asked for a permission it offers no one-time answer for.`);
  await relay(nativeCall(tool, { title: text(toolCall.title) ?? '', locations, changes }, id || `native-${randomUUID()}`));
  return { outcome: { outcome: 'selected', optionId: allowOnce } };
}
