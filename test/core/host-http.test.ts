import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseSse, RESTRICTED_TOKEN, OTHER_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

/** Sends raw HTTP so a test can repeat headers exactly as written. */
function rawRequest(url: string, head: string, body = ''): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.end(`${head}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    });
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => {
      const [headers = '', rest = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(headers.split(' ')[1]), headers, body: rest });
    });
    socket.on('error', reject);
  });
}

const run = { provider: 'mock', model: 'demo', input: 'Hello' };

describe('host over loopback HTTP', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost({ allowedOrigins: ['http://app.example:8080'] }, { heartbeatMs: 20 });
  });
  after(() => host.close());

  it('answers /health without a token', async () => {
    const response = await fetch(`${host.url}/health`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok', protocol: 'agenticdriver.v1' });
    assert.equal(response.headers.get('agenticdriver-version'), '1.0');
  });

  describe('version negotiation', () => {
    for (const [label, value, status] of [
      ['absent', undefined, 200],
      ['1.0', '1.0', 200],
      ['2.0', '2.0', 400],
      ['1', '1', 400],
      ['abc', 'abc', 400],
      ['a list', '1.0, 2.0', 400],
    ] as const) {
      it(`${label} → ${status}`, async () => {
        const response = await host.post('/v1/runs', run, value === undefined ? {} : { 'agenticdriver-version': value });
        assert.equal(response.status, status);
        assert.equal(response.headers.get('agenticdriver-version'), '1.0');
        if (status === 400) assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'UNSUPPORTED_PROTOCOL_VERSION');
      });
    }

    it('rejects a repeated version header even when both say 1.0', async () => {
      const response = await rawRequest(
        host.url,
        `GET /v1/protocol HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nAgenticDriver-Version: 1.0\r\nAgenticDriver-Version: 1.0`,
      );
      assert.equal(response.status, 400);
      assert.match(response.body, /UNSUPPORTED_PROTOCOL_VERSION/);
      assert.match(response.headers, /AgenticDriver-Version: 1\.0/i);
    });

    it('authenticates before negotiating', async () => {
      const response = await fetch(`${host.url}/v1/protocol`, { headers: { 'agenticdriver-version': '9.9' } });
      assert.equal(response.status, 401);
    });
  });

  it('puts the version and safety headers on every error status', async () => {
    const cases: [string, RequestInit, number][] = [
      ['/v1/protocol', {}, 401],
      ['/v1/runs', { method: 'POST', headers: { authorization: `Bearer ${RESTRICTED_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(run) }, 403],
      ['/v1/nothing', { headers: { authorization: `Bearer ${TOKEN}` } }, 404],
      ['/v1/runs', { method: 'POST', headers: host.headers(), body: JSON.stringify({ ...run, input: 'x'.repeat(1_100_000) }) }, 413],
    ];
    for (const [path, init, status] of cases) {
      const response = await fetch(`${host.url}${path}`, init);
      assert.equal(response.status, status, path);
      assert.equal(response.headers.get('agenticdriver-version'), '1.0');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      const body = (await response.json()) as { error: { code: string; message: string; retryable: boolean } };
      assert.equal(typeof body.error.code, 'string');
      assert.equal(typeof body.error.retryable, 'boolean');
    }
  });

  it('rejects unknown request fields, bad JSON, bad UTF-8, other media types and encodings with 400', async () => {
    const expectInvalid = async (response: Response) => {
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'INVALID_REQUEST');
    };
    await expectInvalid(await host.post('/v1/runs', { ...run, surprise: true }));
    await expectInvalid(await host.post('/v1/runs', '{"provider":'));
    await expectInvalid(await fetch(`${host.url}/v1/runs`, { method: 'POST', headers: host.headers(), body: Buffer.from([0x7b, 0xff, 0x7d]) }));
    await expectInvalid(await host.post('/v1/runs', run, { 'content-type': 'text/plain' }));
    await expectInvalid(await host.post('/v1/runs', run, { 'content-encoding': 'gzip' }));
    await expectInvalid(await fetch(`${host.url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } }));
  });

  it('routes on the exact target: unknown queries, trailing slashes and wrong methods are 404', async () => {
    for (const [path, method] of [['/v1/protocol?x=1', 'GET'], ['/v1/protocol/', 'GET'], ['/v1/runs', 'GET'], ['/v1/providers?refresh=1', 'GET']]) {
      const response = await fetch(`${host.url}${path}`, { method, headers: host.headers() });
      assert.equal(response.status, 404, path);
    }
    assert.equal((await fetch(`${host.url}/v1/providers?refresh=true`, { headers: host.headers() })).status, 200);
  });

  it('describes the protocol and only the granted providers', async () => {
    const protocol = (await (await fetch(`${host.url}/v1/protocol`, { headers: host.headers() })).json()) as { features: string[]; supportedVersions: string[]; version: string };
    assert.equal(protocol.version, '1.0');
    assert.deepEqual(protocol.supportedVersions, ['1.0']);
    assert.ok(protocol.features.includes('event-stream'));
    assert.ok(!protocol.features.includes('interactive-approvals'));

    const list = async (token: string) =>
      ((await (await fetch(`${host.url}/v1/providers`, { headers: { authorization: `Bearer ${token}` } })).json()) as { providers: { id: string; capabilities: Record<string, boolean>; health?: { status: string } }[] }).providers;
    const mine = await list(TOKEN);
    assert.deepEqual(mine.map((p) => p.id), ['mock']);
    assert.deepEqual(mine[0]!.capabilities, { tools: true, textStreaming: true });
    assert.equal(mine[0]!.health?.status, 'ready');
    assert.deepEqual(await list(RESTRICTED_TOKEN), []);
    assert.deepEqual((await list(OTHER_TOKEN)).map((p) => p.id).sort(), ['mock', 'second']);
  });

  describe('grants', () => {
    const codeOf = async (response: Response) => ({ status: response.status, code: ((await response.json()) as { error?: { code: string } }).error?.code });
    it('refuses an ungranted provider with 403 whether or not it exists', async () => {
      assert.deepEqual(await codeOf(await host.post('/v1/runs', { ...run, provider: 'second' })), { status: 403, code: 'FORBIDDEN' });
      assert.deepEqual(await codeOf(await host.post('/v1/runs', { ...run, provider: 'does-not-exist' })), { status: 403, code: 'FORBIDDEN' });
      assert.deepEqual(await codeOf(await host.post('/v1/runs', { ...run, model: 'secret-model' }, { authorization: `Bearer ${RESTRICTED_TOKEN}` })), { status: 403, code: 'FORBIDDEN' });
    });
    it('refuses an ungranted tool, and a granted but unregistered one is UNKNOWN_TOOL', async () => {
      const other = { authorization: `Bearer ${OTHER_TOKEN}` };
      assert.deepEqual(await codeOf(await host.post('/v1/runs', { ...run, tools: ['echo'] }, other)), { status: 403, code: 'FORBIDDEN' });
      assert.deepEqual(await codeOf(await host.post('/v1/runs', { ...run, tools: ['guarded'] })), { status: 400, code: 'UNKNOWN_TOOL' });
    });
    it('checks the schema before grants', async () => {
      assert.deepEqual(await codeOf(await host.post('/v1/runs', { provider: 'second', model: 'demo' }, { authorization: `Bearer ${RESTRICTED_TOKEN}` })), { status: 400, code: 'INVALID_REQUEST' });
    });
    it('reveals the model allowlist only to a token granted the provider', async () => {
      assert.deepEqual(await codeOf(await host.post('/v1/runs', { ...run, model: 'other-model' })), { status: 400, code: 'UNSUPPORTED_MODEL' });
    });
  });

  describe('CORS', () => {
    it('denies a foreign origin before authentication, on every path', async () => {
      for (const path of ['/health', '/v1/protocol']) {
        const response = await fetch(`${host.url}${path}`, { headers: { origin: 'https://evil.example' } });
        assert.equal(response.status, 403);
        assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'ORIGIN_DENIED');
        assert.equal(response.headers.get('agenticdriver-version'), '1.0');
      }
    });
    it('lets any preflight through so a refused page can read ORIGIN_DENIED', async () => {
      const preflight = await fetch(`${host.url}/v1/runs`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      assert.equal(preflight.status, 204);
      const refused = await fetch(`${host.url}/v1/protocol`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${TOKEN}` } });
      assert.equal(refused.status, 403);
      assert.equal(refused.headers.get('access-control-allow-origin'), 'https://evil.example');
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'ORIGIN_DENIED');
    });

    it('answers an allowed preflight with 204 and the negotiation headers', async () => {
      const response = await fetch(`${host.url}/v1/runs`, { method: 'OPTIONS', headers: { origin: 'http://app.example:8080', 'access-control-request-method': 'POST' } });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get('access-control-allow-origin'), 'http://app.example:8080');
      assert.match(response.headers.get('access-control-allow-headers') ?? '', /AgenticDriver-Version/);
      assert.match(response.headers.get('access-control-allow-headers') ?? '', /AgenticDriver-Accept-Optional-Events/);
      assert.match(response.headers.get('access-control-allow-headers') ?? '', /Authorization/);
      assert.equal(response.headers.get('access-control-expose-headers'), 'AgenticDriver-Version');
      assert.equal(response.headers.get('agenticdriver-version'), '1.0');
    });
    it('still requires the bearer for an allowed origin', async () => {
      const response = await fetch(`${host.url}/v1/protocol`, { headers: { origin: 'http://app.example:8080' } });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('access-control-allow-origin'), 'http://app.example:8080');
    });
  });

  describe('runs', () => {
    it('streams a valid envelope sequence ending in one terminal', async () => {
      const response = await host.post('/v1/runs', run, { accept: 'text/event-stream' });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      const text = await response.text();
      assert.match(text, /^id: 1\nevent: run\.started\ndata: \{/);
      const events = parseSse(text);
      assert.equal(events[0]!.type, 'run.started');
      events.forEach((event, index) => {
        assert.equal(event.sequence, index + 1);
        assert.equal(event.runId, events[0]!.runId);
        assert.match(String(event.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      });
      assert.deepEqual(events.map((e) => e.type), ['run.started', 'step.started', 'text.delta', 'usage.reported', 'run.completed']);
    });

    it('returns the same result as JSON and as SSE', async () => {
      const json = (await (await host.post('/v1/runs', run)).json()) as Record<string, unknown>;
      const events = parseSse(await (await host.post('/v1/runs', run, { accept: 'text/event-stream' })).text());
      const streamed = events.at(-1)!.result as Record<string, unknown>;
      assert.equal(json.runId === streamed.runId, false);
      const { runId: _a, ...jsonRest } = json;
      const { runId: _b, ...streamRest } = streamed;
      assert.deepEqual(jsonRest, streamRest);
      assert.equal(json.text, 'Hello');
    });

    it('answers validation errors as HTTP errors before any SSE byte', async () => {
      const response = await host.post('/v1/runs', { ...run, requiredCapabilities: ['teleportation'] }, { accept: 'text/event-stream' });
      assert.equal(response.status, 400);
      assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'UNSUPPORTED_CAPABILITY');
    });

    it('ends INVALID_OUTPUT with run.failed on SSE and a 502 on JSON', async () => {
      const body = { ...run, input: '{"a":1}', outputSchema: { type: 'object', required: ['b'] } };
      const json = await host.post('/v1/runs', body);
      assert.equal(json.status, 502);
      assert.equal(((await json.json()) as { error: { code: string } }).error.code, 'INVALID_OUTPUT');
      const events = parseSse(await (await host.post('/v1/runs', body, { accept: 'text/event-stream' })).text());
      assert.equal(events.at(-1)!.type, 'run.failed');
      assert.equal((events.at(-1)!.error as { code: string }).code, 'INVALID_OUTPUT');
      assert.ok(!events.some((e) => e.type === 'run.completed'));
    });

    it('sends advisory events only to requests that opted in, with no sequence gap otherwise', async () => {
      const body = { ...run, input: script([{ advisory: { type: 'provider.note', detail: 1 } }, { text: 'ok' }]) };
      const without = parseSse(await (await host.post('/v1/runs', body, { accept: 'text/event-stream' })).text());
      assert.ok(!without.some((e) => e.type === 'provider.note'));
      without.forEach((event, index) => assert.equal(event.sequence, index + 1));
      const opted = parseSse(await (await host.post('/v1/runs', body, { accept: 'text/event-stream', 'agenticdriver-accept-optional-events': 'true' })).text());
      const advisory = opted.find((e) => e.type === 'provider.note');
      assert.equal(advisory?.optional, true);
      assert.equal(advisory?.detail, 1);
    });

    it('keeps a heartbeat going that never resets the idle timer', async () => {
      const started = Date.now();
      const response = await host.post('/v1/runs', { ...run, input: script([{ hang: true }]), idleTimeoutMs: 300 }, { accept: 'text/event-stream' });
      const text = await response.text();
      assert.match(text, /: heartbeat\n\n/);
      const terminal = parseSse(text).at(-1)!;
      assert.equal(terminal.type, 'run.cancelled');
      assert.deepEqual(terminal.error, { code: 'IDLE_TIMEOUT', message: 'The run made no progress for 300 ms.', retryable: true });
      assert.ok(Date.now() - started >= 290);
    });

    it('cancels the run when the client disconnects', async () => {
      const before = host.metrics.runs.cancelled;
      const controller = new AbortController();
      const response = await host.post('/v1/runs', { ...run, input: script([{ text: 'first' }, { hang: true }]) }, { accept: 'text/event-stream' });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      await reader.cancel();
      for (let i = 0; i < 100 && host.metrics.runs.cancelled === before; i += 1) await new Promise((r) => setTimeout(r, 20));
      assert.equal(host.metrics.runs.cancelled, before + 1);
      const summary = await host.store.usage.summary();
      assert.ok(summary.cancelled >= 1);
    });

    it('runs host tools in the loop and feeds results back to the model', async () => {
      const input = script([{ toolCall: { name: 'echo', arguments: { text: 'ping' } } }], [{ echoToolResults: true }]);
      const result = (await (await host.post('/v1/runs', { ...run, input, tools: ['echo'] })).json()) as { text: string; steps: number };
      assert.deepEqual(JSON.parse(result.text), [{ text: 'ping' }]);
      assert.equal(result.steps, 2);
    });
  });
});

describe('host admission', () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost({ limits: { maxConcurrentRunsPerSubject: 1 } });
  });
  after(() => host.close());

  it('answers 429 BUSY when the subject is at its cap, and admits again once a run ends', async () => {
    const first = await host.post('/v1/runs', { ...run, input: script([{ hang: true }]) }, { accept: 'text/event-stream' });
    const reader = first.body!.getReader();
    await reader.read();
    const busy = await host.post('/v1/runs', run);
    assert.equal(busy.status, 429);
    assert.deepEqual(((await busy.json()) as { error: unknown }).error, {
      code: 'BUSY',
      message: 'The host is running as many runs as it allows; try again later.',
      retryable: true,
    });
    await reader.cancel();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i += 1) {
      status = (await host.post('/v1/runs', run)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 200);
  });
});
