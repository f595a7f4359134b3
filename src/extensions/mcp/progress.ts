/**
 * A tool call's progress notifications: one per run event the tool carries, and one more
 * whenever the run stays silent for `heartbeatMs` (a model thinking, a person deciding), because
 * many MCP clients give up on a call after 60 s without progress. Only for a call that sent a
 * progress token; `progress` only ever grows.
 */
import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../../shared/clock.js';

export interface ProgressSink {
  send(message: string): Promise<void>;
  stop(): void;
}

export function heartbeatProgress(options: { token: ProgressToken | undefined; send(notification: ServerNotification): Promise<void>; clock: Clock; heartbeatMs: number }): ProgressSink {
  const { token, clock, heartbeatMs } = options;
  if (token === undefined) return { send: async () => undefined, stop: () => undefined };
  let progress = 0;
  let last = 'started';
  let timer: unknown;
  let stopped = false;
  const notify = async (message: string) => {
    progress += 1;
    await options.send({ method: 'notifications/progress', params: { progressToken: token, progress, message } });
  };
  const arm = () => {
    clock.clearTimeout(timer);
    if (stopped) return;
    timer = clock.setTimeout(() => {
      arm();
      void notify(`still running (last: ${last})`).catch(() => undefined);
    }, heartbeatMs);
  };
  arm();
  return {
    send: async (message) => {
      last = message.length > 200 ? `${message.slice(0, 200)}…` : message;
      arm();
      await notify(message);
    },
    stop: () => {
      stopped = true;
      clock.clearTimeout(timer);
    },
  };
}
