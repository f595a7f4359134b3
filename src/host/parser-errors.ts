/**
 * Responses the HTTP parser produces before Fastify sees a request (bad header bytes,
 * oversized headers, header timeouts, oversized chunk extensions). Node's and Fastify's
 * defaults answer with their own bodies; these answer with our error envelope and the
 * headers every response carries.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { DriverError, statusForCode } from '../protocol/errors.js';
import { VERSION_HEADER, WIRE_VERSION } from '../protocol/version.js';

/** Headers on every response, parser errors included. */
export function commonHeaders(tls: boolean): Record<string, string> {
  return {
    [VERSION_HEADER]: WIRE_VERSION,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(tls ? { 'Strict-Transport-Security': 'max-age=31536000' } : {}),
  };
}

/** The typed error for a `clientError` from Node's HTTP parser. */
export function parserError(error: { code?: string }): DriverError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new DriverError('HEADERS_TOO_LARGE', 'The request headers are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new DriverError('REQUEST_TIMEOUT', 'The request did not arrive in time.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new DriverError('BODY_TOO_LARGE', 'The request body is too large.');
    default:
      return new DriverError('INVALID_REQUEST', 'The request is not valid HTTP.');
  }
}

/** A raw HTTP/1.1 error response written straight to the socket, then the socket closed. */
export function rawErrorResponse(error: DriverError, tls: boolean): string {
  const status = statusForCode(error.code);
  const body = JSON.stringify({ error: error.toJSON() });
  const headers = {
    ...commonHeaders(tls),
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** Fastify's `clientErrorHandler`: answers with our envelope when nothing was sent yet. */
export function clientErrorHandler(tls: boolean): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      socket.end(rawErrorResponse(parserError(error), tls));
      // A peer that never reads must not keep the socket: the reply gets a second at most.
      setTimeout(() => socket.destroy(), 1000).unref();
    } else {
      socket.destroy();
    }
  };
}
