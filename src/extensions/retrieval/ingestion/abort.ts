import { DriverError } from '../../../protocol/errors.js';

/** Progress hooks threaded through extraction and chunking. */
export interface IngestionProgress {
  signal?: AbortSignal;
  onProgress?: () => void;
  /** Whom the document is ingested for: extraction threads are shared fairly between subjects. */
  subject?: string;
}

/**
 * Throws when the caller aborted: its reason when that is a DriverError (an idle timer aborts
 * with IDLE_TIMEOUT), else CANCELLED.
 */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  throw abortError(signal);
}

export function abortError(signal: AbortSignal): DriverError {
  const reason: unknown = signal.reason;
  return reason instanceof DriverError ? reason : new DriverError('CANCELLED', 'The ingestion was cancelled.');
}

/** Resolves or rejects with `work`, or rejects as soon as `signal` aborts. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  throwIfAborted(signal);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
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
