/**
 * The opt-in retry policy: only an HTTP 429 received before any output is retried, after
 * the larger of `Retry-After` and a doubling backoff, and never when that wait would
 * pass `maxDelayMs`. The same request body and credential are resent; nothing else is
 * ever retried (network errors, 5xx, partial streams, anything after a tool ran).
 */
import { sleep } from '../../shared/abort.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import type { RetryPolicyValue } from '../contract/v1.js';
import { release, type UpstreamResponse } from './transport.js';

const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 30_000;

/** Milliseconds a `Retry-After` value asks for; `null` when the value is not valid (forbids retrying). */
export function retryAfterMs(value: string | undefined, now: number): number | undefined | null {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const date = new Date(trimmed);
  if (!Number.isNaN(date.getTime()) && date.toUTCString() === trimmed) return Math.max(0, date.getTime() - now);
  return null;
}

/**
 * Opens a response with `open`, re-opening it while the policy allows retrying a 429.
 * Resolves with the first response that is not a retried 429 (possibly a final 429).
 */
export async function openWithRetry(
  open: () => Promise<UpstreamResponse>,
  policy: RetryPolicyValue | undefined,
  signal: AbortSignal,
  clock: Clock = systemClock,
): Promise<UpstreamResponse> {
  const maxAttempts = policy?.maxAttempts ?? 1;
  for (let attempt = 1; ; attempt += 1) {
    const response = await open();
    if (response.statusCode !== 429 || attempt >= maxAttempts || !policy) return response;
    const hint = retryAfterMs(headerValue(response.headers['retry-after']), clock.now());
    if (hint === null) return response;
    const backoff = (policy.baseDelayMs ?? DEFAULT_BASE_DELAY_MS) * 2 ** (attempt - 1);
    const delay = Math.ceil(Math.max(hint ?? 0, backoff));
    if (delay > (policy.maxDelayMs ?? DEFAULT_MAX_DELAY_MS)) return response;
    release(response, true);
    await sleep(delay, signal, clock);
  }
}

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
