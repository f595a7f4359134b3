/**
 * The bounded queue between a running run and its consumer. Adjacent text deltas are
 * merged; a consumer that falls too far behind fails the run with OUTPUT_BUFFER_LIMIT
 * instead of letting memory grow without bound.
 */
import { DriverError } from '../protocol/errors.js';
import type { EventPayload } from './types.js';

export const MAX_QUEUED_EVENTS = 1024;
export const MAX_QUEUED_TEXT_BYTES = 2_000_000;

export class EventChannel {
  private readonly queue: EventPayload[] = [];
  private queuedTextBytes = 0;
  private waiter: (() => void) | undefined;
  private closed = false;
  private held = false;

  constructor(private readonly onOverflow: (error: DriverError) => void) {}

  push(event: EventPayload): void {
    if (this.closed) return;
    const last = this.queue[this.queue.length - 1];
    if (event.type === 'text.delta') {
      if (event.text === '') return;
      this.queuedTextBytes += Buffer.byteLength(event.text);
      if (last?.type === 'text.delta') {
        last.text += event.text;
        this.checkBounds();
        this.wake();
        return;
      }
    }
    this.queue.push(event);
    this.checkBounds();
    this.wake();
  }

  /** Terminal events bypass the bounds: a run must always be able to end. */
  pushTerminal(event: EventPayload): void {
    if (this.closed) return;
    this.queue.push(event);
    this.closed = true;
    this.wake();
  }

  /** Ends the events without a terminal one (a run that checkpointed, to go on elsewhere). */
  close(): void {
    this.closed = true;
    this.wake();
  }

  /**
   * Keeps every event from the consumer until `gate` settles; they queue (and count against the
   * bounds) meanwhile. A run's start record commits this way while its provider is already asked.
   */
  holdUntil(gate: Promise<unknown>): void {
    this.held = true;
    const release = () => {
      this.held = false;
      this.wake();
    };
    gate.then(release, release);
  }

  /** The next queued event; undefined when none is queued or they are held (then `ended` or `arrival`). */
  take(): EventPayload | undefined {
    if (this.held) return undefined;
    const next = this.queue.shift();
    if (next?.type === 'text.delta') this.queuedTextBytes -= Buffer.byteLength(next.text);
    return next;
  }

  /** Nothing is queued and nothing more will be. */
  get ended(): boolean {
    return this.closed && this.queue.length === 0;
  }

  /** Resolves when an event is pushed or the channel closes (one waiter: the run's consumer). */
  arrival(): Promise<void> {
    return new Promise<void>((resolve) => (this.waiter = resolve));
  }

  private checkBounds(): void {
    if (this.queue.length > MAX_QUEUED_EVENTS || this.queuedTextBytes > MAX_QUEUED_TEXT_BYTES) {
      this.onOverflow(new DriverError('OUTPUT_BUFFER_LIMIT', 'The consumer fell too far behind the run; its event buffer is full.'));
    }
  }

  private wake(): void {
    if (this.held) return;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}
