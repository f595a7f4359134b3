/**
 * The runs this replica serves, as the operator endpoints see them: live counters (steps,
 * tokens so far) and a fan-out of each run's events to watchers. A run never waits for a
 * watcher: each watcher has a bounded queue, and one that falls behind is dropped.
 */
import { DriverError } from '../../protocol/errors.js';
import type { OperatorRun, RunEvent, Usage } from '../../protocol/schemas.js';

/** Events a watcher may have queued before it is dropped. */
export const WATCHER_QUEUE_LIMIT = 512;
/** Recent events a new watcher receives first. */
export const REPLAY_LIMIT = 256;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);
const TOKEN_FIELDS = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'reasoningTokens'] as const;

interface Watcher {
  queue: RunEvent[];
  /** Set when the run ended or the watcher was dropped: nothing more will be queued. */
  closed: boolean;
  wake: (() => void) | undefined;
}

interface LiveRun {
  info: OperatorRun;
  recent: RunEvent[];
  watchers: Set<Watcher>;
}

export class RunMonitor {
  private readonly runs = new Map<string, LiveRun>();
  /** Watchers dropped because they fell behind (for tests and metrics). */
  dropped = 0;

  /** Passes a run's events through unchanged while recording them. */
  async *track(events: AsyncGenerator<RunEvent>, who: { subject: string; jobId?: string }): AsyncGenerator<RunEvent> {
    let live: LiveRun | undefined;
    try {
      for await (const event of events) {
        live ??= this.open(event, who);
        this.record(live, event);
        yield event;
      }
    } finally {
      if (live) this.close(live);
    }
  }

  /** Active runs, oldest first. */
  list(): OperatorRun[] {
    return [...this.runs.values()].map((live) => structuredClone(live.info));
  }

  /**
   * One run's events for a watcher: the recent ones, then live ones until the terminal event.
   * Ends early (without a terminal event) when the watcher fell behind or `signal` aborts.
   */
  watch(runId: string, signal: AbortSignal): AsyncGenerator<RunEvent> {
    const live = this.runs.get(runId);
    if (!live) throw new DriverError('RUN_NOT_FOUND', 'No such active run on this host.');
    const watcher: Watcher = { queue: [...live.recent], closed: false, wake: undefined };
    live.watchers.add(watcher);
    return drain(watcher, signal, () => live.watchers.delete(watcher));
  }

  private open(first: RunEvent, who: { subject: string; jobId?: string }): LiveRun {
    const started = first.type === 'run.started' ? first : undefined;
    const live: LiveRun = {
      info: {
        runId: first.runId,
        subject: who.subject,
        provider: started?.provider ?? 'unknown',
        model: started?.model ?? 'unknown',
        state: 'running',
        startedAt: first.timestamp,
        steps: 0,
        usage: {},
        ...(who.jobId ? { jobId: who.jobId } : {}),
      },
      recent: [],
      watchers: new Set(),
    };
    this.runs.set(first.runId, live);
    return live;
  }

  private record(live: LiveRun, event: RunEvent): void {
    if (event.type === 'step.started') live.info.steps = Math.max(live.info.steps, event.step);
    if (event.type === 'usage.reported') addTokens(live.info.usage, event.usage);
    live.recent.push(event);
    if (live.recent.length > REPLAY_LIMIT) live.recent.shift();
    for (const watcher of live.watchers) {
      if (watcher.queue.length >= WATCHER_QUEUE_LIMIT) {
        // Fell behind: dropped, so the run never buffers without bound or waits for it.
        this.dropped += 1;
        live.watchers.delete(watcher);
        finish(watcher);
        continue;
      }
      watcher.queue.push(event);
      watcher.wake?.();
    }
    if (TERMINAL.has(event.type)) this.close(live);
  }

  private close(live: LiveRun): void {
    if (this.runs.get(live.info.runId) === live) this.runs.delete(live.info.runId);
    for (const watcher of live.watchers) finish(watcher);
    live.watchers.clear();
  }
}

function finish(watcher: Watcher): void {
  watcher.closed = true;
  watcher.wake?.();
}

async function* drain(watcher: Watcher, signal: AbortSignal, leave: () => void): AsyncGenerator<RunEvent> {
  const onAbort = () => finish(watcher);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const event = watcher.queue.shift();
      if (event) {
        yield event;
        if (TERMINAL.has(event.type)) return;
        continue;
      }
      if (watcher.closed || signal.aborted) return;
      await new Promise<void>((resolve) => (watcher.wake = resolve));
      watcher.wake = undefined;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    leave();
  }
}

function addTokens(total: Usage, step: Usage): void {
  for (const field of TOKEN_FIELDS) {
    const value = step[field];
    if (value !== undefined) total[field] = (total[field] ?? 0) + value;
  }
}
