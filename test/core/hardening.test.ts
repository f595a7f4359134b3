/**
 * Regression tests for what an attack on a running host found (issue 13, defects 1, 2, 6
 * and 7): each reproduces the attack against a real host on loopback and asserts the
 * typed answer, promptly, with the host still serving others meanwhile.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DriverError } from '../../src/protocol/errors.js';
import { MockProvider } from '../../src/providers/mock.js';
import { clientErrorHandler } from '../../src/host/parser-errors.js';
import { AgenticDriver } from '../../src/runtime/driver.js';
import type { ProviderAdapter, ProviderPart } from '../../src/providers/contract/v1.js';
import type { RunEvent } from '../../src/protocol/schemas.js';
import { parseSse, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

interface RawResponse {
  status: number;
  headers: string;
  body: string;
}

/** Writes bytes exactly as given and reads until the server closes the connection. */
function rawExchange(url: string, bytes: string | Buffer): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(splitResponse(Buffer.concat(chunks).toString('latin1'))));
    socket.on('error', (error) => (chunks.length > 0 ? undefined : reject(error)));
  });
}

function splitResponse(data: string): RawResponse {
  const end = data.indexOf('\r\n\r\n');
  const headers = end < 0 ? data : data.slice(0, end);
  return { status: Number(headers.split(' ')[1]), headers, body: end < 0 ? '' : data.slice(end + 4) };
}

function assertEnvelope(response: RawResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.headers);
  assert.match(response.headers, /\r\nAgenticDriver-Version: 1\.0\r\n/i);
  assert.match(response.headers, /\r\nCache-Control: no-store\r\n/i);
  assert.match(response.headers, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i);
  const body = JSON.parse(response.body) as { error: { code: string; message: string; retryable: boolean } };
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(typeof body.error.retryable, 'boolean');
}

async function errorOf(response: Response): Promise<{ status: number; code: string | undefined }> {
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code };
}

/** `{"a":{"a":...}}` nested `depth` levels, as text (building it as a value would recurse). */
function nestedText(depth: number, open: string, close: string, leaf = '{}'): string {
  return open.repeat(depth) + leaf + close.repeat(depth);
}

const run = { provider: 'mock', model: 'demo', input: 'Hello' };
/** Each extra `a` doubles the time a backtracking engine needs: 2^40 steps is hours. */
const REDOS_INPUT = `"${'a'.repeat(40)}!"`;
const REDOS_PATTERN = '^(a+)+$';

describe('hardening: one request cannot freeze the host', () => {
  let host: TestHost;
  const internalErrors: { error: unknown; where: string }[] = [];
  before(async () => {
    host = await startTestHost(
      {
        applicationTools: { enabled: true, requireApproval: false },
        tokens: [
          {
            id: 'main',
            subject: 'test-user',
            tokenRef: { env: 'AD_TEST_TOKEN' },
            providers: ['mock'],
            tools: ['echo', 'guarded'],
            applicationTools: [{ name: 'lookup', requiresApproval: false }],
          },
        ],
      },
      {
        tools: [
          { name: 'echo', description: 'echo', inputSchema: { type: 'object' }, execute: (input) => input },
          { name: 'guarded', description: 'needs approval', inputSchema: { type: 'object' }, requiresApproval: true, execute: () => 'done' },
        ],
        approve: () => {
          throw new Error('approval backend exploded');
        },
        logInternalError: (error, where) => internalErrors.push({ error, where }),
      },
    );
  });
  after(async () => {
    await host.close();
  });

  describe('ReDoS (defect 1)', () => {
    it('checks the issue payload in linear time while /health keeps answering', async () => {
      const started = Date.now();
      const attack = host.post('/v1/runs', { ...run, input: REDOS_INPUT, outputSchema: { type: 'string', pattern: REDOS_PATTERN } });
      const health = fetch(`${host.url}/health`).then((response) => ({ status: response.status, at: Date.now() - started }));
      const [response, healthy] = await Promise.all([attack, health]);
      assert.deepEqual(await errorOf(response), { status: 502, code: 'INVALID_OUTPUT' });
      assert.equal(healthy.status, 200);
      assert.ok(healthy.at < 2000, `/health took ${healthy.at} ms`);
      assert.ok(Date.now() - started < 5000, `the attack took ${Date.now() - started} ms`);
      const ok = (await (await host.post('/v1/runs', { ...run, input: `"${'a'.repeat(40)}"`, outputSchema: { type: 'string', pattern: REDOS_PATTERN } })).json()) as { output: unknown };
      assert.equal(ok.output, 'a'.repeat(40));
    });

    it('runs patternProperties and propertyNames on the same engine', async () => {
      const started = Date.now();
      const input = JSON.stringify({ [`${'a'.repeat(40)}!`]: 1 });
      for (const outputSchema of [
        { type: 'object', patternProperties: { [REDOS_PATTERN]: { type: 'string' } } },
        { type: 'object', propertyNames: { pattern: REDOS_PATTERN } },
      ]) {
        const response = await host.post('/v1/runs', { ...run, input, outputSchema });
        assert.equal(response.status, outputSchema.propertyNames ? 502 : 200);
        await response.body?.cancel();
      }
      assert.ok(Date.now() - started < 5000);
    });

    it('refuses patterns RE2 cannot express with INVALID_SCHEMA before any model call', async () => {
      // Runs of the tests before may still be writing their records; count from a quiet store.
      const before = await settledRunCount(host);
      for (const pattern of ['(a)\\1', '^(?=a)a$', '(?!b)a', '(?<=a)b', '(?<!a)b', 'a{1001}']) {
        const response = await host.post('/v1/runs', { ...run, outputSchema: { type: 'string', pattern } });
        assert.deepEqual(await errorOf(response), { status: 400, code: 'INVALID_SCHEMA' }, pattern);
      }
      assert.equal(await settledRunCount(host), before);
    });

    it('applies the engine to application-tool input schemas', async () => {
      const lookup = (pattern: string) => ({
        name: 'lookup',
        description: 'Looks something up.',
        inputSchema: { type: 'object', properties: { query: { type: 'string', pattern } } },
      });
      const refused = await host.post('/v1/runs', { ...run, tools: ['lookup'], applicationTools: [lookup('(x)\\1')] }, { accept: 'text/event-stream' });
      assert.deepEqual(await errorOf(refused), { status: 400, code: 'INVALID_SCHEMA' });

      const started = Date.now();
      const input = script([{ toolCall: { name: 'lookup', arguments: { query: `${'a'.repeat(40)}!` } } }], [{ text: 'unreachable' }]);
      const response = await host.post('/v1/runs', { ...run, input, tools: ['lookup'], applicationTools: [lookup(REDOS_PATTERN)] }, { accept: 'text/event-stream' });
      assert.equal(response.status, 200);
      const events = parseSse(await response.text());
      assert.equal(events.at(-1)!.type, 'run.failed');
      assert.equal((events.at(-1)!.error as { code: string }).code, 'INVALID_TOOL_ARGUMENTS');
      assert.ok(Date.now() - started < 5000);
    });
  });

  describe('deep nesting (defect 2)', () => {
    const post = (text: string) => fetch(`${host.url}/v1/runs`, { method: 'POST', headers: host.headers(), body: text });

    it('answers 400 for an outputSchema nested 2,000 levels, and for 3,000 nested properties', async () => {
      const items = `{"provider":"mock","model":"demo","input":"x","outputSchema":${nestedText(2000, '{"items":', '}')}}`;
      assert.deepEqual(await errorOf(await post(items)), { status: 400, code: 'INVALID_REQUEST' });
      const properties = `{"provider":"mock","model":"demo","input":"x","outputSchema":${nestedText(3000, '{"type":"object","properties":{"p":', '}}')}}`;
      assert.deepEqual(await errorOf(await post(properties)), { status: 400, code: 'INVALID_REQUEST' });
      const arrays = await post(`{"provider":"mock","model":"demo","input":"x","outputSchema":{"enum":[${nestedText(100_000, '[', ']', '1')}]}}`);
      assert.equal(arrays.status, 400);
      assert.match(((await arrays.json()) as { error: { message: string } }).error.message, /more than 128 levels deep/);
    });

    it('lets brackets inside strings through and still bounds schema depth with INVALID_SCHEMA', async () => {
      const text = JSON.stringify({ ...run, input: '['.repeat(5000) });
      assert.equal((await post(text)).status, 200);
      const schema = `{"provider":"mock","model":"demo","input":"x","outputSchema":${nestedText(100, '{"items":', '}')}}`;
      assert.deepEqual(await errorOf(await post(schema)), { status: 400, code: 'INVALID_SCHEMA' });
    });

    it('fails deeply nested model output with INVALID_OUTPUT, not a 500', async () => {
      const input = nestedText(5000, '[', ']', '1');
      assert.deepEqual(await errorOf(await host.post('/v1/runs', { ...run, input, outputSchema: { type: 'array' } })), { status: 502, code: 'INVALID_OUTPUT' });
    });

    it('bounds depth in-process too, before structuredClone', () => {
      const driver = new AgenticDriver({ providers: [new MockProvider({ models: ['demo'] })] });
      let schema: Record<string, unknown> = {};
      for (let i = 0; i < 20_000; i += 1) schema = { items: schema };
      assert.throws(() => driver.prepare({ ...run, outputSchema: schema }), (error: unknown) => error instanceof DriverError && error.code === 'INVALID_REQUEST');
    });

    it('logs every 500 with its unmasked cause', async () => {
      const input = script([{ toolCall: { name: 'guarded', arguments: {} } }], [{ text: 'done' }]);
      const response = await host.post('/v1/runs', { ...run, input, tools: ['guarded'] });
      assert.deepEqual(await errorOf(response), { status: 500, code: 'INTERNAL_ERROR' });
      const logged = internalErrors.find(({ error }) => error instanceof Error && error.message === 'approval backend exploded');
      assert.ok(logged, 'the internal error was not logged');
      assert.match(logged.where, /^run [0-9a-f-]{36}$/);
    });
  });
});

describe('hardening: every response keeps the contract (defects 6 and 7)', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost();
  });
  after(() => host.close());

  describe('HTTP-parser errors use our envelope and headers', () => {
    it('a header name with a control byte → 400', async () => {
      const response = await rawExchange(host.url, Buffer.from('GET /health HTTP/1.1\r\nHost: x\r\nBad\x01Name: 1\r\n\r\n', 'latin1'));
      assertEnvelope(response, 400, 'INVALID_REQUEST');
    });

    it('a 20 KB header → 431', async () => {
      const response = await rawExchange(host.url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
      assertEnvelope(response, 431, 'HEADERS_TOO_LARGE');
    });

    it('oversized chunk extensions → 413', async () => {
      const head = `POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
      const response = await rawExchange(host.url, `${head}1;${'e'.repeat(20_000)}\r\n{\r\n0\r\n\r\n`);
      assertEnvelope(response, 413, 'BODY_TOO_LARGE');
    });

    it('a target the router cannot decode → 400', async () => {
      const response = await rawExchange(host.url, 'GET /v1/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assertEnvelope(response, 400, 'INVALID_REQUEST');
    });

    it('a header timeout → 408 (the handler Fastify calls, on a real socket)', async () => {
      const handler = clientErrorHandler(false);
      const server = createServer((socket: Socket) => handler(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as { port: number };
        assertEnvelope(await rawExchange(`http://127.0.0.1:${port}`, 'GET /health HTTP/1.1\r\n'), 408, 'REQUEST_TIMEOUT');
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('small ones', () => {
    it('answers HEAD /health without a token, like GET', async () => {
      const response = await fetch(`${host.url}/health`, { method: 'HEAD' });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('agenticdriver-version'), '1.0');
      assert.equal((await fetch(`${host.url}/v1/protocol`, { method: 'HEAD' })).status, 401);
    });

    it('routes on the raw target: a percent-encoded path is not the route it decodes to', async () => {
      for (const path of ['/v1/%70rotocol', '/v1/protocol%2F', '/%761/protocol']) {
        const response = await rawExchange(host.url, `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`);
        assertEnvelope(response, 404, 'NOT_FOUND');
      }
      assert.equal((await fetch(`${host.url}/v1/protocol`, { headers: host.headers() })).status, 200);
    });

    it('accepts only one true or false in AgenticDriver-Accept-Optional-Events', async () => {
      // `True`/`TRUE` were accepted although the OpenAPI enum is exactly true/false (schemathesis, negative_data_rejection).
      for (const value of ['{}', 'yes', '1', '', 'True', 'TRUE', 'False']) {
        const response = await host.post('/v1/runs', run, { 'agenticdriver-accept-optional-events': value });
        assert.deepEqual(await errorOf(response), { status: 400, code: 'INVALID_REQUEST' }, JSON.stringify(value));
      }
      const twice = await rawExchange(
        host.url,
        `GET /v1/protocol HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nAgenticDriver-Accept-Optional-Events: true\r\nAgenticDriver-Accept-Optional-Events: true\r\nConnection: close\r\n\r\n`,
      );
      assertEnvelope(twice, 400, 'INVALID_REQUEST');
      for (const value of ['true', 'false']) {
        assert.equal((await host.post('/v1/runs', run, { 'agenticdriver-accept-optional-events': value })).status, 200, value);
      }
    });

    it('refuses JSON in a charset other than UTF-8 with 415, and takes UTF-8 however it is spelled', async () => {
      for (const type of ['application/json; charset=latin1', 'application/json; charset=iso-8859-1', 'application/json;charset="utf-16"']) {
        const response = await host.post('/v1/runs', run, { 'content-type': type });
        assert.equal(response.status, 415, type);
        assert.equal(response.headers.get('agenticdriver-version'), '1.0');
        assert.equal((await errorOf(response)).code, 'UNSUPPORTED_MEDIA_TYPE');
      }
      for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON; Charset="UTF-8"', 'application/json;charset=utf8']) {
        assert.equal((await host.post('/v1/runs', run, { 'content-type': type })).status, 200, type);
      }
      for (const type of ['text/plain', 'application/jsonx', 'application/json-seq']) {
        assert.deepEqual(await errorOf(await host.post('/v1/runs', run, { 'content-type': type })), { status: 400, code: 'INVALID_REQUEST' }, type);
      }
    });

    it('creates the SQLite file and its WAL companions owner-only (0600)', async () => {
      assert.equal((await host.post('/v1/runs', run)).status, 200);
      for (const name of ['agenticdriver.sqlite', 'agenticdriver.sqlite-wal', 'agenticdriver.sqlite-shm']) {
        assert.equal(statSync(join(host.dir, 'state', name)).mode & 0o777, 0o600, name);
      }
    });
  });
});

/** A provider that writes more text in one step than a consumer's buffer may hold. */
class FloodingProvider implements ProviderAdapter {
  private readonly inner = new MockProvider({ models: ['demo'] });
  get info() {
    return this.inner.info;
  }
  async *stream(): AsyncIterable<ProviderPart> {
    yield { type: 'text-delta', text: 'x'.repeat(3_000_000) };
    yield { type: 'finish', finishReason: 'stop' };
  }
}

describe('hardening: a run stopped by OUTPUT_BUFFER_LIMIT failed (defect 7)', () => {
  it('ends with run.failed, never run.cancelled, and records a failure', async () => {
    const statuses: string[] = [];
    const driver = new AgenticDriver({ providers: [new FloodingProvider()], onUsage: (record) => void statuses.push(record.status) });
    const events: RunEvent[] = [];
    for await (const event of driver.stream(run)) events.push(event);
    const terminal = events.at(-1)!;
    assert.equal(terminal.type, 'run.failed');
    assert.equal((terminal as Extract<RunEvent, { type: 'run.failed' }>).error.code, 'OUTPUT_BUFFER_LIMIT');
    assert.ok(!events.some((event) => event.type === 'run.cancelled'));
    assert.deepEqual(statuses, ['failed']);
  });
});

/** The number of usage records once it has stopped changing for 200 ms. */
async function settledRunCount(host: TestHost): Promise<number> {
  let last = -1;
  for (let attempt = 0; attempt < 50; attempt++) {
    const runs = (await host.store.usage.summary()).runs;
    if (runs === last) return runs;
    last = runs;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('usage records kept changing for 10 s');
}
