/**
 * The bounded set of idle warm CLI processes of one provider instance. A process comes back
 * only if the run that used it ended cleanly and it is still alive; a crashed, cancelled or
 * misbehaving one is closed, never reused. Idle processes are reaped after `idleMs`, and the
 * oldest is closed when more than `size` would be kept.
 */
export interface WarmProcess {
  readonly alive: boolean;
  close(): Promise<void>;
}

/**
 * Starts the countdown after which an idle process is reaped; returns how to stop it. Real
 * timers by default; a test passes one that reaps only when it says so.
 */
export type IdleTimer = (reap: () => void, ms: number) => () => void;

const realTimer: IdleTimer = (reap, ms) => {
  const timer = setTimeout(reap, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

interface Idle<T> {
  key: string;
  process: T;
  cancel: () => void;
}

export class WarmPool<T extends WarmProcess> {
  private idle: Idle<T>[] = [];
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly idleMs: number,
    private readonly timer: IdleTimer = realTimer,
  ) {}

  /** An idle live process started for `key`, if any (dead ones found on the way are dropped). */
  take(key: string): T | undefined {
    for (const entry of [...this.idle]) {
      if (entry.key !== key && entry.process.alive) continue;
      this.remove(entry);
      if (entry.process.alive) return entry.process;
      void entry.process.close();
    }
    return undefined;
  }

  give(key: string, process: T, reusable: boolean): void {
    if (this.closed || !reusable || !process.alive || this.size === 0) {
      void process.close();
      return;
    }
    const entry: Idle<T> = { key, process, cancel: () => undefined };
    entry.cancel = this.timer(() => this.reap(entry), this.idleMs);
    this.idle.push(entry);
    while (this.idle.length > this.size) this.reap(this.idle[0]!);
  }

  get idleCount(): number {
    return this.idle.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = this.idle;
    this.idle = [];
    for (const entry of entries) entry.cancel();
    await Promise.all(entries.map((entry) => entry.process.close()));
  }

  private reap(entry: Idle<T>): void {
    this.remove(entry);
    void entry.process.close();
  }

  private remove(entry: Idle<T>): void {
    entry.cancel();
    this.idle = this.idle.filter((candidate) => candidate !== entry);
  }
}
