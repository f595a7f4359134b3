/**
 * The operator's live feed (`GET /v1/operator/updates`): a snapshot, then every change to
 * what the console shows, so no page polls. Changes come from three places:
 *
 * - this replica's runs (the run monitor): each summary change, as it happens;
 * - usage records this replica stores: each finished run, with its record;
 * - the store, read while anyone listens — once every `intervalMs` (changes made by other
 *   replicas), soon after a local run starts, ends or begins or stops waiting, and soon after
 *   any replica announces that a run it does not know began: its marks (pending approvals,
 *   newest usage record, jobs) and the runs other replicas serve or that wait checkpointed
 *   (each that starts, starts or stops waiting, or ends is a `run` update, as a local one is).
 *   One read serves every subscriber.
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
import { activeRun } from './stored-runs.js';

/** Updates a subscriber may have queued before it is dropped. */
export const FEED_QUEUE_LIMIT = 1000;
export const DEFAULT_MARKS_INTERVAL_MS = 2000;
export const DEFAULT_MAX_SUBSCRIPTION_MS = 15 * 60 * 1000;
/** How soon after a commit of another replica's run its list entry is read again (one read for the commits meanwhile). */
export const REMOTE_CHANGE_MS = 250;
/** Other replicas' active runs the feed follows at most. */
export const MAX_REMOTE_RUNS = 1000;
/** A run's row states once it ended, as the operator names them. */
const ENDED: ReadonlyMap<string, OperatorRun['state']> = new Map([
  ['completed', 'completed'],
  ['failed', 'failed'],
  ['cancelled', 'cancelled'],
  ['interrupted', 'interrupted'],
  ['uncertain', 'interrupted'],
]);

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
  /** Runs other replicas serve, or that wait checkpointed, as last read (while anyone listens). */
  private remote = new Map<string, OperatorRun>();
  private stopWatchingRuns: (() => void) | undefined;
  private soon: ReturnType<typeof setTimeout> | undefined;
  /** What each active run last waited for, to notice when that changes. */
  private readonly waits = new Map<string, string | undefined>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking = false;
  private checkAgain = false;
  /** Subscribers dropped because they fell behind (for tests). */
  dropped = 0;

  constructor(
    private readonly store: Pick<StateStore, 'operatorMarks' | 'runs' | 'usage'>,
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
      active: [...this.monitor.list(), ...this.remote.values()],
      ...(this.marks ? { pendingApprovals: this.marks.pendingApprovals } : {}),
    });
    this.subscribers.add(subscriber);
    if (!this.timer) {
      this.timer = setInterval(() => this.checkSoon(), this.options.intervalMs ?? DEFAULT_MARKS_INTERVAL_MS);
      this.timer.unref();
      this.stopWatchingRuns = this.store.runs.onChange((id) => {
        // Another replica's run went on (it may have ended, or started waiting): read again soon, once for many commits.
        if (this.remote.has(id)) this.checkWithin(REMOTE_CHANGE_MS);
        // A run this replica knows nothing of: another replica's run began (or woke).
        else if (!this.monitor.summary(id)) this.checkSoon();
      });
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
    this.unwatch();
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

  /** Reads the store within `ms`, unless a read is already due by then. */
  private checkWithin(ms: number): void {
    if (this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.checkSoon();
    }, ms);
    this.soon.unref();
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
    const [next, active] = await Promise.all([this.store.operatorMarks(), this.store.runs.active(MAX_REMOTE_RUNS)]);
    if (this.subscribers.size === 0) return;
    await this.compareRemote(active.filter((row) => !this.monitor.summary(row.runId)).map(activeRun));
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

  /** Announces the other replicas' runs that began, changed what they wait for, or ended since the last read. */
  private async compareRemote(active: OperatorRun[]): Promise<void> {
    const next = new Map(active.map((run) => [run.runId, run]));
    for (const [runId, before] of this.remote) {
      if (next.has(runId) || this.monitor.summary(runId)) continue;
      const ended = await this.ended(before);
      // Queued again after its wait: still in flight, until a replica takes it on.
      if (ended) this.publish({ type: 'run', at: this.now(), run: ended });
      else next.set(runId, before);
    }
    for (const [runId, run] of next) {
      const before = this.remote.get(runId);
      if (!before || before.waiting?.id !== run.waiting?.id) this.publish({ type: 'run', at: this.now(), run });
    }
    this.remote = next;
  }

  /** How a run that left the active list ended: its usage record, else its row; undefined if it has not. */
  private async ended(run: OperatorRun): Promise<OperatorRun | undefined> {
    const [record] = (await this.store.usage.finished({ limit: 1, runId: run.runId })).records;
    if (record) return finishedRun(record, run);
    const row = await this.store.runs.read(run.runId);
    if (row && !ENDED.has(row.state)) return undefined;
    const { waiting: _waiting, ...rest } = run;
    return { ...rest, state: (row && ENDED.get(row.state)) ?? 'interrupted' };
  }

  private unwatch(): void {
    clearInterval(this.timer);
    clearTimeout(this.soon);
    this.timer = this.soon = undefined;
    this.stopWatchingRuns?.();
    this.stopWatchingRuns = undefined;
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
      this.unwatch();
      // Unwatched marks and runs go stale: the next first subscriber reads them afresh.
      this.marks = undefined;
      this.remote = new Map();
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
