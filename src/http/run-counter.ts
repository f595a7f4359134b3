/** The host's own count of ended runs, connected and background alike (`RunningHost.metrics`). */
import type { RunEvent } from '../protocol/schemas.js';
import type { HostObserver } from './observers.js';

export interface HostMetrics {
  runs: { completed: number; failed: number; cancelled: number };
}

const COUNTED = { 'run.completed': 'completed', 'run.failed': 'failed', 'run.cancelled': 'cancelled' } as const;

/** An observer that counts each run's terminal event into `metrics`. */
export function runCounter(metrics: HostMetrics): HostObserver {
  return {
    tap: () => ({
      event: (event: RunEvent) => {
        const outcome = COUNTED[event.type as keyof typeof COUNTED];
        if (outcome) metrics.runs[outcome] += 1;
      },
    }),
  };
}
