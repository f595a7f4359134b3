import { abortError } from './abort.js';

/**
 * At most `size` holders at once; the rest wait in line (first come, first served) and leave
 * the line with the abort reason as soon as their signal aborts.
 */
export class Semaphore {
  private held = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(readonly size: number) {}

  /** Resolves with a release function once a place is free. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.held++;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.held--;
          this.waiting.shift()?.grant();
        });
      };
      const entry = { grant };
      const onAbort = () => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(abortError(signal!));
      };
      if (this.held < this.size) return grant();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Holders now, and callers waiting in line. */
  get stats(): { held: number; waiting: number } {
    return { held: this.held, waiting: this.waiting.length };
  }
}
