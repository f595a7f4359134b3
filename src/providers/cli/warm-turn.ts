/**
 * One run on a long-lived JSON-RPC CLI, shared by the warm modes: the dialect starts the
 * turn and turns messages into parts; this loop enforces the output bound, refuses every
 * request the CLI makes that the driver does not answer (by default no permission,
 * credential or input is ever granted; a refused answer fails the turn), follows
 * cancellation, and closes the process unless the turn ended cleanly (a `finish` part, or a
 * failure the CLI reported for a turn it ended itself).
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../contract/v1.js';
import type { JsonRecord } from './events.js';
import type { RpcProcess } from './rpc-process.js';

export type TurnEvent = { part: ProviderPart } | { error: DriverError; turnOver?: boolean };
export type Push = (event: TurnEvent) => void;

export interface TurnDriver {
  product: string;
  outputLimitBytes: number;
  /** Sends what starts the turn; may push events (e.g. when a prompt request settles). */
  begin(push: Push): Promise<void>;
  /** A notification from the CLI. */
  message(message: JsonRecord, push: Push): void;
  /**
   * A request from the CLI (e.g. a permission prompt): the answer's result, or undefined when
   * the driver does not handle it. A rejection fails the turn with that error.
   */
  request?(message: JsonRecord): Promise<JsonRecord> | undefined;
}

export async function* driveTurn(rpc: RpcProcess, driver: TurnDriver, signal: AbortSignal): AsyncGenerator<ProviderPart> {
  const queue: TurnEvent[] = [];
  let wake: (() => void) | undefined;
  const push: Push = (event) => {
    queue.push(event);
    wake?.();
  };
  let outputBytes = 0;
  rpc.listen({
    ended: (error) => push({ error }),
    message: (message) => {
      outputBytes += JSON.stringify(message).length;
      if (outputBytes > driver.outputLimitBytes) return push({ error: new DriverError('CLI_OUTPUT_LIMIT', 'The CLI produced more output than the limit allows.') });
      if (message.id !== undefined && message.method !== undefined) {
        const answer = driver.request?.(message);
        if (answer) return void answer.then((result) => rpc.send({ id: message.id, result }), (error: unknown) => push({ error: error instanceof DriverError ? error : new DriverError('CLI_FAILED', `${driver.product} failed.`, { cause: error }) }));
        rpc.send({ id: message.id, error: { code: -32601, message: 'not supported' } });
        return push({ error: new DriverError('CLI_POLICY_VIOLATION', `${driver.product} asked for a permission this provider does not grant.`) });
      }
      driver.message(message, push);
    },
  });
  const onAbort = () => push({ error: signal.reason });
  signal.addEventListener('abort', onAbort, { once: true });
  let clean = false;
  try {
    signal.throwIfAborted();
    await driver.begin(push);
    for (;;) {
      if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const event = queue.shift()!;
      if ('error' in event) {
        clean = event.turnOver === true && !signal.aborted;
        throw event.error;
      }
      clean = event.part.type === 'finish';
      yield event.part;
      if (clean) return;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    rpc.listen(undefined);
    if (!clean) await rpc.close();
  }
}
