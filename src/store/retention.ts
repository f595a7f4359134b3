/** Expiry of stored rows by retention: once at start, then every half retention (at least 500 ms, at most 10 minutes). */
export function retentionTimer(retentionMs: number, expire: () => Promise<unknown>, onError: (error: unknown) => void): { stop(): void } {
  const run = () => void expire().catch(onError);
  run();
  const timer = setInterval(run, Math.max(500, Math.min(retentionMs / 2, 10 * 60 * 1000)));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
