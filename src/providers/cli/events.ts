/** Small helpers shared by the dialects' line parsers. */
import { DriverError } from '../../protocol/errors.js';
import type { Usage } from '../contract/v1.js';

export type JsonRecord = Record<string, unknown>;

/** One stdout line as a JSON object, or INVALID_CLI_OUTPUT. */
export function parseEventLine(line: string, product: string): JsonRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new DriverError('INVALID_CLI_OUTPUT', `${product} printed a line that is not JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DriverError('INVALID_CLI_OUTPUT', `${product} printed a JSON line that is not an object.`);
  return value as JsonRecord;
}

export const record = (value: unknown): JsonRecord | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined);
export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);

/** A usage object without absent measurements. */
export function usage(fields: Usage): Usage {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Usage;
}

/** Fixed public messages per code: native bodies, URLs and stderr never reach the caller. */
const FAILURE_MESSAGES: Record<string, string> = {
  CLI_AUTH_REQUIRED: 'is not signed in or its credentials were rejected; sign in with the CLI itself.',
  RATE_LIMITED: 'reported a rate or quota limit.',
  UNSUPPORTED_MODEL: 'does not support the requested model.',
  PROVIDER_UNREACHABLE: 'could not reach its model service.',
  CLI_FAILED: 'failed.',
};

export type FailureCode = keyof typeof FAILURE_MESSAGES;

export function cliFailure(product: string, code: FailureCode): DriverError {
  return new DriverError(code, `${product} ${FAILURE_MESSAGES[code]}`);
}
