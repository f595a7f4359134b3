/** Waiting that an AbortSignal cuts short, for every layer: one `abortable` and one `sleep`. */
import { systemClock, type Clock } from './clock.js';

/**
 * Settles with `work`, or rejects as soon as `signal` aborts — even when the work ignores the
 * signal. The rejection is the signal's reason, or what `reason` makes of the signal.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined, reason: (signal: AbortSignal) => unknown = (aborted) => aborted.reason): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(reason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Resolves after `ms` on `clock`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal!.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
