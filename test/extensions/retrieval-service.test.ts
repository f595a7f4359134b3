/**
 * The retrieval service in process, on both store engines: the frozen index descriptor
 * (INDEX_INCOMPATIBLE before any embedding call), unchanged re-index without embedding, one usage
 * record per embedding call (never text), authorization before parsing, and the ingestion idle
 * timeout with nothing written.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DriverError } from '../../src/protocol/errors.js';
import { RetrievalService } from '../../src/extensions/retrieval/service.js';
import type { EmbeddingAdapter } from '../../src/extensions/retrieval/types.js';
import { builtinEmbedder } from '../../src/providers/embeddings/index.js';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import type { RetrievalIndexStore, StateStore } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../support/stores.js';

const DIMENSIONS = 16;

/** Hashes each word into one of 16 dimensions: similar texts get similar vectors. Counts its calls. */
function hashingEmbedder(): EmbeddingAdapter & { calls: number; texts: number } {
  const adapter = {
    calls: 0,
    texts: 0,
    identity: { providerId: 'hashing', vendor: 'test', authMode: 'none' as const, model: 'word-hash', dimensions: DIMENSIONS },
    async embed(texts: string[]) {
      adapter.calls += 1;
      adapter.texts += texts.length;
      const vectors = texts.map((text) => {
        const vector = new Float32Array(DIMENSIONS);
        for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) vector[createHash('sha256').update(word).digest()[0]! % DIMENSIONS]! += 1;
        return vector;
      });
      return { vectors, usage: { inputTokens: texts.join(' ').split(/\s+/).length } };
    },
  };
  return adapter;
}

const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as DriverError;
  }
  assert.fail('expected a rejection');
};

for (const engine of ENGINES) {
  describe(`retrieval service (${engine})`, () => {
    let store: StateStore;
    let index: RetrievalIndexStore;
    before(async () => {
      store = await openTestStore(engine);
      index = store.retrieval;
    });
    after(async () => store.close());

    const source = { id: 'manual', revision: '1' };
    const chunks = Array.from({ length: 5 }, (_, n) => ({ id: `manual-${n}`, text: `Step ${n}: turn the valve number ${n} clockwise.` }));

    it('embeds in batches with one usage record each, re-indexes unchanged without embedding, and fuses rankings (hybrid)', async () => {
      const embedder = hashingEmbedder();
      const records: UsageRecord[] = [];
      const service = new RetrievalService({
        store: index,
        corpora: [{ id: 'hybrid', embedding: embedder }],
        embeddingBatch: { maxTexts: 2, maxBytes: 65_536 },
        usage: { hostId: 'host-1', record: async (record) => void records.push(record) },
      });
      const first = await service.index({ corpus: 'hybrid', source, chunks }, { subject: 'ada' });
      assert.equal(first.status, 'indexed');
      assert.equal(embedder.calls, 3);
      assert.deepEqual(records.map((record) => [record.operation, record.purpose, record.status]), [
        ['embedding', 'index', 'completed'],
        ['embedding', 'index', 'completed'],
        ['embedding', 'index', 'completed'],
      ]);
      const again = await service.index({ corpus: 'hybrid', source, chunks }, { subject: 'ada' });
      assert.equal(again.status, 'unchanged');
      assert.equal(embedder.calls, 3, 'an unchanged re-index embeds nothing');
      assert.equal(records.length, 3);

      const runId = '0b7f8f6e-9c1a-4d2b-8f1e-2a3b4c5d6e7f';
      const found = await service.search({ corpus: 'hybrid', query: 'valve number 3', limit: 2 }, { subject: 'ada', runId, signal: new AbortController().signal });
      assert.equal(found.index.metric, 'cosine');
      assert.equal(found.index.ranking, 'hybrid');
      assert.equal(found.index.dimensions, DIMENSIONS);
      assert.equal(found.hits[0]!.chunkId, 'manual-3');
      assert.ok(found.hits.every((hit) => hit.score > 0 && hit.score <= 1));
      assert.equal(records.at(-1)!.purpose, 'query');
      assert.equal(records.at(-1)!.parentRunId, runId);
      assert.ok(!JSON.stringify(records).includes('valve'), 'usage records carry no text');
    });

    it('keeps built-in vectors for a corpus without an embedder, ranks it by full-text relevance and meters nothing', async () => {
      const records: UsageRecord[] = [];
      const service = new RetrievalService({ store: index, corpora: [{ id: 'plain' }], usage: { hostId: 'host-1', record: async (record) => void records.push(record) } });
      assert.equal((await service.index({ corpus: 'plain', source, chunks }, { subject: 'ada' })).status, 'indexed');
      const found = await service.search({ corpus: 'plain', query: 'valve number 3' }, { subject: 'ada' });
      assert.equal(found.index.ranking, 'bm25');
      assert.equal(found.index.dimensions, 256);
      // The vectors are there: the store's cosine search over them finds the same passage.
      const [vector] = (await builtinEmbedder().embed(['valve number 3'])).vectors;
      const scope = { corpus: 'plain', namespace: 'shared', sources: { [source.id]: source.revision } };
      const byVector = await index.searchVector(scope, vector!, 5);
      assert.equal(byVector.length, chunks.length);
      assert.equal(byVector[0]!.chunk.chunkId, found.hits[0]!.chunkId);
      assert.deepEqual(records, [], 'the built-in embedder makes no metered call');
    });

    it('refuses an embedder whose identity no index descriptor can carry', () => {
      for (const identity of [
        { providerId: 'has space', vendor: 'test', authMode: 'none' as const, model: 'm', dimensions: 8 },
        { providerId: 'ok', vendor: 'test', accountId: '', authMode: 'none' as const, model: 'm', dimensions: 8 },
        { providerId: 'ok', vendor: 'test', authMode: 'none' as const, model: 'model[1m]', dimensions: 8 },
        { providerId: 'ok', vendor: 'test', authMode: 'none' as const, model: 'm', dimensions: 5000 },
      ]) {
        const embedding: EmbeddingAdapter = { identity, embed: async () => ({ vectors: [] }) };
        assert.throws(() => new RetrievalService({ store: index, corpora: [{ id: 'odd', embedding }] }), { code: 'INVALID_CONFIG' }, JSON.stringify(identity));
      }
    });

    it('freezes the index descriptor: another embedder for the corpus is INDEX_INCOMPATIBLE before any embedding call', async () => {
      const lexical = new RetrievalService({ store: index, corpora: [{ id: 'frozen' }] });
      assert.equal((await lexical.index({ corpus: 'frozen', source, chunks }, { subject: 'ada' })).status, 'indexed');
      const embedder = hashingEmbedder();
      const hybrid = new RetrievalService({ store: index, corpora: [{ id: 'frozen', embedding: embedder }] });
      const refused = await rejection(hybrid.index({ corpus: 'frozen', source: { id: 'other', revision: '1' }, chunks }, { subject: 'ada' }));
      assert.equal(refused.code, 'INDEX_INCOMPATIBLE');
      assert.equal((await rejection(hybrid.search({ corpus: 'frozen', query: 'valve' }, { subject: 'ada' }))).code, 'INDEX_INCOMPATIBLE');
      assert.equal(embedder.calls, 0);
    });

    it('authorizes ingestion before parsing, and ends a stalled ingestion with IDLE_TIMEOUT writing nothing', async () => {
      let parsed = 0;
      const denied = new RetrievalService({
        store: index,
        corpora: [{ id: 'ingest' }],
        authorize: () => null,
        prepare: async () => {
          parsed += 1;
          throw new Error('never reached');
        },
      });
      const document = { type: 'text' as const, mediaType: 'text/plain' as const, source: { id: 'slow', revision: '1' }, text: 'hello' };
      assert.equal((await rejection(denied.ingest({ corpus: 'ingest', document }, { subject: 'ada' }))).code, 'CONTEXT_NOT_FOUND');
      assert.equal(parsed, 0);

      const stalled = new RetrievalService({ store: index, corpora: [{ id: 'ingest' }], prepare: () => new Promise(() => undefined) });
      const timedOut = await rejection(stalled.ingest({ corpus: 'ingest', document, idleTimeoutMs: 30 }, { subject: 'ada' }));
      assert.equal(timedOut.code, 'IDLE_TIMEOUT');
      assert.deepEqual(await index.documents('ingest', 'shared'), []);
    });

    it('checks embedder answers: a zero vector is INVALID_EMBEDDING and the source stays as it was', async () => {
      const broken: EmbeddingAdapter = {
        identity: { providerId: 'zero', vendor: 'test', authMode: 'none', model: 'zero', dimensions: DIMENSIONS },
        embed: async (texts) => ({ vectors: texts.map(() => new Float32Array(DIMENSIONS)) }),
      };
      const service = new RetrievalService({ store: index, corpora: [{ id: 'zero', embedding: broken }] });
      assert.equal((await rejection(service.index({ corpus: 'zero', source, chunks }, { subject: 'ada' }))).code, 'INVALID_EMBEDDING');
      assert.deepEqual(await index.documents('zero', 'shared'), []);
    });
  });
}
