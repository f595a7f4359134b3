/**
 * Embedding adapters against loopback servers speaking OpenAI's and Gemini's exact formats:
 * request bodies and headers, reordering by index, normalisation, usage, and every error code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { createEmbeddingAdapter, EmbeddingConfig, hashEmbedder, normalizeVector } from '../../../src/providers/embeddings/index.js';
import type { SecretRef } from '../../../src/shared/secrets.js';
import { fakeVector, startEmbeddingServer, type EmbeddingServer } from '../../vendors/index.js';

const KEY = 'sk-embedding-test';
const DIMS = 4;
const env = (secrets: Record<string, string>) => ({ readSecret: async (ref: SecretRef) => ('env' in ref ? (secrets[ref.env] ?? '') : '') });

function expected(text: string, index: number): Float32Array {
  return normalizeVector(fakeVector(text, index, DIMS), DIMS);
}

async function rejectsWith(promise: Promise<unknown>, code: string, retryable?: boolean): Promise<void> {
  await assert.rejects(promise, (error: { code?: string; retryable?: boolean }) => {
    assert.equal(error.code, code);
    if (retryable !== undefined) assert.equal(error.retryable, retryable);
    return true;
  });
}

describe('normalizeVector', () => {
  it('scales to unit length and refuses wrong length, non-finite and all-zero vectors', () => {
    const vector = normalizeVector([3, 4], 2);
    assert.ok(Math.abs(vector[0]! - 0.6) < 1e-6 && Math.abs(vector[1]! - 0.8) < 1e-6);
    const huge = normalizeVector([1e300, 1e300], 2);
    assert.ok(Math.abs(huge[0]! - Math.SQRT1_2) < 1e-6);
    assert.throws(() => normalizeVector([1, 2, 3], 2), { code: 'INVALID_EMBEDDING' });
    assert.throws(() => normalizeVector([1, Number.NaN], 2), { code: 'INVALID_EMBEDDING' });
    assert.throws(() => normalizeVector([1, Infinity], 2), { code: 'INVALID_EMBEDDING' });
    assert.throws(() => normalizeVector([0, 0], 2), { code: 'INVALID_EMBEDDING' });
  });

  it('the config is strict', () => {
    assert.ok(Value.Check(EmbeddingConfig, { kind: 'openai', model: 'text-embedding-3-small', dimensions: 256, apiKeyRef: { env: 'K' }, sendDimensions: true }));
    assert.ok(!Value.Check(EmbeddingConfig, { kind: 'openai', model: 'm', dimensions: 256, extra: 1 }));
    assert.ok(!Value.Check(EmbeddingConfig, { kind: 'cohere', model: 'm', dimensions: 256 }));
    assert.ok(!Value.Check(EmbeddingConfig, { kind: 'openai', model: 'm', dimensions: 5000 }));
  });
});

describe('hashEmbedder', () => {
  it('is deterministic, unit length, and close for texts that share words', async () => {
    const embedder = hashEmbedder(64);
    assert.deepEqual(embedder.identity, { providerId: 'fixture-embedding', vendor: 'fixture', authMode: 'none', model: 'lexical-hash-v1', dimensions: 64 });
    const { vectors } = await embedder.embed(['the water filter', 'The WATER filter', 'volcanic basalt', '...']);
    assert.deepEqual(vectors[0], vectors[1]);
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index]!, 0);
    assert.ok(Math.abs(dot(vectors[0]!, vectors[0]!) - 1) < 1e-5);
    assert.ok(dot(vectors[0]!, vectors[1]!) > dot(vectors[0]!, vectors[2]!));
    assert.equal(vectors[3]!.length, 64);
  });
});

describe('OpenAI embeddings', () => {
  let server: EmbeddingServer;
  before(async () => {
    server = await startEmbeddingServer('openai', { apiKey: KEY, dimensions: DIMS });
  });
  after(() => server.close());
  const adapter = (overrides: Record<string, unknown> = {}, secrets: Record<string, string> = { EMBED_KEY: KEY }) =>
    createEmbeddingAdapter({ kind: 'openai', model: 'text-embedding-3-small', dimensions: DIMS, baseUrl: server.url, apiKeyRef: { env: 'EMBED_KEY' }, ...overrides } as never, env(secrets));

  it('sends the exact body with a bearer key, sorts by index, normalises and reports usage', async () => {
    const embedder = adapter({ sendDimensions: true });
    assert.deepEqual(embedder.identity, { providerId: 'openai-embeddings', vendor: 'openai', accountId: 'default', authMode: 'api-key', model: 'text-embedding-3-small', dimensions: DIMS });
    const result = await embedder.embed(['first text', 'second one here']);
    const request = server.requests.at(-1)!;
    assert.equal(request.path, '/v1/embeddings');
    assert.equal(request.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual(request.body, { model: 'text-embedding-3-small', input: ['first text', 'second one here'], encoding_format: 'float', dimensions: DIMS });
    assert.deepEqual(result.vectors, [expected('first text', 0), expected('second one here', 1)]);
    assert.deepEqual(result.usage, { inputTokens: 5 });
    await adapter().embed(['x']);
    assert.equal('dimensions' in server.requests.at(-1)!.body, false);
    await embedder.close();
  });

  it('maps every failure to its code', async () => {
    const embedder = adapter();
    await rejectsWith(adapter({}, {}).embed(['x']), 'AUTH_REQUIRED');
    await rejectsWith(adapter({}, { EMBED_KEY: 'wrong' }).embed(['x']), 'EMBEDDING_AUTH_REJECTED', false);
    server.next.push({ status: 403, body: { error: { message: 'forbidden' } } });
    await rejectsWith(embedder.embed(['x']), 'EMBEDDING_AUTH_REJECTED');
    server.next.push({ status: 429, body: { error: { message: 'slow down' } } });
    await rejectsWith(embedder.embed(['x']), 'RATE_LIMITED', true);
    server.next.push({ status: 500, body: { error: { message: 'boom' } } });
    await rejectsWith(embedder.embed(['x']), 'EMBEDDING_HTTP_ERROR', true);
    server.next.push({ status: 400, body: { error: { message: 'bad' } } });
    await rejectsWith(embedder.embed(['x']), 'EMBEDDING_HTTP_ERROR', false);
    server.next.push({ status: 302, body: {} });
    await rejectsWith(embedder.embed(['x']), 'EMBEDDING_HTTP_ERROR');
    const malformed: unknown[] = [
      'not json',
      { object: 'dict', data: [] },
      { object: 'list', data: [] },
      { object: 'list', data: [{ index: 1, embedding: [1, 2, 3, 4] }] },
      { object: 'list', data: [{ index: 0, embedding: [1, 2, 3] }] },
      { object: 'list', data: [{ index: 0, embedding: [0, 0, 0, 0] }] },
      { object: 'list', data: [{ index: 0, embedding: [1, 'x', 3, 4] }] },
      { object: 'list', data: [{ index: 0, embedding: 'AAAA' }] },
    ];
    for (const body of malformed) {
      server.next.push(typeof body === 'string' ? { raw: body } : { body });
      await rejectsWith(embedder.embed(['x']), 'INVALID_EMBEDDING');
    }
    server.next.push({ body: { object: 'list', data: [{ index: 0, embedding: [1, 0, 0, 0] }, { index: 0, embedding: [1, 0, 0, 0] }] } });
    await rejectsWith(embedder.embed(['x', 'y']), 'INVALID_EMBEDDING');
    server.next.push({ drop: true });
    await rejectsWith(embedder.embed(['x']), 'EMBEDDING_FAILED');
    // Plain HTTP only on loopback; the constructor refuses it before any key is read.
    assert.throws(() => createEmbeddingAdapter({ kind: 'openai', model: 'm', dimensions: 4, baseUrl: 'http://192.0.2.1/v1/', apiKeyRef: { env: 'K' } }, env({})), { code: 'INSECURE_TRANSPORT' });
    assert.throws(() => createEmbeddingAdapter({ kind: 'openai', model: 'm', dimensions: 4 }, env({})), { code: 'INVALID_CONFIG' });
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('caller left'));
    await assert.rejects(adapter().embed(['x'], controller.signal), /caller left/);
  });
});

describe('OpenAI-compatible embeddings (vLLM, llama.cpp, Ollama)', () => {
  it('needs no key on loopback and sends no authorization', async () => {
    const server = await startEmbeddingServer('openai', { dimensions: DIMS });
    try {
      const embedder = createEmbeddingAdapter({ kind: 'openai-compatible', id: 'local-embed', model: 'nomic-embed-text', dimensions: DIMS, baseUrl: server.url }, env({}));
      assert.deepEqual(embedder.identity, { providerId: 'local-embed', vendor: 'openai-compatible', accountId: 'default', authMode: 'none', model: 'nomic-embed-text', dimensions: DIMS });
      const result = await embedder.embed(['a', 'bb', 'ccc']);
      assert.equal(server.requests[0]!.headers.authorization, undefined);
      assert.deepEqual(result.vectors, [expected('a', 0), expected('bb', 1), expected('ccc', 2)]);
      assert.throws(() => createEmbeddingAdapter({ kind: 'openai-compatible', model: 'm', dimensions: 4 }, env({})), { code: 'INVALID_CONFIG' });
      await embedder.close();
    } finally {
      await server.close();
    }
  });
});

describe('Gemini embeddings', () => {
  let server: EmbeddingServer;
  before(async () => {
    server = await startEmbeddingServer('gemini', { apiKey: KEY, dimensions: DIMS });
  });
  after(() => server.close());
  const adapter = (overrides: Record<string, unknown> = {}, secrets: Record<string, string> = { EMBED_KEY: KEY }) =>
    createEmbeddingAdapter({ kind: 'gemini', model: 'gemini-embedding-001', dimensions: DIMS, baseUrl: server.url, apiKeyRef: { env: 'EMBED_KEY' }, ...overrides } as never, env(secrets));

  it('sends batchEmbedContents with x-goog-api-key and reads the vectors in order', async () => {
    const embedder = adapter({ sendDimensions: true });
    assert.equal(embedder.identity.vendor, 'google');
    const result = await embedder.embed(['alpha', 'beta gamma']);
    const request = server.requests.at(-1)!;
    assert.equal(request.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(request.headers['x-goog-api-key'], KEY);
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(request.body, {
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'alpha' }] }, outputDimensionality: DIMS },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'beta gamma' }] }, outputDimensionality: DIMS },
      ],
    });
    assert.deepEqual(result.vectors, [expected('alpha', 0), expected('beta gamma', 1)]);
    assert.equal(result.usage, undefined);
  });

  it('maps every failure to its code', async () => {
    const embedder = adapter();
    await rejectsWith(adapter({}, {}).embed(['x']), 'AUTH_REQUIRED');
    await rejectsWith(adapter({}, { EMBED_KEY: 'wrong' }).embed(['x']), 'EMBEDDING_AUTH_REJECTED');
    server.next.push({ status: 429, body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED' } } });
    await rejectsWith(embedder.embed(['x']), 'RATE_LIMITED', true);
    server.next.push({ status: 503, body: { error: { code: 503 } } });
    await rejectsWith(embedder.embed(['x']), 'EMBEDDING_HTTP_ERROR', true);
    for (const body of [{}, { embeddings: [] }, { embeddings: [{ values: [1, 2] }] }, { embeddings: [{}] }, { embeddings: [{ values: [0, 0, 0, 0] }] }]) {
      server.next.push({ body });
      await rejectsWith(embedder.embed(['x']), 'INVALID_EMBEDDING');
    }
    server.next.push({ drop: true });
    await rejectsWith(embedder.embed(['x']), 'EMBEDDING_FAILED');
    assert.throws(() => createEmbeddingAdapter({ kind: 'gemini', model: 'm', dimensions: 4 }, env({})), { code: 'INVALID_CONFIG' });
  });
});
