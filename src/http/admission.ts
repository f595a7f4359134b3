/**
 * Fair admission: a total cap and a per-subject cap on concurrently executing calls (runs,
 * retrieval). An admitted call holds a slot, is tracked until its response is complete (so
 * shutdown can end it and wait for its answer), and is cancelled when its client disconnects.
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

  constructor(
    private limits: AdmissionLimits,
    private readonly calls: ActiveRuns,
    /** Told of every call refused for lack of a slot. */
    private readonly onRejected: () => void = () => undefined,
  ) {}

  /** New caps for calls admitted from now on; calls already admitted keep their slots. */
  setLimits(limits: AdmissionLimits): void {
    this.limits = { ...limits };
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

  private acquire(subject: string): () => void {
    const mine = this.bySubject.get(subject) ?? 0;
    if (this.active >= this.limits.total || mine >= this.limits.perSubject) {
      throw new DriverError('BUSY', 'The host is running as many runs as it allows; try again later.', { retryable: true });
    }
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
    };
  }
}
