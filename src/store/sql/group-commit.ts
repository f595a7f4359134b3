/**
 * One transaction for the writes several tables queue off the request path (usage records and
 * start records, attached runs' events): whatever is queued when a commit starts goes in it, so
 * a run's start record, its events and its usage record share commits instead of each paying
 * for its own. One commit at a time; what is queued meanwhile waits for the next. A writer asks
 * for a commit `soon` (at the end of this turn) or within `later` milliseconds.
 */
import type { SqlEngine } from './engine.js';

/** What a table has queued, taken for one commit. */
export interface QueuedWrites {
  /** Writes them inside the shared transaction. */
  write(tx: SqlEngine): Promise<void>;
  /** Told once the transaction committed (no error) or failed (its error). */
  settle(error?: unknown): void;
}

export interface GroupWriter {
  /** Takes what is queued (undefined when nothing is). */
  take(): QueuedWrites | undefined;
}

export class GroupCommit {
  private readonly writers: GroupWriter[] = [];
  private scheduled: { soon: boolean; cancel(): void } | undefined;
  private committing: Promise<void> | undefined;
  /** A commit was asked for while one ran: `soon` when any asker wanted it soon. */
  private again: boolean | undefined;

  constructor(private readonly engine: SqlEngine) {}

  add(writer: GroupWriter): void {
    this.writers.push(writer);
  }

  /** Asks for a commit at the end of this turn (`soon`) or within `laterMs`. */
  request(soon: boolean, laterMs: number): void {
    if (this.committing) {
      this.again = (this.again ?? false) || soon;
      return;
    }
    if (this.scheduled && (this.scheduled.soon || !soon)) return;
    this.scheduled?.cancel();
    if (soon) {
      const immediate = setImmediate(() => this.start());
      this.scheduled = { soon, cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(() => this.start(), laterMs);
      this.scheduled = { soon, cancel: () => clearTimeout(timer) };
    }
  }

  /** Commits what is queued now, after the commit under way (the store's close waits for it). */
  async flush(): Promise<void> {
    this.scheduled?.cancel();
    this.scheduled = undefined;
    while (this.committing) await this.committing;
    await this.commit();
  }

  private start(): void {
    this.scheduled = undefined;
    this.committing = this.commit().finally(() => {
      this.committing = undefined;
      const again = this.again;
      this.again = undefined;
      // A later request keeps its own deadline short enough: the run records' interval.
      if (again !== undefined) this.request(again, LATER_AFTER_COMMIT_MS);
    });
  }

  private async commit(): Promise<void> {
    const taken = this.writers.flatMap((writer) => {
      const writes = writer.take();
      return writes ? [writes] : [];
    });
    if (taken.length === 0) return;
    try {
      await this.engine.transaction(async (tx) => {
        for (const writes of taken) await writes.write(tx);
      });
    } catch (error) {
      for (const writes of taken) writes.settle(error);
      return;
    }
    for (const writes of taken) writes.settle();
  }
}

/** How long a non-urgent request made during a commit waits after it. */
const LATER_AFTER_COMMIT_MS = 5;
