/**
 * A long-lived CLI speaking line-delimited JSON-RPC on stdio (Codex `app-server`, Gemini
 * `--acp`), under the same supervision as a one-shot run: own process group, bounded output,
 * restricted env. Responses settle their requests; every other message (notifications and
 * requests from the CLI) goes to the one current listener. Once the process ends, for any
 * reason, it is dead for good: pending requests and the listener learn why.
 */
import { DriverError } from '../../protocol/errors.js';
import { parseEventLine, record, type JsonRecord } from './events.js';
import { OpenStdin, runCli, type CliOutput, type CliSpawnOptions } from './process.js';

export interface RpcListener {
  message(message: JsonRecord): void;
  ended(error: DriverError): void;
}

export class RpcProcess {
  private readonly stdin = new OpenStdin();
  private readonly stop = new AbortController();
  private readonly pending = new Map<number, { resolve(result: JsonRecord): void; reject(error: DriverError): void }>();
  private nextId = 1;
  private listener: RpcListener | undefined;
  private death: DriverError | undefined;
  readonly ended: Promise<void>;

  constructor(
    options: Omit<CliSpawnOptions, 'stdin'>,
    private readonly product: string,
    /** Whether messages carry `"jsonrpc": "2.0"` (ACP does; Codex's app-server omits it). */
    private readonly jsonrpcField = false,
  ) {
    this.ended = this.pump(runCli({ ...options, stdin: this.stdin }, this.stop.signal));
  }

  get alive(): boolean {
    return this.death === undefined;
  }

  listen(listener: RpcListener | undefined): void {
    this.listener = listener;
  }

  /** Sends a request; resolves with its result, rejects with the CLI's error or the process's end. */
  request(method: string, params: JsonRecord): Promise<JsonRecord> {
    if (this.death) return Promise.reject(this.death);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ id, method, params });
    });
  }

  send(message: JsonRecord): void {
    this.stdin.write(`${JSON.stringify(this.jsonrpcField ? { jsonrpc: '2.0', ...message } : message)}\n`);
  }

  /** Stops the process group and waits until it is gone. */
  async close(): Promise<void> {
    this.stop.abort(new DriverError('CLI_FAILED', `${this.product} was stopped.`));
    await this.ended;
  }

  private async pump(output: AsyncGenerator<CliOutput>): Promise<void> {
    try {
      for await (const item of output) {
        if (item.type === 'exit') break;
        this.dispatch(parseEventLine(item.line, this.product));
      }
      this.die(new DriverError('CLI_FAILED', `${this.product} exited unexpectedly.`));
    } catch (error) {
      this.die(error instanceof DriverError ? error : new DriverError('CLI_FAILED', `${this.product} failed.`, { cause: error }));
    }
  }

  private dispatch(message: JsonRecord): void {
    const isResponse = typeof message.id === 'number' && message.method === undefined;
    if (!isResponse) return this.listener?.message(message);
    const waiter = this.pending.get(message.id as number);
    if (!waiter) throw new DriverError('INVALID_CLI_OUTPUT', `${this.product} answered a request that was never sent.`);
    this.pending.delete(message.id as number);
    const error = record(message.error);
    if (error) waiter.reject(Object.assign(new DriverError('CLI_FAILED', `${this.product} refused a request.`), { native: error }));
    else waiter.resolve(record(message.result) ?? {});
  }

  private die(error: DriverError): void {
    if (this.death) return;
    this.death = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    this.listener?.ended(error);
  }
}

/** The native error object of a refused request, for the dialect's classifier. */
export const nativeError = (error: unknown): JsonRecord | undefined => record((error as { native?: unknown } | undefined)?.native);

/**
 * Runs the start-up handshake of a fresh RPC process. The process is closed when the
 * handshake fails or `signal` aborts, so a failed start never leaves a CLI behind.
 */
export async function handshake(rpc: RpcProcess, signal: AbortSignal, steps: () => Promise<void>): Promise<void> {
  const onAbort = () => void rpc.close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await steps();
    signal.throwIfAborted();
  } catch (error) {
    await rpc.close();
    throw signal.aborted ? signal.reason : error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
