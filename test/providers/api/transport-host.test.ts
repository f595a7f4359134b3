/** Verified HTTPS with a throwaway CA, base-URL rules, Retry-After parsing, and all five kinds through the host (JSON and SSE). */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSecret } from '../../../src/shared/secrets.js';
import { ApiProvider, openaiDialect } from '../../../src/providers/api/index.js';
import { retryAfterMs } from '../../../src/providers/api/retry.js';
import { providerKind } from '../../../src/providers/kinds.js';
import { AgenticDriver } from '../../../src/runtime/driver.js';
import { parseSse, startTestHost, type TestHost } from '../../support/host.js';
import { makeServerIdentity, startOpenAIResponsesServer, type VendorServer } from '../../vendors/index.js';
import { KEY, KINDS, MODEL } from './harness.js';
import { tempDir } from '../../support/temp.js';

const env = { configDir: tmpdir(), readSecret: async () => KEY };

describe('API transport', () => {
  it('talks verified HTTPS to a server signed by a trusted CA, and refuses an untrusted one', async () => {
    const certs = makeServerIdentity();
    const server = await startOpenAIResponsesServer({ tls: certs, apiKey: KEY, script: [{ turn: { text: 'over tls' } }, { turn: { text: 'never' } }] });
    try {
      const entry = { kind: 'openai', id: 'tls', models: [MODEL], apiKeyRef: { env: 'X' }, baseUrl: server.url };
      const trusted = new ApiProvider(openaiDialect, entry, env, { transport: { ca: certs.ca } });
      const result = await new AgenticDriver({ providers: [trusted] }).run({ provider: 'tls', model: MODEL, input: 'hi' });
      assert.equal(result.text, 'over tls');
      const untrusted = new ApiProvider(openaiDialect, entry, env);
      await assert.rejects(new AgenticDriver({ providers: [untrusted] }).run({ provider: 'tls', model: MODEL, input: 'hi' }), { code: 'PROVIDER_UNREACHABLE' });
      assert.equal(server.generations.length, 1, 'the untrusted handshake never sent the request');
    } finally {
      await server.close();
    }
  });

  it('accepts https or loopback http base URLs only', () => {
    const create = (baseUrl: string) => providerKind('openai-compatible')!.create({ kind: 'openai-compatible', id: 'c', models: [], apiKeyRef: { env: 'X' }, baseUrl } as never, env);
    for (const ok of ['https://gateway.example/v1', 'http://127.0.0.1:8000/v1/', 'http://localhost:11434/v1', 'http://[::1]:8080/']) assert.ok(create(ok).info);
    for (const bad of ['http://gateway.example/v1', 'https://user:pw@gateway.example/', 'https://gateway.example/v1?x=1', 'ftp://gateway.example/']) {
      assert.throws(() => create(bad), { code: 'INSECURE_TRANSPORT' });
    }
    assert.throws(() => create('not a url'), { code: 'INVALID_CONFIG' });
  });

  it('rejects input media the vendor or the model list does not allow', () => {
    const entry = (kind: string, inputMediaTypes: unknown) => ({ kind, id: 'x', models: [MODEL], apiKeyRef: { env: 'X' }, baseUrl: 'https://a.example/', inputMediaTypes });
    assert.throws(() => providerKind('xai')!.create(entry('xai', { [MODEL]: ['application/pdf'] }) as never, env), { code: 'INVALID_CONFIG' });
    assert.throws(() => providerKind('openai')!.create(entry('openai', { other: ['image/png'] }) as never, env), { code: 'INVALID_CONFIG' });
    const info = providerKind('anthropic')!.create(entry('anthropic', { [MODEL]: ['image/png', 'application/pdf'] }) as never, env).info;
    assert.equal(info.capabilities.images, true);
    assert.equal(info.capabilities.documents, true);
  });

  it('parses Retry-After as seconds or an exact HTTP date, and nothing else', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs('1.5', now), 1500);
    assert.equal(retryAfterMs(new Date(now + 2000).toUTCString(), now), 2000);
    assert.equal(retryAfterMs('10,20', now), null);
    assert.equal(retryAfterMs('2026-01-01', now), null);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });
});

describe('API kinds through the host', () => {
  let host: TestHost;
  const servers: VendorServer[] = [];
  before(async () => {
    for (const kase of KINDS) {
      servers.push(await kase.start({ apiKey: KEY, models: [MODEL, 'listed-only'], script: [{ turn: { text: ['json ', kase.kind] } }, { turn: { text: ['sse ', kase.kind] } }] }));
    }
    const dir = tempDir('ad-api-host-');
    host = await startTestHost(
      {
        providers: KINDS.map((kase, i) => ({ kind: kase.kind, id: `p-${kase.kind}`, models: [MODEL], apiKeyRef: { env: 'AD_TEST_VENDOR_KEY' }, baseUrl: servers[i]!.url })),
        tokens: [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: KINDS.map((k) => `p-${k.kind}`) }],
        state: { directory: join(dir, 'state') },
      },
      { env: { ...process.env, AD_TEST_TOKEN: 'test-token-0123456789abcdefghijklmnop', AD_TEST_VENDOR_KEY: KEY } },
    );
  });
  after(async () => {
    await host?.close();
    await Promise.all(servers.map((s) => s.close()));
  });

  for (const kase of KINDS) {
    it(`${kase.kind}: JSON then SSE`, async () => {
      const request = { provider: `p-${kase.kind}`, model: MODEL, input: 'Hello' };
      const json = await host.post('/v1/runs', request);
      assert.equal(json.status, 200);
      assert.equal(((await json.json()) as { text: string }).text, `json ${kase.kind}`);
      const sse = await host.post('/v1/runs', request, { accept: 'text/event-stream' });
      assert.match(sse.headers.get('content-type') ?? '', /text\/event-stream/);
      const events = parseSse(await sse.text());
      assert.equal(events.filter((e) => e.type === 'text.delta').map((e) => e.text).join(''), `sse ${kase.kind}`);
      assert.equal(events.at(-1)!.type, 'run.completed');
      const listed = await fetch(`${host.url}/v1/providers`, { headers: host.headers() });
      type Listed = { id: string; models: string[]; capabilities: Record<string, boolean>; health?: { status: string }; modelCatalog?: { source: string; models: string[] } };
      const provider = ((await listed.json()) as { providers: Listed[] }).providers.find((p) => p.id === `p-${kase.kind}`);
      assert.equal(provider?.capabilities.safeRetries, true);
      assert.equal(provider?.health?.status, 'ready', 'discovery probed the vendor model list');
      assert.equal(provider?.modelCatalog?.source, 'provider');
      assert.ok(provider?.modelCatalog?.models.includes('listed-only'));
      assert.deepEqual(provider?.models, [MODEL], 'discovery is advisory: the allowlist is unchanged');
    });
  }
});
