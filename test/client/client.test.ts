/** AgenticClient consumer rules over real loopback HTTP(S), against small scripted servers and the real host. */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { AgenticClient, DriverError, type RunEvent } from '../../src/client/index.js';
import { makeServerIdentity, type ServerIdentity } from '../support/pki.js';
import { script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

interface Scripted {
  url: string;
  requests: IncomingMessage[];
  closed: number;
  handle: Handler;
  server: Server;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function scripted(handle: Handler = () => undefined): Promise<Scripted> {
  const state = { requests: [] as IncomingMessage[], closed: 0, handle } as Scripted;
  state.server = createServer((request, response) => {
    state.requests.push(request);
    response.once('close', () => {
      if (!response.writableFinished) state.closed += 1;
    });
    request.resume();
    state.handle(request, response);
  });
  state.url = `http://${await listen(state.server)}/`;
  return state;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const started = { type: 'run.started', runId: 'r', sequence: 1, timestamp: '2026-01-01T00:00:00.000Z', provider: 'mock', model: 'demo' };
const delta = { type: 'text.delta', runId: 'r', sequence: 2, timestamp: '2026-01-01T00:00:00.000Z', text: 'Hi' };
const completed = {
  type: 'run.completed',
  runId: 'r',
  sequence: 3,
  timestamp: '2026-01-01T00:00:00.000Z',
  result: { runId: 'r', provider: 'mock', model: 'demo', text: 'Hi', usage: {}, steps: 1, finishReason: 'stop' },
};
const request = { provider: 'mock', model: 'demo', input: 'Hello' };

function sse(response: ServerResponse, headers: Record<string, string> = { 'AgenticDriver-Version': '1.0' }): void {
  response.writeHead(200, { 'Content-Type': 'text/event-stream', ...headers });
}

async function codeOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof DriverError, `expected a DriverError, got ${String(error)}`);
    return error.code;
  }
  return 'none';
}

async function collect(client: AgenticClient): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of client.stream(request)) events.push(event);
  return events;
}

describe('client construction', () => {
  it('refuses plain http off loopback, credentials, queries and fragments', async () => {
    for (const url of ['http://example.com/', 'https://user:pw@example.com/', 'https://example.com/?a=1', 'https://example.com/#x']) {
      assert.equal(await codeOf(() => new AgenticClient({ url, token: 't' })), 'INSECURE_TRANSPORT', url);
    }
    // Not an absolute http(s) URL at all: a URL mistake, not a transport one.
    for (const url of ['ftp://example.com/', 'not a url', '127.0.0.1:7433', 'localhost:7433', '']) {
      assert.equal(await codeOf(() => new AgenticClient({ url, token: 't' })), 'INVALID_URL', url);
    }
    for (const url of ['http://localhost:1/', 'http://127.0.0.1:1/base', 'http://[::1]:1/', 'https://example.com/']) {
      assert.ok(new AgenticClient({ url, token: 't' }));
    }
  });

  it('requires a usable bearer token', async () => {
    for (const token of ['', 'has space', 'x'.repeat(4097)]) {
      assert.equal(await codeOf(() => new AgenticClient({ url: 'https://example.com/', token })), 'AUTH_REQUIRED');
    }
  });
});

describe('client against scripted loopback servers', () => {
  let peer: Scripted;
  before(async () => {
    peer = await scripted();
  });
  after(() => close(peer.server));

  it('sends the bearer and negotiation headers, GET for discovery and POST for runs, below the base path', async () => {
    peer.requests = [];
    peer.handle = (req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ protocol: 'agenticdriver', version: '1.0', supportedVersions: ['1.0'], features: [], later: 1 }));
      } else {
        sse(res);
        res.end([started, delta, completed].map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''));
      }
    };
    const client = new AgenticClient({ url: `${peer.url}prefix`, token: 'secret' });
    const info = await client.protocol();
    assert.equal(info.version, '1.0');
    const result = await client.run(request);
    assert.equal(result.text, 'Hi');
    const [get, post] = peer.requests;
    assert.equal(get!.method, 'GET');
    assert.equal(get!.url, '/prefix/v1/protocol');
    assert.equal(post!.method, 'POST');
    assert.equal(post!.url, '/prefix/v1/runs');
    for (const req of [get!, post!]) {
      assert.equal(req.headers.authorization, 'Bearer secret');
      assert.equal(req.headers['agenticdriver-version'], '1.0');
      assert.equal(req.headers['agenticdriver-accept-optional-events'], 'true');
    }
    assert.equal(post!.headers.accept, 'text/event-stream');
  });

  it('never follows a redirect, so the bearer never reaches the target', async () => {
    const target = await scripted((_, res) => res.writeHead(200).end('{}'));
    peer.handle = (_, res) => res.writeHead(302, { Location: `${target.url}v1/providers` }).end();
    try {
      const client = new AgenticClient({ url: peer.url, token: 'secret' });
      assert.equal(await codeOf(() => client.providers()), 'HTTP_ERROR');
      assert.equal(await codeOf(() => client.run(request)), 'HTTP_ERROR');
      assert.equal(target.requests.length, 0);
    } finally {
      await close(target.server);
    }
  });

  it('passes host error codes through unchanged and never retries', async () => {
    peer.requests = [];
    peer.handle = (_, res) =>
      res.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 'FUTURE_CODE', message: 'later', retryable: true, outcome: 'uncertain' } }));
    const client = new AgenticClient({ url: peer.url, token: 't' });
    const error = await client.run(request).catch((caught: unknown) => caught);
    assert.ok(error instanceof DriverError);
    assert.deepEqual(error.toJSON(), { code: 'FUTURE_CODE', message: 'later', retryable: true, outcome: 'uncertain' });
    assert.equal(peer.requests.length, 1);

    peer.handle = (_, res) => res.writeHead(502).end('<html>bad gateway</html>');
    const plain = await client.protocol().catch((caught: unknown) => caught);
    assert.ok(plain instanceof DriverError);
    assert.equal(plain.code, 'HTTP_ERROR');
    assert.equal(plain.retryable, true);
  });

  it('rejects a response of another version before using its body, and accepts a legacy host without the header', async () => {
    peer.handle = (_, res) => {
      sse(res, { 'AgenticDriver-Version': '2.0' });
      res.write(`data: ${JSON.stringify(started)}\n\n`);
    };
    const client = new AgenticClient({ url: peer.url, token: 't' });
    assert.equal(await codeOf(() => collect(client)), 'UNSUPPORTED_PROTOCOL_VERSION');
    peer.handle = (_, res) => {
      sse(res, {});
      res.end([started, completed].map((event, index) => `data: ${JSON.stringify({ ...event, sequence: index + 1 })}\n\n`).join(''));
    };
    assert.equal((await client.run(request)).text, 'Hi');
  });

  it('parses delimiters split across writes, comments, other fields and multi-line data', async () => {
    const body = `: comment\r\nevent: run.started\r\nid: 1\r\ndata: ${JSON.stringify(started)}\r\r\ndata: {"type":"text.delta","runId":"r",\ndata: "sequence":2,"timestamp":"2026-01-01T00:00:00.000Z","text":"Hi"}\n\ndata:${JSON.stringify(completed)}\r\n\r\n`;
    const bytes = Buffer.from(body);
    peer.handle = async (_, res) => {
      sse(res);
      // Split every CRLF pair and the payload across separate writes.
      for (let offset = 0; offset < bytes.length; offset += 7) {
        res.write(bytes.subarray(offset, offset + 7));
        await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
    };
    const events = await collect(new AgenticClient({ url: peer.url, token: 't' }));
    assert.deepEqual(events.map((event) => event.type), ['run.started', 'text.delta', 'run.completed']);
  });

  it('caps JSON bodies at 2,000,000 bytes', async () => {
    peer.handle = (_, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ providers: [], pad: 'x'.repeat(2_000_000) }));
    assert.equal(await codeOf(() => new AgenticClient({ url: peer.url, token: 't' }).providers()), 'RESPONSE_TOO_LARGE');
  });

  it('closes the connection when the caller leaves the loop or aborts, and ends at the first terminal', async () => {
    peer.handle = (_, res) => {
      sse(res);
      res.write(`data: ${JSON.stringify(started)}\n\ndata: ${JSON.stringify(delta)}\n\n`);
    };
    const client = new AgenticClient({ url: peer.url, token: 't' });
    const closedBefore = peer.closed;
    for await (const event of client.stream(request)) if (event.type === 'text.delta') break;
    const controller = new AbortController();
    const aborted = (async () => {
      for await (const event of client.stream(request, { signal: controller.signal })) if (event.type === 'text.delta') controller.abort();
    })();
    assert.equal(await codeOf(() => aborted), 'CANCELLED');
    await waitFor(() => peer.closed >= closedBefore + 2);

    // A terminal event ends the stream even though the server keeps the response open.
    peer.handle = (_, res) => {
      sse(res);
      res.write([started, delta, completed].map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''));
    };
    assert.equal((await client.run(request)).text, 'Hi');
    await waitFor(() => peer.closed >= closedBefore + 3);
  });

  it('throws the run.failed error from run() and yields it from stream()', async () => {
    const failed = { type: 'run.failed', runId: 'r', sequence: 2, timestamp: '2026-01-01T00:00:00.000Z', error: { code: 'TOOL_FAILED', message: 'no', retryable: false, outcome: 'uncertain' } };
    peer.handle = (_, res) => {
      sse(res);
      res.end([started, failed].map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''));
    };
    const client = new AgenticClient({ url: peer.url, token: 't' });
    const error = await client.run(request).catch((caught: unknown) => caught);
    assert.ok(error instanceof DriverError);
    assert.equal(error.code, 'TOOL_FAILED');
    assert.equal(error.outcome, 'uncertain');
    assert.deepEqual((await collect(client)).map((event) => event.type), ['run.started', 'run.failed']);
  });

  it('refuses streaming-only features in run() before any request', async () => {
    peer.requests = [];
    const client = new AgenticClient({ url: peer.url, token: 't' });
    assert.equal(await codeOf(() => client.run({ ...request, approvals: { mode: 'interactive', idlePolicy: 'pause' } })), 'APPROVAL_STREAM_REQUIRED');
    assert.equal(
      await codeOf(() => client.run({ ...request, applicationTools: [{ name: 'lookup', description: 'd', inputSchema: {} }], tools: ['lookup'] })),
      'TOOL_STREAM_REQUIRED',
    );
    assert.equal(await codeOf(() => client.run({ ...request, input: '' })), 'INVALID_REQUEST');
    assert.equal(peer.requests.length, 0);
  });

  it('reports an unreachable host as HOST_UNREACHABLE', async () => {
    const gone = await scripted();
    await close(gone.server);
    assert.equal(await codeOf(() => new AgenticClient({ url: gone.url, token: 't' }).protocol()), 'HOST_UNREACHABLE');
  });
});

describe('client over verified HTTPS with a per-client CA', () => {
  let pki: ServerIdentity;
  let server: Server;
  let port: number;
  let hits = 0;
  before(async () => {
    pki = makeServerIdentity();
    server = createHttpsServer({ cert: readFileSync(pki.certFile), key: readFileSync(pki.keyFile) }, (_, res) => {
      hits += 1;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ providers: [] }));
    });
    port = Number((await listen(server)).split(':')[1]);
  });
  after(async () => {
    await close(server);
    rmSync(pki.directory, { recursive: true, force: true });
  });

  it('trusts the CA given to this client only', async () => {
    assert.deepEqual(await new AgenticClient({ url: `https://127.0.0.1:${port}/`, token: 't', ca: pki.ca }).providers(), []);
    assert.equal(hits, 1);
    assert.equal(await codeOf(() => new AgenticClient({ url: `https://127.0.0.1:${port}/`, token: 't' }).providers()), 'HOST_UNREACHABLE');
    assert.equal(await codeOf(() => new AgenticClient({ url: `https://localhost:${port}/`, token: 't', ca: pki.ca }).providers()), 'HOST_UNREACHABLE');
    assert.equal(hits, 1, 'no request may pass an unverified handshake');
  });

  it('close() releases the connections the ca option opened: the socket ends, later calls fail', async () => {
    const sockets: Socket[] = [];
    const onConnection = (socket: Socket) => sockets.push(socket);
    server.on('secureConnection', onConnection);
    try {
      const client = new AgenticClient({ url: `https://127.0.0.1:${port}/`, token: 't', ca: pki.ca });
      assert.deepEqual(await client.providers(), []);
      assert.equal(sockets.length, 1);
      const ended = new Promise((resolve) => sockets[0]!.once('close', resolve));
      await client.close();
      await ended;
      assert.equal(await codeOf(() => client.providers()), 'HOST_UNREACHABLE');
    } finally {
      server.off('secureConnection', onConnection);
    }
  });
});

describe('client against the real host', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost();
  });
  after(() => host.close());

  it('runs, streams and discovers with validated answers', async () => {
    const client = new AgenticClient({ url: host.url, token: TOKEN });
    assert.ok((await client.providers()).some((provider) => provider.id === 'mock'));
    assert.equal((await client.run(request)).text, 'Hello');
    const events = await collect(client);
    assert.equal(events[0]?.type, 'run.started');
    assert.equal(events.at(-1)?.type, 'run.completed');
  });

  it('cancels the run on the host when the caller stops reading', async () => {
    const client = new AgenticClient({ url: host.url, token: TOKEN });
    const before = host.metrics.runs.cancelled;
    for await (const event of client.stream({ ...request, input: script([{ hang: true }]) })) if (event.type === 'run.started') break;
    await waitFor(() => host.metrics.runs.cancelled > before);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
