/**
 * Retrieval search, source index/delete, document ingestion and the citation check in
 * AgenticClient, over a real loopback HTTP server that answers each endpoint with a scripted
 * body: every answer rule fails a bad answer with INVALID_RESPONSE and passes a good one.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgenticClient, checkCitations, DriverError, type RunResult } from '../../src/client/index.js';
import { statusForCode } from '../../src/protocol/errors.js';

type Json = Record<string, any>;

const SHA = 'a'.repeat(64);
const answers = new Map<string, unknown>();
const seen: { path: string; body: Json; authorization: string | undefined }[] = [];
let server: Server;
let url: string;

before(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      seen.push({ path, body: JSON.parse(body || '{}'), authorization: request.headers.authorization });
      if (answers.has(path)) json(response, 200, answers.get(path));
      else json(response, 404, { error: { code: 'NOT_FOUND', message: 'no route', retryable: false } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  answers.clear();
  seen.length = 0;
});

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json', 'AgenticDriver-Version': '1.0' });
  response.end(JSON.stringify(value));
}

const client = () => new AgenticClient({ url, token: 'test-token' });

async function codeOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof DriverError, `expected a DriverError, got ${String(error)}`);
    return error.code;
  }
  assert.fail('the call succeeded');
}

const manifest = (overrides: Json = {}): Json => ({
  format: 'markdown',
  inputSha256: SHA,
  inputBytes: 40,
  extractor: { id: 'markdown', version: '1' },
  chunker: { id: 'source-lines-v1', maxBytes: 2048 },
  extractedTextBytes: 30,
  indexedTextBytes: 30,
  chunks: 2,
  ...overrides,
});

const hit = (chunkId: string, sourceId: string, text: string, score = 0.5): Json => ({
  chunkId,
  source: { id: sourceId, revision: 'r1', location: { documentId: sourceId } },
  text,
  score,
  documentSha256: SHA,
});

/** The host's built-in vector index, ranked by full-text relevance (an additive field). */
const INDEX = { providerId: 'builtin', vendor: 'agenticdriver', accountId: 'local', authMode: 'none', model: 'word-hash-v1', dimensions: 256, metric: 'cosine', version: '1', ranking: 'bm25' };
const { ranking: _, ...INDEX_1_0 } = INDEX;

const searchAnswer = (overrides: Json = {}): Json => ({
  corpus: 'docs',
  index: INDEX,
  hits: [hit('c1', 'guide', 'Install with npm.'), hit('c2', 'faq', 'Ask the operator.', 0.2)],
  truncated: false,
  ...overrides,
});

describe('searchRetrieval', () => {
  it('returns a consistent answer and posts the request with the bearer', async () => {
    answers.set('/v1/retrieval/search', searchAnswer());
    const result = await client().searchRetrieval({ corpus: 'docs', query: 'install' });
    assert.deepEqual(result.hits.map((h) => h.chunkId), ['c1', 'c2']);
    assert.deepEqual(seen[0], { path: '/v1/retrieval/search', body: { corpus: 'docs', query: 'install' }, authorization: 'Bearer test-token' });
  });

  const bad: [string, Json, Json][] = [
    ['another corpus', { corpus: 'docs', query: 'q' }, searchAnswer({ corpus: 'other' })],
    ['more hits than the limit', { corpus: 'docs', query: 'q', limit: 1 }, searchAnswer()],
    ['more than 8 hits by default', { corpus: 'docs', query: 'q' }, searchAnswer({ hits: Array.from({ length: 9 }, (_, i) => hit(`c${i}`, 'guide', 'x')) })],
    ['a chunk twice', { corpus: 'docs', query: 'q' }, searchAnswer({ hits: [hit('c1', 'guide', 'a'), hit('c1', 'guide', 'b')] })],
    ['a source outside sourceIds', { corpus: 'docs', query: 'q', sourceIds: ['guide'] }, searchAnswer()],
    ['a score below minScore', { corpus: 'docs', query: 'q', minScore: 0.3 }, searchAnswer()],
    ['more text than maxContextBytes', { corpus: 'docs', query: 'q', maxContextBytes: 20 }, searchAnswer()],
    ['more than 65,536 bytes by default', { corpus: 'docs', query: 'q' }, searchAnswer({ hits: Array.from({ length: 5 }, (_, i) => hit(`c${i}`, 'guide', 'é'.repeat(8000))) })],
    ['an invalid answer', { corpus: 'docs', query: 'q' }, { corpus: 'docs' }],
    ['a metric other than cosine', { corpus: 'docs', query: 'q' }, searchAnswer({ index: { ...INDEX, metric: 'bm25' } })],
    ['an index without dimensions', { corpus: 'docs', query: 'q' }, searchAnswer({ index: { ...INDEX, dimensions: undefined } })],
    ['an index without accountId', { corpus: 'docs', query: 'q' }, searchAnswer({ index: { ...INDEX, accountId: undefined } })],
    ['an unknown ranking', { corpus: 'docs', query: 'q' }, searchAnswer({ index: { ...INDEX, ranking: 'tfidf' } })],
  ];
  for (const [name, request, answer] of bad) {
    it(`refuses an answer with ${name}`, async () => {
      answers.set('/v1/retrieval/search', answer);
      assert.equal(await codeOf(() => client().searchRetrieval(request as never)), 'INVALID_RESPONSE');
    });
  }

  it('accepts an index descriptor without ranking (a 1.0 host that ranks by cosine)', async () => {
    answers.set('/v1/retrieval/search', searchAnswer({ index: INDEX_1_0 }));
    const result = await client().searchRetrieval({ corpus: 'docs', query: 'install' });
    assert.equal(result.index.ranking, undefined);
    assert.equal(result.index.metric, 'cosine');
  });

  it('accepts hits exactly at the bounds', async () => {
    answers.set('/v1/retrieval/search', searchAnswer());
    const bytes = Buffer.byteLength('Install with npm.Ask the operator.');
    const result = await client().searchRetrieval({ corpus: 'docs', query: 'q', limit: 2, sourceIds: ['guide', 'faq'], minScore: 0.2, maxContextBytes: bytes });
    assert.equal(result.hits.length, 2);
  });

  it('refuses an invalid request before sending', async () => {
    assert.equal(await codeOf(() => client().searchRetrieval({ corpus: 'docs', query: '   ' })), 'INVALID_RETRIEVAL');
    assert.equal(seen.length, 0);
  });
});

describe('indexSource and deleteSource', () => {
  const request = { corpus: 'docs', source: { id: 'guide', revision: 'r1' }, chunks: [{ id: 'c1', text: 'Install with npm.' }] };
  const receipt = (overrides: Json = {}): Json => ({ corpus: 'docs', sourceId: 'guide', revision: 'r1', documentSha256: SHA, chunks: 1, status: 'indexed', ...overrides });

  it('returns a receipt that echoes the source', async () => {
    answers.set('/v1/retrieval/index', receipt());
    assert.equal((await client().indexSource(request)).status, 'indexed');
    assert.deepEqual(seen[0]!.body, request);
  });

  for (const [name, overrides] of [
    ['corpus', { corpus: 'other' }],
    ['source', { sourceId: 'other' }],
    ['revision', { revision: 'r2' }],
    ['manifest chunk count', { ingestion: manifest({ chunks: 3 }) }],
  ] as const) {
    it(`refuses an index receipt with another ${name}`, async () => {
      answers.set('/v1/retrieval/index', receipt(overrides));
      assert.equal(await codeOf(() => client().indexSource(request)), 'INVALID_RESPONSE');
    });
  }

  it('deletes a source revision and checks the receipt', async () => {
    answers.set('/v1/retrieval/delete', { corpus: 'docs', sourceId: 'guide', revision: 'r1', deleted: true });
    assert.equal((await client().deleteSource({ corpus: 'docs', sourceId: 'guide', revision: 'r1' })).deleted, true);
    assert.deepEqual(seen[0]!.body, { corpus: 'docs', sourceId: 'guide', revision: 'r1' });
    answers.set('/v1/retrieval/delete', { corpus: 'docs', sourceId: 'guide', revision: 'r0', deleted: true });
    assert.equal(await codeOf(() => client().deleteSource({ corpus: 'docs', sourceId: 'guide', revision: 'r1' })), 'INVALID_RESPONSE');
    assert.equal(await codeOf(() => client().deleteSource({ corpus: 'docs', sourceId: 'bad id', revision: 'r1' })), 'INVALID_RETRIEVAL');
  });
});

describe('ingestDocument', () => {
  const request = { corpus: 'docs', document: { type: 'text', source: { id: 'guide', revision: 'r1' }, mediaType: 'text/markdown', text: '# Guide\n\nInstall.' } } as const;
  const receipt = (overrides: Json = {}): Json => ({ corpus: 'docs', sourceId: 'guide', revision: 'r1', documentSha256: SHA, chunks: 2, status: 'indexed', ingestion: manifest(), ...overrides });

  it('returns a receipt with its ingestion manifest', async () => {
    answers.set('/v1/retrieval/ingest', receipt());
    assert.equal((await client().ingestDocument(request)).ingestion.chunks, 2);
  });

  for (const [name, answer] of [
    ['no manifest', (({ ingestion: _, ...rest }) => rest)(receipt())],
    ['another source', receipt({ sourceId: 'other' })],
    ['another corpus', receipt({ corpus: 'other' })],
    ['another revision', receipt({ revision: 'r2' })],
    ['chunks the manifest does not count', receipt({ chunks: 3 })],
    ['an inconsistent manifest', receipt({ ingestion: manifest({ indexedTextBytes: 31 }) })],
  ] as const) {
    it(`refuses a receipt with ${name}`, async () => {
      answers.set('/v1/retrieval/ingest', answer);
      assert.equal(await codeOf(() => client().ingestDocument(request)), 'INVALID_RESPONSE');
    });
  }

  it('refuses an invalid document before sending', async () => {
    assert.equal(await codeOf(() => client().ingestDocument({ corpus: 'docs', document: { ...request.document, text: '' } })), 'INVALID_INGESTION');
    assert.equal(seen.length, 0);
  });
});

describe('checkCitations', () => {
  const source = (id: string): Json => ({ id, revision: 'r1', mediaType: 'text/markdown', bytes: 10, sha256: SHA, origin: 'retrieval' });
  const result = (text: string, extra: Json = {}) =>
    ({ runId: '00000000-0000-4000-8000-000000000001', provider: 'mock', model: 'demo', text, usage: {}, steps: 1, finishReason: 'stop', sources: [source('c1'), source('p-2.b:x')], ...extra }) as unknown as RunResult;

  it('returns the cited sources once each, in order of first citation', () => {
    const cited = checkCitations(result('See [source:p-2.b:x] and [source:c1], again [source:p-2.b:x].'));
    assert.deepEqual(cited.map((s) => s.id), ['p-2.b:x', 'c1']);
  });

  it('returns nothing for text without citations', () => {
    assert.deepEqual(checkCitations(result('No citations [source] here.')), []);
  });

  it('reads artifact contents after the text', () => {
    const artifacts = [{ name: 'a.md', mediaType: 'text/markdown', id: '00000000-0000-4000-8000-000000000009', status: 'draft', content: 'From [source:c1].', sha256: SHA, sourceIds: ['c1'] }];
    assert.deepEqual(checkCitations(result('Text.', { artifacts })).map((s) => s.id), ['c1']);
    assert.throws(() => checkCitations(result('Text.', { artifacts: [{ ...artifacts[0], content: '[source:zz]' }] })), { code: 'INVALID_CITATION' });
  });

  for (const text of ['[source:nope]', '[source:c1] and [source:nope]', '[source:', '[source:]', '[source:c1', '[source:c 1]', '[source:-c1]', `[source:${'a'.repeat(129)}]`]) {
    it(`refuses ${JSON.stringify(text.slice(0, 30))}`, () => {
      assert.throws(() => checkCitations(result(text)), (error: unknown) => error instanceof DriverError && error.code === 'INVALID_CITATION' && statusForCode(error.code) === 400 && !error.retryable);
    });
  }

  it('refuses a citation when the result lists no sources', () => {
    assert.throws(() => checkCitations({ ...result('[source:c1]'), sources: undefined }), { code: 'INVALID_CITATION' });
  });
});
