/**
 * The local embedding model kind with a real model from the package registry (all-MiniLM-L6-v2,
 * int8 ONNX, test/support/local-model.ts): config, loading from a directory, vectors that put a
 * question next to its paraphrased answer, truncation of long texts, token counts, abort, and
 * the errors for a directory without its files; a grounded corpus over it, and `init` offering it.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { createEmbeddingAdapter, EmbeddingConfig, localModelRuntimeInstalled, normalizeVector } from '../../../src/providers/embeddings/index.js';
import { initConfig } from '../../../src/cli/init.js';
import { RetrievalService } from '../../../src/extensions/retrieval/service.js';
import { LOCAL_MODEL, localModelFixture, type LocalModelFixture } from '../../support/local-model.js';
import { openTestStore } from '../../support/stores.js';
import { tempDir } from '../../support/temp.js';

const env = { readSecret: async () => '' };
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index]!, 0);

describe('local embedding model', () => {
  let fixture: LocalModelFixture;
  before(() => {
    fixture = localModelFixture();
  });
  after(() => fixture.remove());

  const config = (overrides: Record<string, unknown> = {}) => ({ kind: 'local', model: LOCAL_MODEL.name, dimensions: LOCAL_MODEL.dimensions, path: fixture.directory, ...overrides }) as never;

  it('is a strict config kind of its own', () => {
    assert.ok(Value.Check(EmbeddingConfig, { kind: 'local', model: 'all-MiniLM-L6-v2', dimensions: 384, path: 'models/minilm', maxTokens: 128, pooling: 'cls', threads: 1 }));
    assert.ok(!Value.Check(EmbeddingConfig, { kind: 'local', model: 'm', dimensions: 384 }), 'path is required');
    assert.ok(!Value.Check(EmbeddingConfig, { kind: 'local', model: 'm', dimensions: 384, path: 'p', baseUrl: 'http://127.0.0.1' }), 'HTTP fields are not local ones');
    assert.ok(!Value.Check(EmbeddingConfig, { kind: 'openai', model: 'm', dimensions: 384, path: 'p' }), 'nor the other way round');
    assert.ok(localModelRuntimeInstalled());
  });

  it('embeds in process from the directory: a question lands next to its paraphrased answer', async () => {
    const embedder = createEmbeddingAdapter(config(), env);
    try {
      assert.deepEqual(embedder.identity, { providerId: 'local-embeddings', vendor: 'local', accountId: 'default', authMode: 'none', model: LOCAL_MODEL.name, dimensions: LOCAL_MODEL.dimensions });
      const { vectors, usage } = await embedder.embed([
        'Where do I put the certificate so the server speaks HTTPS?',
        'To encrypt connections, give the listener a TLS certificate and its private key.',
        'Expense reports are due on the first Monday of each month.',
      ]);
      const [question, answer, other] = vectors.map((vector) => normalizeVector(vector, LOCAL_MODEL.dimensions));
      assert.ok(dot(question!, answer!) > dot(question!, other!) + 0.2, `${dot(question!, answer!)} vs ${dot(question!, other!)}`);
      assert.ok(usage!.inputTokens > 30 && usage!.inputTokens < 80, String(usage!.inputTokens));
    } finally {
      await embedder.close();
    }
  });

  it('cuts a long text to maxTokens, embeds the same text alike in any batch, and stops when aborted', async () => {
    const embedder = createEmbeddingAdapter(config({ maxTokens: 32, threads: 1 }), env);
    try {
      const long = 'The lighthouse keeper trims the lamp at dusk. '.repeat(400);
      const single = await embedder.embed([long]);
      assert.equal(single.usage!.inputTokens, 32);
      const batch = await embedder.embed(['short text', long]);
      assert.ok(dot(normalizeVector(single.vectors[0]!, 384), normalizeVector(batch.vectors[1]!, 384)) > 0.999);
      const controller = new AbortController();
      controller.abort(new Error('caller left'));
      await assert.rejects(embedder.embed(['x'], controller.signal), /caller left/);
    } finally {
      await embedder.close();
    }
  });

  it('grounds a corpus: a paraphrase with no word in common finds its passage by fused ranking', async () => {
    const store = await openTestStore('sqlite');
    const service = new RetrievalService({ store: store.retrieval, corpora: [{ id: 'handbook', embedding: createEmbeddingAdapter(config(), env) }] });
    try {
      const passages = [
        'To serve HTTPS, configure TLS on the gateway with a certificate and its private key.',
        'Expense reports are due on the first Monday of each month.',
        'Parents may take up to fourteen months of parental leave.',
      ];
      await service.index({ corpus: 'handbook', source: { id: 'handbook', revision: '1' }, chunks: passages.map((text, n) => ({ id: `p${n}`, text })) }, { subject: 'ada' });
      const found = await service.search({ corpus: 'handbook', query: 'How can I make the web server use encryption?', limit: 1 }, { subject: 'ada' });
      assert.equal(found.hits[0]!.chunkId, 'p0');
      assert.deepEqual(found.index, {
        providerId: 'local-embeddings', vendor: 'local', accountId: 'default', authMode: 'none', model: LOCAL_MODEL.name, dimensions: LOCAL_MODEL.dimensions, metric: 'cosine', version: '1', ranking: 'hybrid',
      });
    } finally {
      await service.close();
      await store.close();
    }
  });

  it('init offers it: the model named, or the only one under models/ beside the config; the built-in embedder otherwise', async () => {
    const named = join(tempDir('agenticdriver-init-'), 'config.json');
    const result = await initConfig(named, { embeddingModel: fixture.directory });
    assert.equal(result.embedder, `local (${basename(fixture.directory)})`);
    const corpus = (JSON.parse(readFileSync(named, 'utf8')) as { retrieval: { corpora: { embedding?: Record<string, unknown> }[] } }).retrieval.corpora[0]!;
    assert.deepEqual({ ...corpus.embedding, path: undefined }, { kind: 'local', model: basename(fixture.directory), dimensions: LOCAL_MODEL.dimensions, path: undefined });
    assert.equal(resolve(dirname(named), corpus.embedding!.path as string), fixture.directory);

    const beside = tempDir('agenticdriver-init-');
    mkdirSync(join(beside, 'models'));
    cpSync(fixture.directory, join(beside, 'models', 'all-MiniLM-L6-v2'), { recursive: true });
    assert.equal((await initConfig(join(beside, 'config.json'))).embedder, 'local (all-MiniLM-L6-v2)');
    assert.equal((await initConfig(join(tempDir('agenticdriver-init-'), 'config.json'))).embedder, 'builtin');
  });

  it('refuses a directory without its model or tokenizer (INVALID_CONFIG), relative to the config', () => {
    const empty = tempDir('agenticdriver-model-');
    assert.throws(() => createEmbeddingAdapter(config({ path: 'missing' }), env, empty), { code: 'INVALID_CONFIG' });
    mkdirSync(join(empty, 'onnx'));
    writeFileSync(join(empty, 'onnx', 'model.onnx'), 'not a model');
    assert.throws(() => createEmbeddingAdapter(config({ path: '.' }), env, empty), /tokenizer\.json/);
    writeFileSync(join(empty, 'tokenizer.json'), '{}');
    const broken = createEmbeddingAdapter(config({ path: '.' }), env, empty);
    return assert.rejects(broken.embed(['x']), { code: 'EMBEDDING_FAILED' });
  });
});
