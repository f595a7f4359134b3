/**
 * The runs a host is serving, so that shutdown can end each one with its terminal event
 * and wait until its response has left before the connections are closed.
 */
import type { ServerResponse } from 'node:http';

export class ActiveRuns {
  private readonly runs = new Map<AbortController, ServerResponse>();
  private readonly waiters = new Set<() => void>();

  get size(): number {
    return this.runs.size;
  }

  /** Tracks a run until its response is complete or its connection closes. */
  add(controller: AbortController, response: ServerResponse): void {
    this.runs.set(controller, response);
    response.once('close', () => {
      this.runs.delete(controller);
      if (this.runs.size === 0) for (const wake of this.waiters) wake();
    });
  }

  abortAll(reason: unknown): void {
    for (const controller of this.runs.keys()) controller.abort(reason);
  }

  /** Resolves true once no run is left, or false when `timeoutMs` passes first. */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.runs.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(value);
      };
      const wake = () => finish(true);
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.waiters.add(wake);
    });
  }
}
