import { abortError } from './abort.js';

interface Waiter {
  grant(): void;
}

/**
 * At most `size` holders at once, and at most `perKey` of them with one key (a subject). A
 * free place goes to the waiting key that holds the fewest places, ties to the key that was
 * served longest ago; each key's own waiters are served in order of arrival. So one subject
 * with many documents in line never holds back another's, and with `perKey < size` a subject
 * that holds nothing never waits for another subject's running work. A waiter leaves the line
 * with its abort reason as soon as its signal aborts.
 */
export class FairQueue {
  private held = 0;
  private readonly heldBy = new Map<string, number>();
  /** Keys with waiters, least recently served first. */
  private readonly lines = new Map<string, Waiter[]>();

  constructor(
    readonly size: number,
    readonly perKey: number = size,
  ) {}

  /** Resolves with a release function once a place is free for `key`. */
  acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.held++;
          this.heldBy.set(key, (this.heldBy.get(key) ?? 0) + 1);
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            this.held--;
            const count = this.heldBy.get(key)! - 1;
            if (count === 0) this.heldBy.delete(key);
            else this.heldBy.set(key, count);
            this.dispatch();
          });
        },
      };
      const onAbort = () => {
        const line = this.lines.get(key);
        const index = line?.indexOf(waiter) ?? -1;
        if (index >= 0) {
          line!.splice(index, 1);
          if (line!.length === 0) this.lines.delete(key);
        }
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const line = this.lines.get(key);
      if (line) line.push(waiter);
      else this.lines.set(key, [waiter]);
      this.dispatch();
    });
  }

  /** Holders now, callers waiting in line, and the keys among them. */
  get stats(): { held: number; waiting: number; waitingKeys: number } {
    let waiting = 0;
    for (const line of this.lines.values()) waiting += line.length;
    return { held: this.held, waiting, waitingKeys: this.lines.size };
  }

  /** Places held by `key` now. */
  heldByKey(key: string): number {
    return this.heldBy.get(key) ?? 0;
  }

  private dispatch(): void {
    while (this.held < this.size) {
      let chosen: string | undefined;
      for (const key of this.lines.keys()) {
        const holds = this.heldBy.get(key) ?? 0;
        if (holds >= this.perKey) continue;
        if (chosen === undefined || holds < (this.heldBy.get(chosen) ?? 0)) chosen = key;
      }
      if (chosen === undefined) return;
      const line = this.lines.get(chosen)!;
      const waiter = line.shift()!;
      // Served: to the back of the turn order (or out of it when nothing of it waits).
      this.lines.delete(chosen);
      if (line.length > 0) this.lines.set(chosen, line);
      waiter.grant();
    }
  }
}
