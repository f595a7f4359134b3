/**
 * The one HTTP transport of the API adapters: host-owned base URLs (HTTPS, or HTTP on
 * loopback), no redirects, abort on the run's signal, bounded strict-UTF-8 reads, SSE
 * parsing, and the vendor-neutral error map. Messages never carry keys or vendor bodies.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { DriverError } from '../../protocol/errors.js';
import { isLoopbackHost } from '../../shared/addresses.js';

export const MAX_STREAM_BYTES = 10_000_000;
export const MAX_JSON_BYTES = 2_000_000;

export interface TransportOptions {
  /** Extra trusted CA certificates (PEM), e.g. a private gateway's CA. */
  ca?: string;
}

export interface HttpCall {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  transport?: TransportOptions;
}

/** A base URL the host may call: absolute HTTPS, or HTTP to a loopback host; no credentials, query or fragment. */
export function secureBaseUrl(raw: string, providerId: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DriverError('INVALID_CONFIG', `Provider ${providerId} has a baseUrl that is not an absolute URL.`);
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  if (!secure || url.username || url.password || url.search || url.hash) {
    throw new DriverError('INSECURE_TRANSPORT', `Provider ${providerId} needs an https:// baseUrl (http:// only on loopback) without credentials, query or fragment.`);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/** Sends one request and resolves with the response head; the body is left unread. */
export function send(call: HttpCall): Promise<IncomingMessage> {
  call.signal.throwIfAborted();
  const requestFn = call.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = requestFn(call.url, {
      method: call.method,
      headers: { ...call.headers, ...(call.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(call.body)) }) },
      signal: call.signal,
      ...(call.transport?.ca ? { ca: call.transport.ca } : {}),
    });
    req.on('response', resolve);
    req.on('error', (error) => {
      if (call.signal.aborted) reject(call.signal.reason);
      else reject(new DriverError('PROVIDER_UNREACHABLE', `The provider at ${call.url.host} could not be reached.`, { cause: error }));
    });
    req.end(call.body);
  });
}

/** Maps a non-2xx generation response to its error; the body is discarded unread. */
export function statusError(response: IncomingMessage, vendor: string): DriverError {
  const status = response.statusCode ?? 0;
  response.resume();
  if (status === 401 || status === 403) return new DriverError('PROVIDER_AUTH', `${vendor} rejected the credentials (HTTP ${status}).`);
  if (status === 429) return new DriverError('RATE_LIMITED', `${vendor} rate-limited the request (HTTP 429).`, { retryable: true });
  if (status >= 300 && status < 400) return new DriverError('PROVIDER_ERROR', `${vendor} answered with a redirect (HTTP ${status}), which is refused.`, { retryable: false });
  return new DriverError('PROVIDER_ERROR', `${vendor} answered HTTP ${status}.`, { retryable: status >= 500 });
}

export function isEventStream(response: IncomingMessage): boolean {
  return /^text\/event-stream\b/i.test(response.headers['content-type'] ?? '');
}

/** Reads a whole body as strict UTF-8 within `maxBytes`. */
export async function readText(response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let total = 0;
  let text = '';
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw new DriverError('RESPONSE_TOO_LARGE', `The provider response exceeded ${maxBytes} bytes.`);
      text += decoder.decode(chunk, { stream: true });
    }
    return text + decoder.decode();
  } catch (error) {
    throw bodyError(error, signal);
  } finally {
    response.destroy();
  }
}

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/**
 * Parses a `text/event-stream` body into events. Strict UTF-8, at most `maxBytes` in
 * total; a connection that dies mid-stream is `INCOMPLETE_STREAM`.
 */
export async function* readSse(response: IncomingMessage, signal: AbortSignal, maxBytes = MAX_STREAM_BYTES): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let total = 0;
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw new DriverError('RESPONSE_TOO_LARGE', `The provider stream exceeded ${maxBytes} bytes.`);
      buffer += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
        // A lone trailing \r may be the first half of \r\n: wait for more bytes.
        if (buffer[newline] === '\r' && newline === buffer.length - 1) break;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event, data: data.join('\n') };
          event = undefined;
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
      }
    }
    decoder.decode();
  } catch (error) {
    throw bodyError(error, signal);
  } finally {
    response.destroy();
  }
}

function bodyError(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (error instanceof DriverError) return error;
  if (error instanceof TypeError) return new DriverError('INVALID_PROVIDER_RESPONSE', 'The provider response is not valid UTF-8.');
  return new DriverError('INCOMPLETE_STREAM', 'The connection to the provider ended before the response was complete.', { cause: error });
}

/** Parses one JSON payload of a vendor stream or body. */
export function parseJson(text: string, what = 'stream event'): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new DriverError('INVALID_PROVIDER_RESPONSE', `The provider sent a ${what} that is not JSON.`);
  }
}

export const invalid = (message: string) => new DriverError('INVALID_PROVIDER_RESPONSE', message);
export const incomplete = (message = 'The provider stream ended before the response was complete.') => new DriverError('INCOMPLETE_STREAM', message);
