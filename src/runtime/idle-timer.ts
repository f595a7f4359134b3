/**
 * The optional inactivity policy. Real work (model output, tool progress, completed
 * operations) resets it; nothing else does. Disabled when the interval is undefined.
 */
import type { Clock } from '../shared/clock.js';

export class IdleTimer {
  private handle: unknown;
  private paused = false;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number | undefined,
    private readonly onExpire: () => void,
  ) {}

  start(): void {
    this.arm();
  }

  /** Called on real progress only. */
  touch(): void {
    if (!this.paused) this.arm();
  }

  pause(): void {
    this.paused = true;
    this.disarm();
  }

  resume(): void {
    this.paused = false;
    this.arm();
  }

  stop(): void {
    this.paused = true;
    this.disarm();
  }

  private arm(): void {
    if (this.intervalMs === undefined) return;
    this.disarm();
    this.handle = this.clock.setTimeout(() => {
      this.handle = undefined;
      this.onExpire();
    }, this.intervalMs);
  }

  private disarm(): void {
    if (this.handle !== undefined) this.clock.clearTimeout(this.handle);
    this.handle = undefined;
  }
}
