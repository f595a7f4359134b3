/**
 * Fair admission: a total cap and a per-subject cap on concurrently executing calls (runs,
 * retrieval, background runs). An admitted call holds a slot, is tracked until its response is
 * complete (so shutdown can end it and wait for its answer), and is cancelled when its client
 * disconnects. A background run is never refused: it waits, queued, until `tryAcquire` finds a
 * slot; `onFreed` says when to look again.
 */
import type { FastifyReply } from 'fastify';
import { DriverError } from '../protocol/errors.js';
import type { ActiveRuns } from './active-runs.js';

export interface AdmissionLimits {
  total: number;
  perSubject: number;
}

/** An admitted call: its cancellation, and its slot. */
export interface Slot {
  /** Aborted when the client disconnects or the host shuts down (or by the call itself). */
  readonly controller: AbortController;
  /** Frees the slot; later calls do nothing. */
  release(): void;
}

export class Admission {
  private active = 0;
  private readonly bySubject = new Map<string, number>();
  private readonly freed = new Set<() => void>();

  constructor(
    private limits: AdmissionLimits,
    private readonly calls: ActiveRuns,
    /** Told of every call refused for lack of a slot. */
    private readonly onRejected: () => void = () => undefined,
  ) {}

  /** New caps for calls admitted from now on; calls already admitted keep their slots. */
  setLimits(limits: AdmissionLimits): void {
    this.limits = { ...limits };
    this.notifyFreed();
  }

  /** A slot for the call answered on `reply`, or BUSY (429, retryable) when either cap is reached. */
  admit(subject: string, reply: FastifyReply): Slot {
    let release: () => void;
    try {
      release = this.acquire(subject);
    } catch (error) {
      this.onRejected();
      throw error;
    }
    const controller = new AbortController();
    this.calls.add(controller, reply.raw);
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) controller.abort(new DriverError('CANCELLED', 'The client disconnected.'));
    });
    return { controller, release };
  }

  /** A slot for a background run when both caps allow one now; undefined (nothing counted as refused) when not. */
  tryAcquire(subject: string): (() => void) | undefined {
    return this.hasRoom(subject) ? this.take(subject) : undefined;
  }

  /** Whether the total cap is reached, and the subjects at their own cap: what a background run must not be taken for now. */
  waiting(): { full: boolean; subjects: string[] } {
    return { full: this.active >= this.limits.total, subjects: [...this.bySubject].filter(([, count]) => count >= this.limits.perSubject).map(([subject]) => subject) };
  }

  /** Calls `listener` (in a later microtask) each time a slot is freed, until the function returned is called. */
  onFreed(listener: () => void): () => void {
    this.freed.add(listener);
    return () => this.freed.delete(listener);
  }

  private hasRoom(subject: string): boolean {
    return this.active < this.limits.total && (this.bySubject.get(subject) ?? 0) < this.limits.perSubject;
  }

  private acquire(subject: string): () => void {
    if (!this.hasRoom(subject)) {
      throw new DriverError('BUSY', 'The host is running as many runs as it allows; try again later.', { retryable: true });
    }
    return this.take(subject);
  }

  private take(subject: string): () => void {
    const mine = this.bySubject.get(subject) ?? 0;
    this.active += 1;
    this.bySubject.set(subject, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      const left = (this.bySubject.get(subject) ?? 1) - 1;
      if (left === 0) this.bySubject.delete(subject);
      else this.bySubject.set(subject, left);
      this.notifyFreed();
    };
  }

  private notifyFreed(): void {
    if (this.freed.size > 0) queueMicrotask(() => this.freed.forEach((listener) => listener()));
  }
}
