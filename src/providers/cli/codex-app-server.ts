/**
 * Codex's long-lived mode for warm reuse: one `codex app-server` process serves run after
 * run, each in a fresh ephemeral thread (so no run sees another's context), with text
 * streamed as `item/agentMessage/delta`. A run under a native tool profile gets a process of
 * its own whose thread has the profile's sandbox and approval policy; Codex's file change
 * approval requests are then relayed (any other request is refused).
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../contract/v1.js';
import type { WarmRun, WarmSession, WarmSpawn } from './adapter.js';
import { cliFailure, count, record, text, usage, type FailureCode, type JsonRecord } from './events.js';
import { handshake, RpcProcess } from './rpc-process.js';
import { driveTurn, type TurnEvent } from './warm-turn.js';
import { insideDirectory, nativeCall, type NativeRelay } from './native-tools.js';

const PRODUCT = 'Codex CLI';
const ALLOWED_ITEMS = ['userMessage', 'agentMessage', 'reasoning', 'plan', 'contextCompaction'];

/** The thread's sandbox and approval policy and what Codex may do under them. */
export interface CodexThreadPolicy {
  sandbox: 'read-only' | 'workspace-write';
  approvalPolicy: 'never' | 'untrusted';
  /** Item types besides messages and reasoning Codex may report (e.g. `fileChange`). */
  items: readonly string[];
  /** Where Codex's file change approval requests go; refused without. */
  relay?: NativeRelay;
}

const TEXT_ONLY: CodexThreadPolicy = { sandbox: 'read-only', approvalPolicy: 'never', items: [] };

export class CodexAppServer implements WarmSession {
  private constructor(
    private readonly rpc: RpcProcess,
    private readonly classify: (message: string) => FailureCode,
    private readonly policy: CodexThreadPolicy,
  ) {}

  static async start(spawn: WarmSpawn, overrides: string[], classify: (message: string) => FailureCode, signal: AbortSignal, policy: CodexThreadPolicy = TEXT_ONLY): Promise<CodexAppServer> {
    const rpc = new RpcProcess({ ...spawn, args: ['app-server', ...overrides.flatMap((override) => ['--config', override])], outputLimitBytes: Number.POSITIVE_INFINITY }, PRODUCT);
    await handshake(rpc, signal, async () => {
      await rpc.request('initialize', { clientInfo: { name: 'agenticdriver', version: '1.0.0' }, capabilities: null });
      rpc.send({ method: 'initialized' });
    });
    return new CodexAppServer(rpc, classify, policy);
  }

  get alive(): boolean {
    return this.rpc.alive;
  }

  close(): Promise<void> {
    return this.rpc.close();
  }

  async *run(run: WarmRun, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    let threadId: string | undefined;
    // The fatal `error` notification names the cause more precisely than the closing turn.
    let reported: FailureCode | undefined;
    const streamed = new Map<string, string>();
    // File changes Codex proposed (item/started), by item id, for its approval request.
    const proposed = new Map<string, JsonRecord[]>();
    yield* driveTurn(
      this.rpc,
      {
        product: PRODUCT,
        outputLimitBytes: run.outputLimitBytes,
        begin: async () => {
          const thread = await this.rpc.request('thread/start', { model: run.model, cwd: run.cwd, approvalPolicy: this.policy.approvalPolicy, sandbox: this.policy.sandbox, ephemeral: true });
          threadId = text(record(thread.thread)?.id);
          if (!threadId) throw new DriverError('INVALID_CLI_OUTPUT', `${PRODUCT} started a thread without an id.`);
          await this.rpc.request('turn/start', { threadId, input: [{ type: 'text', text: run.prompt, text_elements: [] }] });
        },
        message: (message, push) => {
          const params = record(message.params) ?? {};
          if (params.threadId !== undefined && params.threadId !== threadId) return;
          const item = record(params.item);
          if (message.method === 'item/started' && item?.type === 'fileChange') proposed.set(text(item.id) ?? '', Array.isArray(item.changes) ? item.changes.map((change) => record(change) ?? {}) : []);
          const event = this.notification(text(message.method) ?? '', params, streamed);
          if ('failure' in event) reported ??= event.failure;
          else if ('error' in event && event.turnOver && reported !== undefined && reported !== 'CLI_FAILED') push({ error: cliFailure(PRODUCT, reported), turnOver: true });
          else push(event);
        },
        request: (message) => {
          const params = record(message.params) ?? {};
          const relay = this.policy.relay;
          if (message.method !== 'item/fileChange/requestApproval' || params.threadId !== threadId || !relay) return undefined;
          return approveFileChange(proposed.get(text(params.itemId) ?? '') ?? [], text(params.itemId) ?? '', params, run.cwd, relay);
        },
      },
      signal,
    );
  }

  private notification(method: string, params: JsonRecord, streamed: Map<string, string>): TurnEvent | { failure: FailureCode } {
    const classify = this.classify;
    switch (method) {
      case 'item/agentMessage/delta': {
        const delta = text(params.delta) ?? '';
        const id = text(params.itemId) ?? '';
        streamed.set(id, (streamed.get(id) ?? '') + delta);
        return { part: delta === '' ? { type: 'progress' } : { type: 'text-delta', text: delta } };
      }
      case 'item/started':
      case 'item/completed': {
        const item = record(params.item) ?? {};
        const type = text(item.type) ?? '';
        if (!ALLOWED_ITEMS.includes(type) && !this.policy.items.includes(type)) return { error: new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} attempted a ${type} action, which this provider does not allow.`) };
        const full = text(item.text);
        const sent = streamed.get(text(item.id) ?? '') ?? '';
        if (method === 'item/completed' && type === 'agentMessage' && full !== undefined && full.length > sent.length && full.startsWith(sent)) {
          streamed.set(text(item.id) ?? '', full);
          return { part: { type: 'text-delta', text: full.slice(sent.length) } };
        }
        return { part: { type: 'progress' } };
      }
      case 'thread/tokenUsage/updated': {
        const total = record(record(params.tokenUsage)?.total) ?? {};
        return { part: { type: 'usage', usage: usage({ inputTokens: count(total.inputTokens), outputTokens: count(total.outputTokens), cachedInputTokens: count(total.cachedInputTokens), reasoningTokens: count(total.reasoningOutputTokens) }) } };
      }
      case 'error':
        if (params.willRetry === true) return { part: { type: 'progress' } };
        return { failure: classify(text(record(params.error)?.message) ?? '') };
      case 'turn/completed': {
        const turn = record(params.turn) ?? {};
        if (turn.status === 'completed') return { part: { type: 'finish', finishReason: 'stop' } };
        return { error: cliFailure(PRODUCT, classify(text(record(turn.error)?.message) ?? '')), turnOver: true };
      }
      default:
        return { part: { type: 'progress' } };
    }
  }
}


/**
 * A file change Codex asks about, relayed as `native_apply_patch` with the changes it proposed
 * (`path`, `kind`, `diff`). A change outside the run's working directory, or a request for
 * wider write access, is refused without asking anyone. Approved → `accept` for this change only.
 */
async function approveFileChange(changes: JsonRecord[], itemId: string, params: JsonRecord, cwd: string, relay: NativeRelay): Promise<JsonRecord> {
  const paths = changes.map((change) => text(change.path) ?? '');
  if (changes.length === 0 || params.grantRoot != null || !paths.every((path) => insideDirectory(cwd, path))) {
    throw new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} asked to change files outside the run's working directory.`);
  }
  await relay(nativeCall('apply_patch', { changes: changes.map((change) => ({ path: text(change.path), kind: text(record(change.kind)?.type), diff: text(change.diff) })) }, itemId));
  return { decision: 'accept' };
}
