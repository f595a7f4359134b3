/**
 * The one HTTP transport of the API adapters: host-owned base URLs (HTTPS, or HTTP on
 * loopback), no redirects, abort on the run's signal, bounded strict-UTF-8 reads, SSE
 * parsing, and the vendor-neutral error map. Messages never carry keys or vendor bodies.
 *
 * Each provider instance owns one keep-alive connection pool to its base URL's origin
 * (`Upstream`): a response read to its end returns its connection to the pool, a response
 * abandoned after the step finished is drained in the background (bounded), and only an
 * aborted or failed exchange closes its connection.
 */
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../contract/v1.js';
import { isLoopbackHost } from '../../shared/addresses.js';

export const MAX_STREAM_BYTES = 10_000_000;
export const MAX_JSON_BYTES = 2_000_000;
/** What is read of a finished response's remainder to keep its connection, and for how long. */
const DRAIN_BYTES = 256 * 1024;
const DRAIN_MS = 5_000;
/** How long an idle pooled connection is kept (the server's Keep-Alive hint wins when shorter). */
const KEEP_ALIVE_MS = 30_000;

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
}

/** A response head with its unread body; hand it back with `release` when done. */
export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
  /** Stops forwarding the run's abort to this exchange. */
  detach(): void;
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

/**
 * The keep-alive connection pool of one provider instance to its base URL's origin.
 * HTTP/1.1 only: undici's HTTP/2 (`allowH2`) has had assertion failures under aborts and
 * does not multiplex across an Agent, so it is not switched on for vendor traffic.
 */
export class Upstream {
  private readonly pool: Pool;
  private closed = false;

  constructor(readonly base: URL, options: TransportOptions = {}) {
    this.pool = new Pool(base.origin, {
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
      // The run's idle timeout governs slow upstreams, as before; no transport clock of its own.
      headersTimeout: 0,
      bodyTimeout: 0,
      pipelining: 1,
      ...(options.ca ? { connect: { ca: options.ca } } : {}),
    });
  }

  /** Sends one request and resolves with the response head; the body is left unread. */
  async send(call: HttpCall): Promise<UpstreamResponse> {
    const { signal } = call;
    signal.throwIfAborted();
    if (call.url.origin !== this.base.origin) throw new DriverError('INVALID_CONFIG', 'A provider request left its base URL.');
    // One controller per exchange, so the run's own end (which aborts the run's signal)
    // never reaches a connection whose response was already read or is being drained.
    const exchange = new ExchangeSignal();
    const onAbort = () => exchange.abort(signal.reason);
    signal.addEventListener('abort', onAbort);
    const detach = () => signal.removeEventListener('abort', onAbort);
    try {
      const response = await this.pool.request({
        path: call.url.pathname + call.url.search,
        method: call.method,
        headers: call.headers,
        body: call.body ?? null,
        signal: exchange,
      });
      return { statusCode: response.statusCode, headers: response.headers, body: response.body, detach };
    } catch (error) {
      detach();
      if (signal.aborted) throw signal.reason;
      throw new DriverError('PROVIDER_UNREACHABLE', `The provider at ${call.url.host} could not be reached.`, { cause: error });
    }
  }

  /** Closes every pooled connection; later requests fail as unreachable. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.destroy();
  }
}

/**
 * The abort signal undici watches for one exchange (undici takes any EventTarget-like
 * object): the run's abort is forwarded to it until the response is released. Lighter
 * than an AbortController per model step, and it never builds an error of its own.
 */
class ExchangeSignal {
  aborted = false;
  reason: unknown = undefined;
  private listener: (() => void) | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    this.listener = listener;
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }
}

/**
 * Hands a response back. `finished`: the caller got everything it needed, so the rest of
 * the body is read (bounded, in the background) to keep the connection; otherwise the
 * exchange is aborted and its connection closed.
 */
export function release(response: UpstreamResponse, finished: boolean): void {
  response.detach();
  const { body } = response;
  if (body.readableEnded || body.destroyed) return;
  // Destroying an unfinished body emits its abort error; nobody else listens any more.
  body.on('error', ignore);
  if (!finished) {
    body.destroy();
    return;
  }
  drain(body);
}

/**
 * Bodies being drained, with their deadlines. One unref'd sweeper for the process closes
 * a drain that outlives DRAIN_MS (an upstream that keeps the stream open after its last
 * event), instead of a timer per run: most runs end with a drain, as the vendor's final
 * event is read before the body's end.
 */
const draining = new Map<Readable, number>();
let sweeper: ReturnType<typeof setInterval> | undefined;

function drain(body: Readable): void {
  draining.set(body, Date.now() + DRAIN_MS);
  sweeper ??= setInterval(sweep, 1_000).unref();
  const settled = () => draining.delete(body);
  (body as Readable & { dump(options: { limit: number }): Promise<void> }).dump({ limit: DRAIN_BYTES }).then(settled, () => {
    settled();
    body.destroy();
  });
}

function sweep(): void {
  const now = Date.now();
  for (const [body, deadline] of draining) {
    if (deadline <= now) {
      draining.delete(body);
      body.destroy();
    }
  }
  if (draining.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

const ignore = () => undefined;

/** Maps a non-2xx generation response to its error; the body is drained unread. */
export function statusError(response: UpstreamResponse, vendor: string): DriverError {
  const status = response.statusCode;
  release(response, true);
  if (status === 401 || status === 403) return new DriverError('PROVIDER_AUTH', `${vendor} rejected the credentials (HTTP ${status}).`);
  if (status === 429) return new DriverError('RATE_LIMITED', `${vendor} rate-limited the request (HTTP 429).`, { retryable: true });
  if (status >= 300 && status < 400) return new DriverError('PROVIDER_ERROR', `${vendor} answered with a redirect (HTTP ${status}), which is refused.`, { retryable: false });
  return new DriverError('PROVIDER_ERROR', `${vendor} answered HTTP ${status}.`, { retryable: status >= 500 });
}

const EVENT_STREAM = /^text\/event-stream\b/i;

export function isEventStream(response: UpstreamResponse): boolean {
  const type = response.headers['content-type'];
  return EVENT_STREAM.test(Array.isArray(type) ? (type[0] ?? '') : (type ?? ''));
}

/** Reads a whole body as strict UTF-8 within `maxBytes`. */
export async function readText(response: UpstreamResponse, maxBytes: number, signal: AbortSignal): Promise<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let total = 0;
  let text = '';
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw new DriverError('RESPONSE_TOO_LARGE', `The provider response exceeded ${maxBytes} bytes.`);
      text += decoder.decode(chunk, { stream: true });
    }
    return text + decoder.decode();
  } catch (error) {
    release(response, false);
    throw bodyError(error, signal);
  } finally {
    response.detach();
  }
}

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** A dialect's reading of one stream, fed each read's events in turn (a function call per read, no hand-off per part). */
export interface StreamParser {
  /** Pushes the parts a read's events complete; true once the step finished (the rest of the stream is not read). */
  read(events: readonly SseEvent[], parts: ProviderPart[]): boolean;
  /** The stream ended before the step finished: pushes the last parts, or throws why the stream is incomplete. */
  end(parts: ProviderPart[]): void;
}

/** A stream's parts, one batch per upstream read (never an empty one). */
export async function* partBatches(reads: AsyncIterable<SseEvent[]>, parser: StreamParser): AsyncGenerator<ProviderPart[]> {
  for await (const events of reads) {
    const parts: ProviderPart[] = [];
    let finished: boolean;
    try {
      finished = parser.read(events, parts);
    } catch (error) {
      // What the read held before the bad event goes out first, as it did one part at a time.
      if (parts.length > 0) yield parts;
      throw error;
    }
    if (parts.length > 0) yield parts;
    if (finished) return;
  }
  const parts: ProviderPart[] = [];
  parser.end(parts);
  if (parts.length > 0) yield parts;
}

/**
 * Parses a `text/event-stream` body into events, every event a read completes at once (one
 * hand-off per read, not per event; never an empty batch). Strict UTF-8, at most `maxBytes` in
 * total; a connection that dies mid-stream is `INCOMPLETE_STREAM`. Stopping early leaves
 * the body open: the caller decides with `release` whether to drain or abort it.
 */
export async function* readSse(response: UpstreamResponse, signal: AbortSignal, maxBytes = MAX_STREAM_BYTES): AsyncGenerator<SseEvent[]> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const parser = new SseLineParser();
  let total = 0;
  try {
    for await (const chunk of response.body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw new DriverError('RESPONSE_TOO_LARGE', `The provider stream exceeded ${maxBytes} bytes.`);
      const events = parser.push(decoder.decode(chunk, { stream: true }));
      if (events.length > 0) yield events;
    }
    decoder.decode();
  } catch (error) {
    throw bodyError(error, signal);
  }
}

/**
 * The line and field rules of the SSE format (CRLF, CR or LF line ends; comments; `data`
 * lines joined with LF; `event`), over decoded text pushed in arbitrary pieces. Scans with
 * indexOf and slices each value once; a lone trailing CR waits for the next piece.
 */
export class SseLineParser {
  private buffer = '';
  private event: string | undefined = undefined;
  private data: string | undefined = undefined;

  /** Adds text; returns the events it completed (possibly none). */
  push(text: string): SseEvent[] {
    const buffer = this.buffer === '' ? text : this.buffer + text;
    const events: SseEvent[] = [];
    const length = buffer.length;
    let pos = 0;
    let cr = buffer.indexOf('\r');
    let lf = buffer.indexOf('\n');
    for (;;) {
      if (cr !== -1 && cr < pos) cr = buffer.indexOf('\r', pos);
      if (lf !== -1 && lf < pos) lf = buffer.indexOf('\n', pos);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        if (cr === length - 1) break; // may be the first half of CRLF
        end = cr;
        next = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      this.line(buffer, pos, end, events);
      pos = next;
    }
    this.buffer = pos === 0 ? buffer : buffer.slice(pos);
    return events;
  }

  private line(buffer: string, start: number, end: number, events: SseEvent[]): void {
    if (start === end) {
      if (this.data !== undefined) events.push({ event: this.event, data: this.data });
      this.event = undefined;
      this.data = undefined;
      return;
    }
    const first = buffer.charCodeAt(start);
    if (first === 58 /* : */) return;
    let colon = buffer.indexOf(':', start);
    if (colon === -1 || colon > end) colon = end;
    let valueStart = colon + 1;
    if (valueStart < end && buffer.charCodeAt(valueStart) === 32) valueStart += 1;
    const value = colon === end ? '' : buffer.slice(valueStart, end);
    const nameLength = colon - start;
    if (nameLength === 4 && buffer.startsWith('data', start)) this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    else if (nameLength === 5 && buffer.startsWith('event', start)) this.event = value;
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
