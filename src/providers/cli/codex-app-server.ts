/**
 * Codex's long-lived mode for warm reuse: one `codex app-server` process serves run after
 * run, each in a fresh ephemeral thread (so no run sees another's context), with text
 * streamed as `item/agentMessage/delta`. Anything but a cleanly ended turn (cancel, crash,
 * policy breach, a request from the CLI, output over the limit) closes the process.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../../runtime/provider.js';
import type { WarmRun, WarmSession, WarmSpawn } from './adapter.js';
import { cliFailure, count, record, text, usage, type FailureCode, type JsonRecord } from './events.js';
import { RpcProcess } from './rpc-process.js';

const PRODUCT = 'Codex CLI';
const ALLOWED_ITEMS = new Set(['userMessage', 'agentMessage', 'reasoning', 'plan', 'contextCompaction']);

/** `turnOver`: the CLI ended the turn itself, so the process is clean for another run. */
type Event = { part: ProviderPart } | { error: DriverError; turnOver?: boolean } | { failure: FailureCode };

export class CodexAppServer implements WarmSession {
  private constructor(
    private readonly rpc: RpcProcess,
    private readonly classify: (message: string) => FailureCode,
  ) {}

  static async start(spawn: WarmSpawn, overrides: string[], classify: (message: string) => FailureCode, signal: AbortSignal): Promise<CodexAppServer> {
    const rpc = new RpcProcess({ ...spawn, args: ['app-server', ...overrides.flatMap((override) => ['--config', override])], outputLimitBytes: Number.POSITIVE_INFINITY }, PRODUCT);
    const onAbort = () => void rpc.close();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await rpc.request('initialize', { clientInfo: { name: 'agenticdriver', version: '1.0.0' }, capabilities: null });
      rpc.send({ method: 'initialized' });
      signal.throwIfAborted();
      return new CodexAppServer(rpc, classify);
    } catch (error) {
      await rpc.close();
      throw signal.aborted ? signal.reason : error;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  get alive(): boolean {
    return this.rpc.alive;
  }

  close(): Promise<void> {
    return this.rpc.close();
  }

  async *run(run: WarmRun, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    const classify = this.classify;
    const queue: Event[] = [];
    let wake: (() => void) | undefined;
    const push = (event: Event) => {
      queue.push(event);
      wake?.();
    };
    let threadId: string | undefined;
    let reported: FailureCode | undefined;
    let outputBytes = 0;
    const streamed = new Map<string, string>();
    this.rpc.listen({
      ended: (error) => push({ error }),
      message: (message) => {
        outputBytes += JSON.stringify(message).length;
        if (outputBytes > run.outputLimitBytes) return push({ error: new DriverError('CLI_OUTPUT_LIMIT', 'The CLI produced more output than the limit allows.') });
        const params = record(message.params) ?? {};
        if (message.id !== undefined) {
          // A request from the CLI (approval, credentials, user input): nothing is granted.
          this.rpc.send({ id: message.id, error: { code: -32601, message: 'not supported' } });
          return push({ error: new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} asked for a permission this provider does not grant.`) });
        }
        if (params.threadId !== undefined && params.threadId !== threadId) return;
        push(this.notification(text(message.method) ?? '', params, streamed, classify));
      },
    });
    const onAbort = () => push({ error: signal.reason });
    signal.addEventListener('abort', onAbort, { once: true });
    let clean = false;
    try {
      signal.throwIfAborted();
      const thread = await this.rpc.request('thread/start', { model: run.model, cwd: run.cwd, approvalPolicy: 'never', sandbox: 'read-only', ephemeral: true });
      threadId = text(record(thread.thread)?.id);
      if (!threadId) throw new DriverError('INVALID_CLI_OUTPUT', `${PRODUCT} started a thread without an id.`);
      await this.rpc.request('turn/start', { threadId, input: [{ type: 'text', text: run.prompt, text_elements: [] }] });
      for (;;) {
        if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        const event = queue.shift()!;
        if ('failure' in event) {
          reported ??= event.failure;
          continue;
        }
        if ('error' in event) {
          clean = event.turnOver === true;
          // The fatal `error` notification names the cause more precisely than the closing turn.
          throw clean && reported !== undefined && reported !== 'CLI_FAILED' ? cliFailure(PRODUCT, reported) : event.error;
        }
        clean = event.part.type === 'finish';
        yield event.part;
        if (clean) return;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.rpc.listen(undefined);
      if (!clean) await this.rpc.close();
    }
  }

  private notification(method: string, params: JsonRecord, streamed: Map<string, string>, classify: (message: string) => FailureCode): Event {
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
        if (!ALLOWED_ITEMS.has(type)) return { error: new DriverError('CLI_POLICY_VIOLATION', `${PRODUCT} attempted a ${type} action, which this provider does not allow.`) };
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

