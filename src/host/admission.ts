/** Fair admission: a total cap and a per-subject cap on concurrently executing runs. */
import { DriverError } from '../protocol/errors.js';

export interface AdmissionLimits {
  total: number;
  perSubject: number;
}

export class Admission {
  private active = 0;
  private readonly bySubject = new Map<string, number>();

  constructor(private limits: AdmissionLimits) {}

  /** New caps for runs admitted from now on; runs already admitted keep their slots. */
  setLimits(limits: AdmissionLimits): void {
    this.limits = { ...limits };
  }

  /** A release function, or BUSY (429, retryable) when either cap is reached. */
  acquire(subject: string): () => void {
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
