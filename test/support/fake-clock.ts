/** A manual clock: timers fire only when a test advances time. */
import type { Clock } from '../../src/shared/clock.js';

interface Timer {
  at: number;
  callback: () => void;
}

export class FakeClock implements Clock {
  private current = Date.UTC(2026, 10, 30);
  private readonly timers = new Map<number, Timer>();
  private nextId = 1;

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.current + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Resolves once some timer is due at `at` (a fence: what sets it has reached that point), or rejects after `timeoutMs` of real time. */
  async timerAt(at: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (![...this.timers.values()].some((timer) => timer.at === at)) {
      if (Date.now() > deadline) throw new Error(`no timer was set for ${new Date(at).toISOString()}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Moves time forward, firing due timers in order and letting promises settle between them. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await settle();
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= target).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.current = due[1].at;
      due[1].callback();
    }
    this.current = target;
    await settle();
  }
}

/** Lets queued microtasks and immediate callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}
