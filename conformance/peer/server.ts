/**
 * The reference peer: replays each vector of conformance.json / versioning.json as an HTTP
 * response, byte for byte as the case describes. See conformance/CONTRACT.md.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ConformanceCase, ConformanceVectors, VersioningCase, VersioningVectors } from './fixtures.js';
import { sseBytes, streamCaseBody } from './sse.js';

export interface PeerMetrics {
  cancelled: number;
  redirects: number;
  unauthorized: number;
  redirectTargetHits: number;
}

export interface PeerOptions {
  token: string;
  vectors: ConformanceVectors;
  versioning: VersioningVectors;
  tls?: { cert: string; key: string };
  /** Live host runs by terminal status, served at /live-metrics; undefined when no live host runs. */
  liveMetrics?: () => Record<string, number> | undefined;
}

export interface Peer {
  url: string;
  metrics: PeerMetrics;
  close(): Promise<void>;
}

const VERSION_HEADER = 'AgenticDriver-Version';
const SSE_TYPE = 'text/event-stream; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

export async function startPeer(options: PeerOptions): Promise<Peer> {
  const cases = new Map(options.vectors.cases.map((testCase) => [testCase.id, testCase]));
  const versioningCases = new Map(options.versioning.cases.map((testCase) => [testCase.id, testCase]));
  const metrics: PeerMetrics = { cancelled: 0, redirects: 0, unauthorized: 0, redirectTargetHits: 0 };
  let url = '';

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    request.resume();
    const path = new URL(request.url ?? '/', 'http://peer').pathname;
    const [, area, rawId] = path.split('/');
    if (path === '/metrics') return sendJson(response, 200, { cancelled: metrics.cancelled, redirects: metrics.redirects, unauthorized: metrics.unauthorized });
    if (path === '/live-metrics') {
      const live = options.liveMetrics?.();
      if (!live) return sendError(response, 503, 'HOST_UNAVAILABLE', 'No live host is running (src/host/index.ts is missing or failed to start).');
      return sendJson(response, 200, live);
    }
    if (path === '/redirect-target') {
      metrics.redirectTargetHits += 1;
      return sendStream(response, sseBytes({ events: options.vectors.baseEvents }));
    }
    if (area === 'no-live-host') {
      return sendError(response, 503, 'HOST_UNAVAILABLE', 'No live host is running (src/host/index.ts is missing or failed to start).');
    }
    if (request.headers.authorization !== `Bearer ${options.token}`) {
      metrics.unauthorized += 1;
      return sendError(response, 401, 'UNAUTHORIZED', 'Missing or invalid bearer token.');
    }
    const id = rawId === undefined ? undefined : safeDecode(rawId);
    if (area === 'fixtures' && id && cases.has(id)) return void replayCase(cases.get(id)!, request, response);
    if (area === 'versioning' && id && versioningCases.has(id)) return replayVersioning(versioningCases.get(id)!, response);
    sendError(response, 404, 'NOT_FOUND', `No peer case at ${path}.`);
  };

  async function replayCase(testCase: ConformanceCase, request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (testCase.redirect) {
      metrics.redirects += 1;
      response.writeHead(307, { Location: `${url}/redirect-target`, [VERSION_HEADER]: '1.0', 'Content-Length': '0' });
      return void response.end();
    }
    if (testCase.operation) {
      const body = testCase.raw !== undefined ? Buffer.from(testCase.raw, 'utf8') : Buffer.from(JSON.stringify(testCase.json ?? null), 'utf8');
      response.writeHead(testCase.status ?? 200, {
        'Content-Type': testCase.contentType ?? JSON_TYPE,
        'Content-Length': String(body.length),
        [VERSION_HEADER]: '1.0',
      });
      return void response.end(body);
    }
    const body = streamCaseBody(testCase, options.vectors.baseEvents);
    response.writeHead(200, { 'Content-Type': testCase.contentType ?? SSE_TYPE, 'Cache-Control': 'no-cache', [VERSION_HEADER]: '1.0' });
    if (testCase.cancel) {
      // Held open after the scripted events; the client must close it.
      response.write(body);
      response.once('close', () => {
        metrics.cancelled += 1;
      });
      return;
    }
    if (!testCase.chunkSizes?.length) return void response.end(body);
    let offset = 0;
    for (let index = 0; offset < body.length; index += 1) {
      const size = testCase.chunkSizes[index % testCase.chunkSizes.length]!;
      if (response.destroyed) return;
      response.write(body.subarray(offset, offset + size));
      offset += size;
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  }

  function replayVersioning(testCase: VersioningCase, response: ServerResponse): void {
    const headers: Record<string, string> = { ...(testCase.headers ?? {}) };
    if (testCase.status !== undefined) {
      return sendJson(response, testCase.status, testCase.json ?? null, headers);
    }
    sendStream(response, sseBytes({ events: testCase.events ?? [] }), headers);
  }

  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handle) : createHttpServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    url,
    metrics,
    close: () => closeServer(server),
  };
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function sendStream(response: ServerResponse, body: Buffer, headers: Record<string, string> = { [VERSION_HEADER]: '1.0' }): void {
  response.writeHead(200, { ...headers, 'Content-Type': SSE_TYPE, 'Cache-Control': 'no-cache', 'Content-Length': String(body.length) });
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = { [VERSION_HEADER]: '1.0' }): void {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  response.writeHead(status, { ...headers, 'Content-Type': JSON_TYPE, 'Content-Length': String(body.length) });
  response.end(body);
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  sendJson(response, status, { error: { code, message, retryable: false } });
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
