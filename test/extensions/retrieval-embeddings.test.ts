/**
 * A corpus with an embedding provider from the host config, over HTTP, against a loopback
 * OpenAI-format embedding server, on both engines: one vendor call (and one usage record) per
 * index batch and per query, none for an unchanged re-index, hybrid search (the frozen
 * descriptor is tested in retrieval-service.test.ts).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { UsageRecord } from '../../src/runtime/usage-record.js';
import type { StateStore } from '../../src/store/store.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { ENGINES, openTestStore } from '../support/stores.js';
import { startEmbeddingServer, type EmbeddingServer } from '../vendors/embeddings.js';

const GRANTS = { search: ['hybrid'], index: ['hybrid'], delete: ['hybrid'] };
const tokens = [{ id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], retrieval: GRANTS }];

for (const engine of ENGINES) {
  describe(`retrieval with an embedding provider over HTTP (${engine})`, () => {
    let embedder: EmbeddingServer;
    let store: StateStore;
    let host: TestHost;
    const records: UsageRecord[] = [];

    before(async () => {
      embedder = await startEmbeddingServer('openai', { dimensions: 8 });
      store = await openTestStore(engine);
      host = await startTestHost(
        { retrieval: { corpora: [{ id: 'hybrid', embedding: { kind: 'openai-compatible', id: 'local-embed', model: 'nomic-embed-text', dimensions: 8, baseUrl: embedder.url } }] }, tokens },
        { store, onUsage: (record) => void records.push(record) },
      );
    });

    after(async () => {
      await host.close();
      await embedder.close();
      rmSync(host.dir, { recursive: true, force: true });
    });

    const post = async (path: string, body: unknown) => {
      const response = await host.post(path, body);
      return { status: response.status, body: (await response.json()) as any };
    };
    const source = { corpus: 'hybrid', source: { id: 'faq', revision: '1' }, chunks: Array.from({ length: 3 }, (_, n) => ({ id: `faq-${n}`, text: `Answer ${n}: the garden gate code is ${n}${n}${n}.` })) };

    it('embeds an index once, not again when unchanged, and fuses lexical and vector rankings', async () => {
      const indexed = await post('/v1/retrieval/index', source);
      assert.equal(indexed.status, 200, JSON.stringify(indexed.body));
      assert.equal(embedder.requests.length, 1);
      assert.equal(embedder.requests[0]!.body.model, 'nomic-embed-text');
      const again = await post('/v1/retrieval/index', source);
      assert.equal(again.body.status, 'unchanged');
      assert.equal(embedder.requests.length, 1, 'an unchanged re-index makes no embedding call');
      const found = await post('/v1/retrieval/search', { corpus: 'hybrid', query: 'garden gate code 222' });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.deepEqual(found.body.index, {
        providerId: 'local-embed', vendor: 'openai-compatible', accountId: 'default', authMode: 'none', model: 'nomic-embed-text', dimensions: 8, metric: 'cosine', version: '1', ranking: 'hybrid',
      });
      assert.equal(found.body.hits.length, 3);
      assert.ok(found.body.hits.every((hit: { score: number }) => hit.score > 0 && hit.score <= 1));
      assert.equal(embedder.requests.length, 2);
    });

    it('writes one usage record per embedding call, separate from the run, with its purpose and parent run', async () => {
      const run = await post('/v1/runs', { provider: 'mock', model: 'demo', input: 'garden gate code', retrieval: { corpus: 'hybrid', limit: 2 } });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      // The records reach the sinks once written; give the background delivery a moment.
      const arrived = () => records.filter((record) => record.operation === 'embedding').length >= 3 && records.some((record) => record.runId === run.body.runId);
      for (let waited = 0; !arrived() && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      const embeddings = records.filter((record) => record.operation === 'embedding');
      assert.deepEqual(embeddings.map((record) => record.purpose), ['index', 'query', 'query']);
      assert.ok(embeddings.every((record) => record.provider === 'local-embed' && record.model === 'nomic-embed-text' && record.status === 'completed'));
      assert.equal(embeddings[2]!.parentRunId, run.body.runId);
      const generation = records.find((record) => record.runId === run.body.runId)!;
      assert.equal(generation.operation, undefined);
      assert.ok(!JSON.stringify(records).includes('garden'), 'usage records carry no text');
    });
  });
}
