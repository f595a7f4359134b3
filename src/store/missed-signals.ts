/**
 * Signals between replicas are hints: a NOTIFY sent while a replica's listening connection is
 * down is lost. While runs here wait on something, their rows are re-read every interval, so
 * a decision or result committed elsewhere is picked up at the latest one interval late.
 */
export const MISSED_SIGNAL_POLL_MS = 1000;

export class MissedSignalPoll {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly waiting: () => Iterable<string>,
    private readonly wake: (id: string) => Promise<void>,
    private readonly intervalMs = MISSED_SIGNAL_POLL_MS,
  ) {}

  /** Called when something starts waiting; the timer stops by itself once nothing waits. */
  watch(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      const ids = [...this.waiting()];
      if (ids.length === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
        return;
      }
      for (const id of ids) void this.wake(id).catch(() => undefined);
    }, this.intervalMs);
    this.timer.unref();
  }
}
