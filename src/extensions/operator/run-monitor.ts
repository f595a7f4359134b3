/**
 * The runs this replica serves, as the operator endpoints see them: live summaries (steps,
 * tokens so far, what a run waits for), each run's timeline, a fan-out of each run's events to
 * watchers, and a change notice per summary change. A run never waits for a watcher: each
 * watcher has a bounded queue, and one that falls behind is dropped. The timelines of the
 * most recently finished runs are kept (FINISHED_KEPT) for the operator's run page.
 */
import { DriverError } from '../../protocol/errors.js';
import type { OperatorRun, OperatorRunDetail, RunEvent } from '../../protocol/schemas.js';
import type { RunTap } from '../../http/observers.js';
import { runReason } from './run-reasons.js';
import { elapsed, RunTimeline } from './run-timeline.js';

/** Events a watcher may have queued before it is dropped. */
export const WATCHER_QUEUE_LIMIT = 512;
/** Recent events a new watcher receives first. */
export const REPLAY_LIMIT = 256;
/** Finished runs whose timeline stays readable. */
export const FINISHED_KEPT = 200;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

interface Watcher {
  queue: RunEvent[];
  /** Set when the run ended or the watcher was dropped: nothing more will be queued. */
  closed: boolean;
  wake: (() => void) | undefined;
}

interface LiveRun {
  info: OperatorRun;
  timeline: RunTimeline;
  recent: RunEvent[];
  watchers: Set<Watcher>;
}

/** The last events of a background run that stopped to wait for a person, checkpointed. */
const CHECKPOINTED_AT: ReadonlySet<string> = new Set(['approval.requested', 'tool.execution.requested']);

export class RunMonitor {
  private readonly runs = new Map<string, LiveRun>();
  private readonly finished = new Map<string, { info: OperatorRun; timeline: RunTimeline }>();
  private readonly listeners = new Set<(run: OperatorRun) => void>();
  /** Watchers dropped because they fell behind (for tests and metrics). */
  dropped = 0;

  /** Passes a run's events through unchanged while recording them. */
  async *track(events: AsyncGenerator<RunEvent>, who: { subject: string; jobId?: string }): AsyncGenerator<RunEvent> {
    const tap = this.tap(who);
    try {
      for await (const event of events) {
        tap.event(event);
        yield event;
      }
    } finally {
      tap.end();
    }
  }

  /** Records a run's events on their way (never changing them). */
  tap(who: { subject: string; jobId?: string }): RunTap & { end(): void } {
    let live: LiveRun | undefined;
    return {
      event: (event) => {
        live ??= this.open(event, who);
        this.record(live, event);
      },
      end: () => {
        if (live) this.close(live);
      },
    };
  }

  /** Active runs, oldest first. */
  list(): OperatorRun[] {
    return [...this.runs.values()].map((live) => structuredClone(live.info));
  }

  /** The summary of an active or recently finished run of this replica. */
  summary(runId: string): OperatorRun | undefined {
    const known = this.runs.get(runId) ?? this.finished.get(runId);
    return known && structuredClone(known.info);
  }

  /** An active or recently finished run of this replica, with its steps. */
  detail(runId: string): OperatorRunDetail | undefined {
    const known = this.runs.get(runId) ?? this.finished.get(runId);
    return known && { run: structuredClone(known.info), steps: known.timeline.snapshot() };
  }

  /** Calls `listener` with a run's new summary whenever one starts, changes or ends; returns the unsubscribe. */
  onChange(listener: (run: OperatorRun) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
      timeline: new RunTimeline(),
      recent: [],
      watchers: new Set(),
    };
    this.runs.set(first.runId, live);
    this.changed(live.info);
    return live;
  }

  private record(live: LiveRun, event: RunEvent): void {
    if (live.timeline.apply(event)) this.summarize(live, event);
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

  private summarize(live: LiveRun, event: RunEvent): void {
    const { info, timeline } = live;
    info.steps = timeline.steps.at(-1)?.step ?? 0;
    info.usage = { ...timeline.usage };
    const waiting = timeline.waiting;
    if (waiting) info.waiting = { ...waiting };
    else delete info.waiting;
    if (event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.cancelled') {
      info.state = event.type === 'run.completed' ? 'completed' : event.type === 'run.failed' ? 'failed' : 'cancelled';
      info.finishedAt = event.timestamp;
      info.durationMs = elapsed(info.startedAt, event.timestamp);
      if (event.type !== 'run.completed') {
        info.errorCode = event.error.code;
        info.reason = runReason(info.state, info.errorCode);
      }
    }
    this.changed(info);
  }

  private close(live: LiveRun): void {
    const { info } = live;
    if (this.runs.get(info.runId) !== live) return;
    this.runs.delete(info.runId);
    for (const watcher of live.watchers) finish(watcher);
    live.watchers.clear();
    // A background run checkpointed while it waits for a person: it goes on later, perhaps on another replica.
    if (info.jobId && info.state === 'running' && CHECKPOINTED_AT.has(live.recent.at(-1)?.type ?? '')) return;
    if (info.state === 'running') {
      // Its events stopped before a terminal one (the run's consumer went away); the usage record will tell how it ended.
      Object.assign(info, { state: 'cancelled', finishedAt: live.recent.at(-1)?.timestamp ?? info.startedAt, reason: 'Its events stopped before a terminal one; its usage record tells how it ended.' });
      delete info.waiting;
      this.changed(info);
    }
    this.finished.set(info.runId, { info, timeline: live.timeline });
    if (this.finished.size > FINISHED_KEPT) this.finished.delete(this.finished.keys().next().value!);
  }

  private changed(info: OperatorRun): void {
    for (const listener of this.listeners) listener(structuredClone(info));
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
