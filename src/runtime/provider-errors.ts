/**
 * Errors a provider chooses (the mock's script, an API or CLI adapter, an in-process adapter)
 * are bounded before they reach events, usage records, logs and metric labels: a code outside
 * the contract's table becomes a known one — the original kept in the message only when it is
 * a short identifier — and every message is cut to MAX_ERROR_MESSAGE_CHARS.
 */
import { DriverError, isKnownErrorCode, type ErrorCode } from '../protocol/errors.js';

export const MAX_ERROR_MESSAGE_CHARS = 2_000;
/** What an unknown code must look like to be quoted in the message. */
const QUOTABLE_CODE = /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/;

/** The error as the contract allows it: a known code (else `fallback`) and a bounded message; `from` names who failed. */
export function contractError(error: DriverError, fallback: ErrorCode, from = 'The provider'): DriverError {
  const known = isKnownErrorCode(error.code);
  const message = known ? boundedMessage(error.message) : `${from} ${unknownCode(error.code)}: ${boundedMessage(error.message)}`;
  if (known && message === error.message) return error;
  return new DriverError(known ? error.code : fallback, boundedMessage(message), {
    retryable: error.retryable,
    ...(error.outcome ? { outcome: error.outcome } : {}),
    cause: error,
  });
}

/** A provider's health code: a short identifier, else `fallback`. */
export function boundedHealthCode(code: string, fallback: string): string {
  return QUOTABLE_CODE.test(code) ? code : fallback;
}

export function boundedMessage(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  const cut = message.slice(0, MAX_ERROR_MESSAGE_CHARS - 1);
  // Never leave half of a surrogate pair.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

function unknownCode(code: string): string {
  return QUOTABLE_CODE.test(code)
    ? `failed with code ${code}, which the contract does not define`
    : `failed with a code the contract does not define (${code.length} characters, not shown)`;
}
