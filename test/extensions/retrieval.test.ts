/**
 * Scoped retrieval over HTTP on loopback, on both store engines: index → search → a run with
 * `retrieval` (grounded sources, run.progress context) → delete; grants per operation; unknown
 * corpus; revocation between read and completion; conflicts; bounds with their statuses.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { evaluateRules } from '../../src/protocol/rule-evaluator.js';
import { AgenticClient } from '../../src/client/index.js';
import type { RunRequest, RunResult } from '../../src/protocol/schemas.js';
import type { SourceGrant } from '../../src/extensions/retrieval/types.js';
import { parseSse, RESTRICTED_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { ENGINES, openTestStore } from '../support/stores.js';

const GRANTS = { search: ['docs', 'ghost', 'private'], index: ['docs', 'ghost', 'private'], delete: ['docs', 'ghost', 'private'] };

const handbook = {
  corpus: 'docs',
  source: { id: 'handbook', revision: 'r1', title: 'Handbook', uri: 'app://docs/handbook' },
  chunks: [
    { id: 'handbook-1', text: 'The office opens at nine and the kettle is in the north kitchen.', location: { startLine: 1, endLine: 1 } },
    { id: 'handbook-2', text: 'Expense reports are due on the first Monday of each month.', location: { startLine: 2, endLine: 2 } },
  ],
};

for (const engine of ENGINES) {
  describe(`scoped retrieval over HTTP (${engine})`, () => {
    let host: TestHost;
    /** When set, the in-process authorizer answers this instead of the config default. */
    let override: ((call: number) => SourceGrant | null) | undefined;
    let authorizations = 0;

    before(async () => {
      const store = await openTestStore(engine);
      host = await startTestHost(
        {
          retrieval: { corpora: [{ id: 'docs' }, { id: 'private', namespace: 'subject' }] },
          tokens: [
            { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], retrieval: GRANTS },
            { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'] },
            { id: 'other', subject: 'other-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock'], retrieval: GRANTS },
          ],
        },
        {
          store,
          authorizeRetrieval: async (request, context) => {
            authorizations += 1;
            if (override) return override(authorizations);
            // The config default, written out: what is indexed in the corpus's namespace.
            const namespace = request.corpus === 'private' ? `subject:${context.subject}` : 'shared';
            if (request.operation !== 'search') return { namespace, sources: Object.fromEntries((request.sourceIds ?? []).map((id) => [id, request.revision!])) };
            const documents = await store.retrieval.documents(request.corpus, namespace, request.sourceIds);
            return { namespace, sources: Object.fromEntries(documents.map((document) => [document.sourceId, document.revision])) };
          },
        },
      );
    });

    after(async () => {
      await host.close();
      rmSync(host.dir, { recursive: true, force: true });
    });

    const post = async (path: string, body: unknown, token?: string) => {
      const response = await host.post(path, body, token ? { authorization: `Bearer ${token}` } : {});
      return { status: response.status, body: (await response.json()) as any };
    };

    it('advertises scoped retrieval, indexing and ingestion features', async () => {
      const response = await fetch(`${host.url}/v1/protocol`, { headers: host.headers() });
      const features = ((await response.json()) as { features: string[] }).features;
      assert.ok(features.includes('scoped-retrieval'));
      assert.ok(features.includes('retrieval-indexing'));
      assert.ok(features.includes('document-ingestion'));
      assert.ok(features.includes('pdf-ingestion'));
    });

    it('indexes a source, then answers unchanged for the same content and SOURCE_CONFLICT for other content at the same revision', async () => {
      const indexed = await post('/v1/retrieval/index', handbook);
      assert.equal(indexed.status, 200, JSON.stringify(indexed.body));
      assert.equal(indexed.body.status, 'indexed');
      assert.deepEqual([indexed.body.corpus, indexed.body.sourceId, indexed.body.revision, indexed.body.chunks], ['docs', 'handbook', 'r1', 2]);
      assert.match(indexed.body.documentSha256, /^[0-9a-f]{64}$/);
      const again = await post('/v1/retrieval/index', handbook);
      assert.equal(again.body.status, 'unchanged');
      assert.equal(again.body.documentSha256, indexed.body.documentSha256);
      const changed = await post('/v1/retrieval/index', { ...handbook, chunks: [{ id: 'handbook-1', text: 'Something else entirely.' }] });
      assert.equal(changed.status, 409);
      assert.equal(changed.body.error.code, 'SOURCE_CONFLICT');
    });

    it('searches with provenance, a score in [-1, 1] and the byte budget', async () => {
      const found = await post('/v1/retrieval/search', { corpus: 'docs', query: 'when are expense reports due' });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      // A vector index as wire 1.0 defines it (the built-in embedder), ranked by full-text relevance.
      assert.deepEqual(found.body.index, {
        providerId: 'builtin', vendor: 'agenticdriver', accountId: 'local', authMode: 'none', model: 'word-hash-v1', dimensions: 256, metric: 'cosine', version: '1', ranking: 'bm25',
      });
      const [hit] = found.body.hits;
      assert.equal(hit.chunkId, 'handbook-2');
      assert.equal(hit.source.id, 'handbook');
      assert.equal(hit.source.revision, 'r1');
      assert.equal(hit.source.location.documentId, 'handbook');
      assert.equal(hit.source.location.startLine, 2);
      assert.ok(hit.score > 0 && hit.score <= 1);
      assert.equal(found.body.truncated, false);
      const tight = await post('/v1/retrieval/search', { corpus: 'docs', query: 'expense reports', maxContextBytes: 1 });
      assert.equal(tight.status, 200);
      assert.deepEqual(tight.body.hits, []);
      assert.equal(tight.body.truncated, true);
      const none = await post('/v1/retrieval/search', { corpus: 'docs', query: 'expense', minScore: 1 });
      assert.deepEqual(none.body.hits, []);
    });

    it('grounds a run on the passages it finds: run.progress context, retrieval sources, the mock cites them', async () => {
      const request: RunRequest = { provider: 'mock', model: 'demo', input: 'When are expense reports due?', retrieval: { corpus: 'docs', limit: 2 } };
      const response = await host.post('/v1/runs', request, { accept: 'text/event-stream' });
      assert.equal(response.status, 200);
      const events = parseSse(await response.text());
      const progress = events.findIndex((event) => event.type === 'run.progress' && event.phase === 'context');
      const firstStep = events.findIndex((event) => event.type === 'step.started');
      assert.ok(progress > 0 && progress < firstStep, 'run.progress context comes before generation');
      const completed = events.at(-1)!;
      assert.equal(completed.type, 'run.completed', JSON.stringify(completed));
      const result = completed.result as RunResult;
      assert.equal(evaluateRules('runResult', { answer: result, request, runId: result.runId }), undefined);
      const manifest = result.sources!.find((source) => source.id === 'handbook-2')!;
      assert.equal(manifest.origin, 'retrieval');
      assert.equal(manifest.location?.documentId, 'handbook');
      assert.match(result.text, /\[source:handbook-2\]/);
      assert.match(result.text, /first Monday/);
    });

    it('refuses a run without evidence (NO_RETRIEVAL_EVIDENCE) and more than 16 context inputs (INVALID_RETRIEVAL) before generation', async () => {
      const none = await post('/v1/runs', { provider: 'mock', model: 'demo', input: 'zebra quantum', retrieval: { corpus: 'docs' } });
      assert.equal(none.status, 400);
      assert.equal(none.body.error.code, 'NO_RETRIEVAL_EVIDENCE');
      const attachments = Array.from({ length: 9 }, (_, index) => ({ type: 'text', source: { id: `a${index}`, revision: '1' }, mediaType: 'text/plain', text: 'x' }));
      const crowded = await post('/v1/runs', { provider: 'mock', model: 'demo', input: 'expense', attachments, retrieval: { corpus: 'docs' } });
      assert.equal(crowded.status, 400);
      assert.equal(crowded.body.error.code, 'INVALID_RETRIEVAL');
    });

    it('checks the corpus grant per operation (403) and hides unknown corpora (404 CONTEXT_NOT_FOUND)', async () => {
      for (const [path, body] of [
        ['/v1/retrieval/search', { corpus: 'docs', query: 'expense' }],
        ['/v1/retrieval/index', handbook],
        ['/v1/retrieval/delete', { corpus: 'docs', sourceId: 'handbook', revision: 'r1' }],
        ['/v1/runs', { provider: 'mock', model: 'demo', input: 'expense', retrieval: { corpus: 'docs' } }],
      ] as const) {
        const refused = await post(path, body, RESTRICTED_TOKEN);
        assert.equal(refused.status, 403, path);
        assert.equal(refused.body.error.code, 'FORBIDDEN', path);
      }
      const ghost = await post('/v1/retrieval/search', { corpus: 'ghost', query: 'expense' });
      assert.equal(ghost.status, 404);
      assert.equal(ghost.body.error.code, 'CONTEXT_NOT_FOUND');
      const ghostIndex = await post('/v1/retrieval/index', { ...handbook, corpus: 'ghost' });
      assert.equal(ghostIndex.body.error.code, 'CONTEXT_NOT_FOUND');
    });

    it('keeps subject namespaces apart', async () => {
      const mine = await post('/v1/retrieval/index', { corpus: 'private', source: { id: 'diary', revision: '1' }, chunks: [{ id: 'diary-1', text: 'My secret recipe uses cardamom.' }] });
      assert.equal(mine.status, 200);
      const theirs = await post('/v1/retrieval/search', { corpus: 'private', query: 'cardamom recipe' }, 'other-token-0123456789abcdefghijklmnopq');
      assert.equal(theirs.status, 200);
      assert.deepEqual(theirs.body.hits, []);
      const own = await post('/v1/retrieval/search', { corpus: 'private', query: 'cardamom recipe' });
      assert.equal(own.body.hits[0].chunkId, 'diary-1');
    });

    it('answers CONTEXT_NOT_FOUND when authorization is revoked between the read and the answer', async () => {
      // The first authorization (before the read) allows; the re-check after the read does not.
      const start = authorizations;
      override = (call) => (call === start + 1 ? { namespace: 'shared', sources: { handbook: 'r1' } } : null);
      try {
        const revoked = await post('/v1/retrieval/search', { corpus: 'docs', query: 'expense reports' });
        assert.equal(revoked.status, 404);
        assert.equal(revoked.body.error.code, 'CONTEXT_NOT_FOUND');
      } finally {
        override = undefined;
      }
    });

    it('fails a run whose evidence is revoked during generation, before completion', async () => {
      let revoke = false;
      const input = script([{ stallMs: 300 }, { text: 'grounded answer' }]);
      override = () => (revoke ? null : { namespace: 'shared', sources: { handbook: 'r1' } });
      try {
        const running = post('/v1/runs', { provider: 'mock', model: 'demo', input, retrieval: { corpus: 'docs', query: 'expense reports' } });
        setTimeout(() => (revoke = true), 100);
        const failed = await running;
        assert.equal(failed.status, 404, JSON.stringify(failed.body));
        assert.equal(failed.body.error.code, 'CONTEXT_NOT_FOUND');
      } finally {
        override = undefined;
      }
    });

    it('refuses out-of-bound requests with INVALID_RETRIEVAL (400)', async () => {
      const cases: [string, unknown][] = [
        ['/v1/retrieval/search', { corpus: 'docs', query: 'x', limit: 17 }],
        ['/v1/retrieval/search', { corpus: 'docs', query: 'x', maxContextBytes: 262_145 }],
        ['/v1/retrieval/search', { corpus: 'docs', query: 'x'.repeat(16_385) }],
        ['/v1/retrieval/search', { corpus: 'docs', query: '   ' }],
        ['/v1/retrieval/search', { corpus: 'docs' }],
        ['/v1/retrieval/index', { ...handbook, chunks: Array.from({ length: 257 }, (_, index) => ({ id: `c${index}`, text: 'x' })) }],
        ['/v1/retrieval/index', { ...handbook, chunks: [{ id: 'c', text: 'x'.repeat(16_385) }] }],
        ['/v1/retrieval/index', { ...handbook, source: { id: 'two', revision: '1' }, chunks: [{ id: 'c', text: 'a' }, { id: 'c', text: 'b' }] }],
        ['/v1/retrieval/index', { ...handbook, source: { id: 'blank', revision: '1' }, chunks: [{ id: 'c', text: '   ' }] }],
        ['/v1/retrieval/index', { ...handbook, source: { id: 'elsewhere', revision: '1' }, chunks: [{ id: 'c', text: 'a', location: { documentId: 'other' } }] }],
        ['/v1/retrieval/delete', { corpus: 'docs', sourceId: 'handbook' }],
      ];
      for (const [path, body] of cases) {
        const refused = await post(path, body);
        assert.equal(refused.status, 400, `${path} ${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.error.code, 'INVALID_RETRIEVAL');
      }
    });

    it('ingests Markdown, an email thread and a PDF (with an empty page), and finds each with its manifest', async () => {
      const markdown = await post('/v1/retrieval/ingest', {
        corpus: 'docs',
        document: { type: 'text', mediaType: 'text/markdown', source: { id: 'guide', revision: '1' }, text: '# Intro\n\nWelcome aboard.\n\n## Parking\n\nThe garage closes at midnight.\n' },
      });
      assert.equal(markdown.status, 200, JSON.stringify(markdown.body));
      assert.equal(markdown.body.ingestion.format, 'markdown');
      assert.equal(markdown.body.ingestion.chunks, markdown.body.chunks);
      const email = await post('/v1/retrieval/ingest', {
        corpus: 'docs',
        document: { type: 'email', source: { id: 'thread', revision: '1' }, threadId: 't1', messages: [{ id: 'm1', text: 'Lunch is at noon on Fridays.' }, { id: 'm2', text: '' }] },
      });
      assert.equal(email.status, 200, JSON.stringify(email.body));
      assert.deepEqual(email.body.ingestion.messages, { total: 2, empty: 1 });
      const document = await PDFDocument.create();
      const font = await document.embedFont(StandardFonts.Helvetica);
      document.addPage([300, 200]).drawText('The printer is on floor two.', { x: 10, y: 150, size: 10, font });
      document.addPage([300, 200]);
      document.addPage([300, 200]).drawText('Toner sits in the supply cabinet.', { x: 10, y: 150, size: 10, font });
      const data = Buffer.from(await document.save()).toString('base64');
      const pdf = await post('/v1/retrieval/ingest', { corpus: 'docs', document: { type: 'pdf', mediaType: 'application/pdf', source: { id: 'printer', revision: '1' }, data } });
      assert.equal(pdf.status, 200, JSON.stringify(pdf.body));
      assert.deepEqual(pdf.body.ingestion.pages, { total: 3, ocr: [], empty: [2] });
      const repeat = await post('/v1/retrieval/ingest', { corpus: 'docs', document: { type: 'pdf', mediaType: 'application/pdf', source: { id: 'printer', revision: '1' }, data } });
      assert.equal(repeat.body.status, 'unchanged');

      const parking = await post('/v1/retrieval/search', { corpus: 'docs', query: 'when does the garage close' });
      assert.equal(parking.body.hits[0].source.id, 'guide');
      assert.equal(parking.body.hits[0].source.location.section, 'Parking');
      assert.equal(parking.body.hits[0].ingestion.inputSha256, markdown.body.ingestion.inputSha256);
      const lunch = await post('/v1/retrieval/search', { corpus: 'docs', query: 'lunch fridays' });
      assert.equal(lunch.body.hits[0].source.location.threadId, 't1');
      assert.equal(lunch.body.hits[0].source.location.messageId, 'm1');
      const toner = await post('/v1/retrieval/search', { corpus: 'docs', query: 'toner supply cabinet' });
      assert.equal(toner.body.hits[0].source.id, 'printer');
      assert.equal(toner.body.hits[0].source.location.page, 3);
    });

    it('takes an ingest body larger than the general body limit (a whole document), up to its own limit', async () => {
      const text = 'Line about the annual meeting in the great hall.\n'.repeat(22_000); // ~1.1 MB: over the 1 MB default
      const big = await post('/v1/retrieval/ingest', { corpus: 'docs', document: { type: 'text', mediaType: 'text/plain', source: { id: 'big', revision: '1' }, text: text.slice(0, 1_048_000) } });
      assert.notEqual(big.status, 413, JSON.stringify(big.body));
      const tooBig = await host.post('/v1/retrieval/ingest', JSON.stringify({ corpus: 'docs', pad: 'x'.repeat(13 * 1024 * 1024) }));
      assert.equal(tooBig.status, 413);
      const search = await host.post('/v1/retrieval/search', JSON.stringify({ corpus: 'docs', query: 'x', pad: 'x'.repeat(1_100_000) }));
      assert.equal(search.status, 413);
    });

    it('refuses ingestion without the index grant (403), of an unknown corpus (404) and of a broken PDF (400)', async () => {
      const text = { type: 'text', mediaType: 'text/plain', source: { id: 'n', revision: '1' }, text: 'hello' };
      const refused = await post('/v1/retrieval/ingest', { corpus: 'docs', document: text }, RESTRICTED_TOKEN);
      assert.equal(refused.status, 403);
      const ghost = await post('/v1/retrieval/ingest', { corpus: 'ghost', document: text });
      assert.equal(ghost.status, 404);
      assert.equal(ghost.body.error.code, 'CONTEXT_NOT_FOUND');
      const broken = await post('/v1/retrieval/ingest', { corpus: 'docs', document: { type: 'pdf', mediaType: 'application/pdf', source: { id: 'bad', revision: '1' }, data: Buffer.from('%PDF-1.7 broken').toString('base64') } });
      assert.equal(broken.status, 400, JSON.stringify(broken.body));
      const invalid = await post('/v1/retrieval/ingest', { corpus: 'docs', document: text, chunking: { maxBytes: 64 } });
      assert.equal(invalid.status, 400);
      assert.equal(invalid.body.error.code, 'INVALID_INGESTION');
    });

    it('replays a completed grounded run only while its evidence stands, and never a failed one', async () => {
      const source = (revision: string, text: string) => ({ corpus: 'docs', source: { id: 'policy', revision }, chunks: [{ id: `policy-${revision}`, text }] });
      assert.equal((await post('/v1/retrieval/index', source('1', 'Bicycles are parked in the courtyard rack.'))).status, 200);
      const request = { provider: 'mock', model: 'demo', input: 'Where are bicycles parked?', idempotencyKey: `rag-${engine}`, retrieval: { corpus: 'docs', sourceIds: ['policy'] } };
      const first = await post('/v1/runs', request);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const replay = await post('/v1/runs', request);
      assert.deepEqual(replay.body, first.body);
      assert.equal((await post('/v1/retrieval/index', source('2', 'Bicycles now go to the basement.'))).status, 200);
      const stale = await post('/v1/runs', request);
      assert.equal(stale.status, 404);
      assert.equal(stale.body.error.code, 'CONTEXT_NOT_FOUND');

      const failing = { provider: 'mock', model: 'demo', input: 'zebra quantum', idempotencyKey: `rag-failed-${engine}`, retrieval: { corpus: 'docs' } };
      assert.equal((await post('/v1/runs', failing)).body.error.code, 'NO_RETRIEVAL_EVIDENCE');
      const again = await post('/v1/runs', failing);
      assert.equal(again.status, 400);
      assert.equal(again.body.error.code, 'CONTEXT_REPLAY_UNAVAILABLE');
      assert.equal(again.body.error.outcome, 'uncertain');
    });

    it('round-trips through the TypeScript client with its answer checks', async () => {
      const client = new AgenticClient({ url: host.url, token: TOKEN });
      const receipt = await client.indexSource({ corpus: 'docs', source: { id: 'client-doc', revision: '1' }, chunks: [{ id: 'client-1', text: 'The library lends umbrellas on rainy days.' }] });
      assert.equal(receipt.status, 'indexed');
      const ingested = await client.ingestDocument({ corpus: 'docs', document: { type: 'text', mediaType: 'text/plain', source: { id: 'client-note', revision: '1' }, text: 'Umbrella returns go to the front desk.' } });
      assert.equal(ingested.ingestion.format, 'text');
      const found = await client.searchRetrieval({ corpus: 'docs', query: 'umbrella umbrellas', limit: 3 });
      assert.deepEqual(found.hits.map((hit) => hit.source.id).sort(), ['client-doc', 'client-note']);
      const result = await client.run({ provider: 'mock', model: 'demo', input: 'lends umbrellas', retrieval: { corpus: 'docs', sourceIds: ['client-doc'] } });
      assert.deepEqual(result.sources?.map((source) => source.id), ['client-1']);
      const deleted = await client.deleteSource({ corpus: 'docs', sourceId: 'client-doc', revision: '1' });
      assert.equal(deleted.deleted, true);
    });

    it('deletes a source at its revision: deleted, then not found, and it is no longer found', async () => {
      const stale = await post('/v1/retrieval/delete', { corpus: 'docs', sourceId: 'handbook', revision: 'r0' });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.error.code, 'SOURCE_CONFLICT');
      const deleted = await post('/v1/retrieval/delete', { corpus: 'docs', sourceId: 'handbook', revision: 'r1' });
      assert.deepEqual(deleted.body, { corpus: 'docs', sourceId: 'handbook', revision: 'r1', deleted: true });
      const again = await post('/v1/retrieval/delete', { corpus: 'docs', sourceId: 'handbook', revision: 'r1' });
      assert.equal(again.body.deleted, false);
      const gone = await post('/v1/retrieval/search', { corpus: 'docs', query: 'expense reports' });
      assert.deepEqual(gone.body.hits, []);
    });
  });
}
