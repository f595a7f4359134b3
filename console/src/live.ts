/**
 * The console's one live connection: `OperatorClient.updates()` (GET /v1/operator/updates).
 * It holds the active runs and the pending-approval count, and tells the views when finished
 * runs or jobs changed, so no view polls. When the stream ends (the host dropped a reader that
 * fell behind, or restarted) it reconnects after a growing pause and starts from a new snapshot.
 */
import { useEffect, useState } from 'preact/hooks';
import type { OperatorClient, OperatorRun, OperatorUpdate } from '../../src/client/index.js';
import { isAuthFailure } from './format.js';

const RETRY_MS = [500, 1000, 2000, 5000, 10_000];

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

export interface LiveState {
  status: LiveStatus;
  /** The active runs of every replica, by id, in the order they were announced. */
  active: Map<string, OperatorRun>;
  /** Pending approvals of every subject (unknown until the host reports it). */
  pendingApprovals: number | undefined;
  /** Bumped whenever runs finished (on any replica). */
  finished: number;
  /** Bumped whenever jobs changed. */
  jobs: number;
  /** Bumped on every update about one run (its page refreshes). */
  runs: Map<string, number>;
}

export class LiveFeed {
  private state: LiveState = { status: 'connecting', active: new Map(), pendingApprovals: undefined, finished: 0, jobs: 0, runs: new Map() };
  private readonly listeners = new Set<(state: LiveState) => void>();
  private readonly stop = new AbortController();

  constructor(
    private readonly operator: OperatorClient,
    private readonly onAuthFailure: (failure: unknown) => void,
  ) {
    void this.follow();
  }

  get current(): LiveState {
    return this.state;
  }

  subscribe(listener: (state: LiveState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.stop.abort();
  }

  private async follow(): Promise<void> {
    for (let attempt = 0; !this.stop.signal.aborted; ) {
      let received = false;
      try {
        for await (const update of this.operator.updates(this.stop.signal)) {
          received = true;
          this.apply(update);
        }
      } catch (failure) {
        if (this.stop.signal.aborted) return;
        if (isAuthFailure(failure)) return this.onAuthFailure(failure);
        received = false;
      }
      // A subscription that ended after updates (the host ends each one in time) resumes at once.
      attempt = received ? 0 : attempt + 1;
      if (attempt === 0) continue;
      this.set({ status: 'reconnecting' });
      await pause(RETRY_MS[Math.min(attempt - 1, RETRY_MS.length - 1)]!, this.stop.signal);
    }
  }

  private apply(update: OperatorUpdate): void {
    const { run } = update;
    switch (update.type) {
      case 'snapshot':
        this.set({
          status: 'live',
          active: new Map((update.active ?? []).map((entry) => [entry.runId, entry])),
          ...(update.pendingApprovals !== undefined ? { pendingApprovals: update.pendingApprovals } : {}),
        });
        return;
      case 'run': {
        if (!run) return;
        const active = new Map(this.state.active);
        if (run.state === 'running') active.set(run.runId, run);
        else active.delete(run.runId);
        this.set({ active, runs: bumped(this.state.runs, run.runId) });
        return;
      }
      case 'finished':
        this.set({ finished: this.state.finished + 1, ...(run ? { runs: bumped(this.state.runs, run.runId) } : {}) });
        return;
      case 'approvals':
        if (update.pendingApprovals !== undefined) this.set({ pendingApprovals: update.pendingApprovals });
        return;
      case 'jobs':
        this.set({ jobs: this.state.jobs + 1 });
        return;
      default:
      // A kind of update this console does not know yet: nothing to do.
    }
  }

  private set(change: Partial<LiveState>): void {
    this.state = { ...this.state, ...change };
    for (const listener of this.listeners) listener(this.state);
  }
}

function bumped(counts: Map<string, number>, runId: string): Map<string, number> {
  const next = new Map(counts);
  next.set(runId, (next.get(runId) ?? 0) + 1);
  return next;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** The feed's state, re-rendering on each change. */
export function useLive(feed: LiveFeed): LiveState {
  const [state, setState] = useState(feed.current);
  useEffect(() => feed.subscribe(setState), [feed]);
  return state;
}
