/**
 * The scriptable loopback HTTP(S) server under every vendor fake. A dialect supplies the
 * vendor specifics (routes, auth header, frame rendering, error bodies, model listing);
 * this module owns sockets, the step queue, request recording and abort observation.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Frame, Step, StreamShape, Turn, VendorErrorSpec } from './script.js';

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Query string including `?`, or ''. */
  search: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body (undefined when empty or not JSON). */
  body: any;
  rawBody: string;
  /** True once the client went away before the server finished answering. */
  aborted: boolean;
  /** Resolves when the client aborts the request (never for completed requests). */
  abortedPromise: Promise<void>;
}

export interface ModelListing {
  status: number;
  body: unknown;
}

export interface Dialect {
  name: string;
  /** Default API prefix of the base URL, e.g. `/v1/`. */
  prefix: string;
  /** Whether a path is this vendor's generation endpoint. */
  isGeneration(method: string, path: string): boolean;
  isModelListing(method: string, path: string): boolean;
  /** The API key the request carries, or undefined. */
  apiKeyOf(request: IncomingMessage, url: URL): string | undefined;
  render(turn: Turn, request: RecordedRequest): Frame[];
  errorBody(spec: VendorErrorSpec): unknown;
  listModels(models: string[], url: URL): ModelListing;
}

export interface VendorServerOptions {
  script?: Step[];
  /** Models served by the listing endpoint (default none). */
  models?: string[];
  /** When set, requests without exactly this key get the vendor's 401 body. */
  apiKey?: string;
  /** Serve HTTPS with this key pair (see ./tls.ts). */
  tls?: { key: string; cert: string };
  /** Responses for the model-listing endpoint, consumed before `models` is used. */
  listingScript?: Step[];
}

export interface VendorServer {
  /** Base URL including the API prefix and a trailing slash, e.g. `http://127.0.0.1:PORT/v1/`. */
  url: string;
  /** `scheme://host:port`, for SDKs that add the prefix themselves. */
  origin: string;
  /** Every request received, in order (generation and listing). */
  requests: RecordedRequest[];
  /** Generation requests only. */
  readonly generations: RecordedRequest[];
  /** Appends steps to the script. */
  push(...steps: Step[]): void;
  /** Steps not yet consumed. */
  readonly pending: number;
  /** Connections (TCP, or TLS once the handshake succeeded) accepted so far. */
  readonly connections: number;
  /** Connections open right now. */
  readonly openConnections: number;
  close(): Promise<void>;
}

export async function startVendorServer(dialect: Dialect, options: VendorServerOptions = {}): Promise<VendorServer> {
  const script = [...(options.script ?? [])];
  const listingScript = [...(options.listingScript ?? [])];
  const requests: RecordedRequest[] = [];
  const generations: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const rawBody = await readBody(req);
    let markAborted!: () => void;
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      search: url.search,
      headers: req.headers,
      body: parseJson(rawBody),
      rawBody,
      aborted: false,
      abortedPromise: new Promise((resolve) => (markAborted = resolve)),
    };
    requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished && !serverReset.has(res)) {
        recorded.aborted = true;
        markAborted();
      }
    });

    const generation = dialect.isGeneration(recorded.method, recorded.path);
    const listing = !generation && dialect.isModelListing(recorded.method, recorded.path);
    if (!generation && !listing) return sendJson(res, 404, dialect.errorBody({ status: 404, message: `No route ${recorded.method} ${recorded.path}.` }));
    if (generation) generations.push(recorded);
    if (options.apiKey !== undefined && dialect.apiKeyOf(req, url) !== options.apiKey) {
      return sendJson(res, 401, dialect.errorBody({ status: 401, message: 'Invalid API key.' }));
    }
    if (listing) {
      const step = listingScript.shift();
      if (step) return perform(step, res, recorded);
      const listed = dialect.listModels(options.models ?? [], url);
      return sendJson(res, listed.status, listed.body);
    }
    const step = script.shift();
    if (!step) return sendJson(res, 500, dialect.errorBody({ status: 500, message: 'The fake has no scripted step left.' }));
    return perform(step, res, recorded);
  };

  const serverReset = new WeakSet<ServerResponse>();
  const perform = async (step: Step, res: ServerResponse, recorded: RecordedRequest): Promise<void> => {
    if ('error' in step) {
      const headers: Record<string, string> = step.error.retryAfter === undefined ? {} : { 'retry-after': step.error.retryAfter };
      return sendJson(res, step.error.status, dialect.errorBody(step.error), headers);
    }
    if ('http' in step) {
      res.writeHead(step.http.status, step.http.headers ?? {});
      res.end(step.http.body ?? '');
      return;
    }
    if ('hang' in step) return; // no response head at all, until the client gives up
    if ('reset' in step) {
      serverReset.add(res);
      res.socket?.destroy();
      return;
    }
    const frames = 'turn' in step ? dialect.render(step.turn, recorded) : step.frames;
    const contentType = 'frames' in step && step.contentType ? step.contentType : 'text/event-stream';
    await stream(res, frames, step, contentType, () => serverReset.add(res));
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => res.socket?.destroy());
  };
  const server: Server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, onRequest) : createHttpServer(onRequest);
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    connections += 1;
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    url: origin + dialect.prefix,
    origin,
    requests,
    get generations() {
      return generations;
    },
    push: (...steps) => script.push(...steps),
    get pending() {
      return script.length;
    },
    get connections() {
      return connections;
    },
    get openConnections() {
      return sockets.size;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function stream(res: ServerResponse, frames: Frame[], shape: StreamShape, contentType: string, markReset: () => void): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
  res.flushHeaders();
  const sent = shape.cutAfter === undefined ? frames : frames.slice(0, shape.cutAfter);
  const text = (frame: Frame) => ('raw' in frame ? frame.raw : encodeSse(frame.event, frame.data));
  if (shape.chunkBytes) {
    const bytes = Buffer.from(sent.map(text).join(''));
    for (let i = 0; i < bytes.length; i += shape.chunkBytes) {
      if (res.destroyed) return;
      await write(res, bytes.subarray(i, i + shape.chunkBytes));
      await pause(shape.frameDelayMs ?? 0);
    }
  } else {
    for (const frame of sent) {
      if (res.destroyed) return;
      await write(res, text(frame));
      if (shape.frameDelayMs) await pause(shape.frameDelayMs);
    }
  }
  const then = shape.then ?? 'end';
  if (then === 'end') res.end();
  else if (then === 'reset') {
    markReset();
    // Let the written frames reach the client before the connection dies.
    await pause(20);
    res.socket?.destroy();
  }
  // 'hang': keep the response open until the client aborts.
}

export function encodeSse(event: string | undefined, data: unknown): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${payload}\n\n`;
}

function write(res: ServerResponse, chunk: string | Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (res.write(chunk)) resolve();
    else {
      res.once('drain', resolve);
      res.once('close', resolve);
    }
  });
}

const pause = (ms: number) => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
