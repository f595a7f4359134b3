/**
 * One HTTP exchange with a host: negotiation headers, no redirects, no retries, the
 * response version checked before any body byte is used, host errors turned into typed
 * errors, and bounded JSON bodies.
 */
import { DriverError } from '../protocol/errors.js';
import type { ErrorInfo } from '../protocol/schemas.js';
import { validatorFor } from '../protocol/validate.js';
import { isAcceptableResponseVersion, OPTIONAL_EVENTS_HEADER, VERSION_HEADER, WIRE_VERSION } from '../protocol/version.js';

export const MAX_JSON_BYTES = 2_000_000;
const MAX_ERROR_BYTES = 64_000;

const validErrorEnvelope = validatorFor<{ error: ErrorInfo }>('ErrorEnvelope');

export interface Exchange {
  fetch: typeof fetch;
  url: URL;
  token: string;
  body?: unknown;
  accept: 'application/json' | 'text/event-stream';
  signal?: AbortSignal;
  /** Further request headers (e.g. `Last-Event-ID` when resuming a stream). */
  headers?: Record<string, string>;
}

/** Sends the request; resolves only a 2xx response of an acceptable version. */
export async function exchange({ fetch: fetchImpl, url, token, body, accept, signal, headers: extra }: Exchange): Promise<Response> {
  const headers: Record<string, string> = {
    ...extra,
    Authorization: `Bearer ${token}`,
    [VERSION_HEADER]: WIRE_VERSION,
    [OPTIONAL_EVENTS_HEADER]: 'true',
    Accept: accept,
  };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetchImpl(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: 'manual',
    credentials: 'omit',
    cache: 'no-store',
    signal,
  });
  if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
    await discard(response);
    throw new DriverError('HTTP_ERROR', `The host answered with a redirect (${response.status}); redirects are never followed.`);
  }
  const version = response.headers.get(VERSION_HEADER);
  if (!isAcceptableResponseVersion(version)) {
    await discard(response);
    throw new DriverError('UNSUPPORTED_PROTOCOL_VERSION', `The host answered with protocol version ${version}; this client speaks ${WIRE_VERSION}.`);
  }
  if (!response.ok) throw await hostError(response);
  return response;
}

async function hostError(response: Response): Promise<DriverError> {
  const fallback = new DriverError('HTTP_ERROR', `The host answered HTTP ${response.status}.`, {
    retryable: response.status === 429 || response.status >= 500,
  });
  let body: unknown;
  try {
    body = JSON.parse(decodeUtf8(await readBytes(response, MAX_ERROR_BYTES)));
  } catch {
    return fallback;
  }
  if (!validErrorEnvelope(body)) return fallback;
  const { code, message, retryable, outcome } = body.error;
  return new DriverError(code, message, { retryable, ...(outcome ? { outcome } : {}) });
}

/** Reads a JSON body of at most MAX_JSON_BYTES. */
export async function readJson(response: Response): Promise<unknown> {
  const bytes = await readBytes(response, MAX_JSON_BYTES);
  try {
    return JSON.parse(decodeUtf8(bytes));
  } catch {
    throw new DriverError('INVALID_RESPONSE', 'The host answered with a body that is not valid UTF-8 JSON.');
  }
}

async function readBytes(response: Response, limit: number): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > limit) throw new DriverError('RESPONSE_TOO_LARGE', `The host answered with more than ${limit} bytes.`);
      parts.push(value);
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}

function decodeUtf8(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

export async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

/** Maps whatever a fetch/read threw to a DriverError; the caller's own abort reason wins. */
export function toClientError(error: unknown, callerSignal: AbortSignal | undefined, timeout?: AbortSignal): DriverError {
  if (error instanceof DriverError) return error;
  if (callerSignal?.aborted) {
    const reason: unknown = callerSignal.reason;
    return reason instanceof DriverError ? reason : new DriverError('CANCELLED', 'The caller aborted the request.', { cause: reason });
  }
  if (timeout?.aborted) return new DriverError('TIMEOUT', 'The host did not answer in time.', { retryable: true, cause: error });
  const detail = describeCause(error);
  return new DriverError('HOST_UNREACHABLE', `Could not reach the host${detail ? `: ${detail}` : ''}.`, { cause: error });
}

function describeCause(error: unknown): string {
  const messages: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    messages.push(current.message);
  }
  return messages.join(': ');
}
