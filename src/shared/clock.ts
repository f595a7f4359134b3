/** Time as the runtime sees it; tests swap in a fake clock to run weeks in milliseconds. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Host timestamps: UTC, exactly three fraction digits, `Z` (docs/architecture.md, decisions: Timestamps). */
export function isoTimestamp(clock: Clock): string {
  const now = clock.now();
  // Every event is stamped; runs emit many within one millisecond, so format each millisecond once.
  if (now !== lastStamp.ms) {
    lastStamp.ms = now;
    lastStamp.text = new Date(now).toISOString();
  }
  return lastStamp.text;
}

const lastStamp = { ms: Number.NaN, text: '' };
