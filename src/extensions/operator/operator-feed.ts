/**
 * The operator's live feed (`GET /v1/operator/updates`): a snapshot, then every change to
 * what the console shows, so no page polls. Changes come from three places:
 *
 * - this replica's runs (the run monitor): each summary change, as it happens;
 * - usage records this replica stores: each finished run, with its record;
 * - the store's marks (pending approvals, newest usage record, jobs), read while anyone
 *   listens — once every `intervalMs` (changes made by other replicas) and soon after a
 *   local run starts, ends or begins or stops waiting. One read serves every subscriber.
 *
 * A subscriber never slows anything: its queue is bounded and one that falls behind is
 * dropped (its stream ends; reconnecting gives a new snapshot). A subscription also ends after
 * `maxSubscriptionMs`, so long-lived readers spread again over replicas behind a load balancer.
 */
import type { OperatorRun, OperatorUpdate } from '../../protocol/schemas.js';
import type { UsageRecord } from '../../runtime/usage-record.js';
import { isoTimestamp, type Clock } from '../../shared/clock.js';
import type { OperatorMarks, StateStore } from '../../store/store.js';
import { finishedRun } from './operator-runs.js';
import type { RunMonitor } from './run-monitor.js';

/** Updates a subscriber may have queued before it is dropped. */
export const FEED_QUEUE_LIMIT = 1000;
export const DEFAULT_MARKS_INTERVAL_MS = 2000;
export const DEFAULT_MAX_SUBSCRIPTION_MS = 15 * 60 * 1000;

interface Subscriber {
  queue: OperatorUpdate[];
  closed: boolean;
  wake: (() => void) | undefined;
  /** Ends the subscription when its time is up; cleared when it ends for any reason. */
  lifetime?: ReturnType<typeof setTimeout>;
}

export interface OperatorFeedOptions {
  clock: Clock;
  /** How often the store's marks are read while someone listens. */
  intervalMs?: number;
  /** How long one subscription lasts before its stream ends (the reader subscribes again). */
  maxSubscriptionMs?: number;
  onError(error: unknown): void;
}

export class OperatorFeed {
  private readonly subscribers = new Set<Subscriber>();
  private marks: OperatorMarks | undefined;
  /** What each active run last waited for, to notice when that changes. */
  private readonly waits = new Map<string, string | undefined>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking = false;
  private checkAgain = false;
  /** Subscribers dropped because they fell behind (for tests). */
  dropped = 0;

  constructor(
    private readonly store: Pick<StateStore, 'operatorMarks'>,
    private readonly monitor: RunMonitor,
    private readonly options: OperatorFeedOptions,
  ) {
    monitor.onChange((run) => this.runChanged(run));
  }

  /** The snapshot, then every update until `signal` aborts or the subscriber falls behind. */
  subscribe(signal: AbortSignal): AsyncGenerator<OperatorUpdate> {
    const subscriber: Subscriber = { queue: [], closed: false, wake: undefined };
    // Taken synchronously with joining, so no change falls between the snapshot and the updates.
    subscriber.queue.push({
      type: 'snapshot',
      at: this.now(),
      active: this.monitor.list(),
      ...(this.marks ? { pendingApprovals: this.marks.pendingApprovals } : {}),
    });
    this.subscribers.add(subscriber);
    if (!this.timer) {
      this.timer = setInterval(() => this.checkSoon(), this.options.intervalMs ?? DEFAULT_MARKS_INTERVAL_MS);
      this.timer.unref();
    }
    // The first subscribers learn the pending count from the first read (one for all of them).
    if (!this.marks && !this.checking) this.checkSoon();
    subscriber.lifetime = setTimeout(() => finish(subscriber), this.options.maxSubscriptionMs ?? DEFAULT_MAX_SUBSCRIPTION_MS);
    return this.drain(subscriber, signal);
  }

  /** A usage record this replica stored: a finished run (embedding calls are not runs). */
  recorded(record: UsageRecord): void {
    if (record.operation !== undefined || this.subscribers.size === 0) return;
    if (this.marks && (this.marks.lastFinishedAt ?? '') < record.finishedAt) this.marks.lastFinishedAt = record.finishedAt;
    this.publish({ type: 'finished', at: this.now(), run: finishedRun(record, this.monitor.summary(record.runId)) });
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const subscriber of this.subscribers) finish(subscriber);
    this.subscribers.clear();
  }

  private runChanged(run: OperatorRun): void {
    const wait = run.waiting?.id ?? run.waiting?.kind;
    const known = this.waits.has(run.runId);
    const ended = run.state !== 'running';
    // Starting, ending and waiting change what the marks say (a job's state, the pending approvals).
    const marksMayChange = !known || ended || this.waits.get(run.runId) !== wait;
    if (ended) this.waits.delete(run.runId);
    else this.waits.set(run.runId, wait);
    if (this.subscribers.size === 0) return;
    this.publish({ type: 'run', at: this.now(), run });
    if (marksMayChange) this.checkSoon();
  }

  /** Reads the marks now, or once more after the read in flight; never two reads at once. */
  private checkSoon(): void {
    if (this.subscribers.size === 0) return;
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = true;
    void this.check()
      .catch((error: unknown) => this.options.onError(error))
      .finally(() => {
        this.checking = false;
        if (this.checkAgain) {
          this.checkAgain = false;
          this.checkSoon();
        }
      });
  }

  private async check(): Promise<void> {
    const next = await this.store.operatorMarks();
    if (this.subscribers.size === 0) return;
    const previous = this.marks;
    // Never backwards: a record this replica announced while the read was under way stays counted.
    if ((previous?.lastFinishedAt ?? '') > (next.lastFinishedAt ?? '')) next.lastFinishedAt = previous!.lastFinishedAt;
    this.marks = next;
    const at = this.now();
    if (previous?.pendingApprovals !== next.pendingApprovals) this.publish({ type: 'approvals', at, pendingApprovals: next.pendingApprovals });
    if (!previous) return;
    // Newer than every record this replica announced itself: another replica finished runs.
    if ((next.lastFinishedAt ?? '') > (previous.lastFinishedAt ?? '')) this.publish({ type: 'finished', at });
    if (next.jobs !== previous.jobs) this.publish({ type: 'jobs', at });
  }

  private publish(update: OperatorUpdate): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.queue.length >= FEED_QUEUE_LIMIT) {
        this.dropped += 1;
        this.leave(subscriber);
        continue;
      }
      subscriber.queue.push(update);
      subscriber.wake?.();
    }
  }

  private leave(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
    finish(subscriber);
    if (this.subscribers.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      // Unwatched marks go stale: the next first subscriber reads them afresh.
      this.marks = undefined;
    }
  }

  private async *drain(subscriber: Subscriber, signal: AbortSignal): AsyncGenerator<OperatorUpdate> {
    const onAbort = () => finish(subscriber);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const update = subscriber.queue.shift();
        if (update) {
          yield update;
          continue;
        }
        if (subscriber.closed || signal.aborted) return;
        await new Promise<void>((resolve) => (subscriber.wake = resolve));
        subscriber.wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.leave(subscriber);
    }
  }

  private now(): string {
    return isoTimestamp(this.options.clock);
  }
}

function finish(subscriber: Subscriber): void {
  clearTimeout(subscriber.lifetime);
  subscriber.closed = true;
  subscriber.wake?.();
}
