/**
 * Retrieval and ingestion rules of a streamed result (wire-core §3; src/protocol/rules.ts, shared
 * with the Python, Go and Rust clients): each broken rule is an INVALID_STREAM naming the rule,
 * over real loopback HTTP.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AgenticClient, DriverError, type RunRequest } from '../../src/client/index.js';

type Json = Record<string, any>;

const SHA = 'd'.repeat(64);
const TIME = '2026-09-20T12:00:00.000Z';

function hit(index: number, text = `Solar batteries retain energy ${index}.`): Json {
  return {
    chunkId: `paper-c${index}`,
    source: { id: 'paper', revision: 'r1', location: { documentId: 'paper', page: 1 } },
    text,
    score: 0.5,
    documentSha256: SHA,
  };
}

function manifestOf(entry: Json): Json {
  return {
    id: entry.chunkId,
    revision: entry.source.revision,
    location: { documentId: entry.source.id, page: 1 },
    mediaType: 'text/plain',
    bytes: Buffer.byteLength(entry.text, 'utf8'),
    sha256: SHA,
    origin: 'retrieval',
  };
}

function pdfIngestion(): Json {
  return {
    format: 'pdf',
    inputSha256: SHA,
    inputBytes: 200,
    extractor: { id: 'pdf-fixture', version: '1' },
    chunker: { id: 'source-lines-v1', maxBytes: 2048 },
    extractedTextBytes: 30,
    indexedTextBytes: 30,
    chunks: 1,
    pages: { total: 2, ocr: [], empty: [1] },
  };
}

function emailIngestion(): Json {
  const { pages: _pages, ...rest } = pdfIngestion();
  return { ...rest, format: 'email', extractor: { id: 'email-fixture', version: '1' }, messages: { total: 1, empty: 0 } };
}

function resultWith(hits: Json[]): Json {
  return {
    runId: 'run',
    provider: 'mock',
    model: 'demo',
    text: 'ok',
    usage: {},
    steps: 1,
    finishReason: 'stop',
    retrieval: {
      corpus: 'library',
      index: { providerId: 'embedding-one', vendor: 'fixture', accountId: 'research', authMode: 'none', model: 'lexical-hash-v1', dimensions: 64, metric: 'cosine', version: 'v1' },
      hits,
      truncated: false,
    },
    sources: hits.map(manifestOf),
  };
}

const RETRIEVAL_REQUEST: RunRequest = { provider: 'mock', model: 'demo', input: 'Hello', retrieval: { corpus: 'library', query: 'solar' } };

describe('retrieval and ingestion rules of a result', () => {
  let server: Server;
  let url: string;
  let nextResult: Json;

  before(async () => {
    server = createServer((request, response) => {
      request.resume();
      const events = [
        { type: 'run.started', runId: 'run', sequence: 1, timestamp: TIME, provider: 'mock', model: 'demo' },
        { type: 'run.completed', runId: 'run', sequence: 2, timestamp: TIME, result: nextResult },
      ];
      response.writeHead(200, { 'Content-Type': 'text/event-stream', 'AgenticDriver-Version': '1.0' });
      response.end(events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function outcome(result: Json, request: RunRequest = RETRIEVAL_REQUEST): Promise<string> {
    nextResult = result;
    try {
      await new AgenticClient({ url, token: 'token' }).run(request);
      return 'accepted';
    } catch (error) {
      assert.ok(error instanceof DriverError, String(error));
      return `${error.code}: ${error.message}`;
    }
  }

  /** The rule (src/protocol/rules.ts) a refusal must name. */
  const broke = (rule: string) => new RegExp(`\\[${rule.replaceAll('.', '\\.')}\\]`);

  async function rejected(result: Json, because: RegExp, request?: RunRequest): Promise<void> {
    const answer = await outcome(result, request);
    assert.match(answer, /^INVALID_STREAM: /);
    assert.match(answer, because);
  }

  it('accepts a consistent result', async () => {
    assert.equal(await outcome(resultWith([hit(1), { ...hit(2), ingestion: pdfIngestion() }, { ...hit(3), ingestion: emailIngestion() }])), 'accepted');
  });

  it('allows 8 hits by default and the requested limit otherwise', async () => {
    const nine = Array.from({ length: 9 }, (_, index) => hit(index));
    assert.equal(await outcome(resultWith(nine.slice(0, 8))), 'accepted');
    await rejected(resultWith(nine), broke('retrieval.limit'));
    assert.equal(await outcome(resultWith(nine), { ...RETRIEVAL_REQUEST, retrieval: { corpus: 'library', limit: 9 } }), 'accepted');
    await rejected(resultWith(nine.slice(0, 3)), broke('retrieval.limit'), { ...RETRIEVAL_REQUEST, retrieval: { corpus: 'library', limit: 2 } });
  });

  it('caps hit text at 65,536 UTF-8 bytes by default and at maxContextBytes otherwise', async () => {
    const big = (index: number) => hit(index, 'x'.repeat(16_384));
    assert.equal(await outcome(resultWith([1, 2, 3, 4].map(big))), 'accepted');
    await rejected(resultWith([1, 2, 3, 4, 5].map(big)), broke('retrieval.maxContextBytes'));
    // Counted in UTF-8 bytes, not characters: 4 bytes for each of these 2 characters.
    await rejected(resultWith([hit(1, '🌍🌍')]), broke('retrieval.maxContextBytes'), { ...RETRIEVAL_REQUEST, retrieval: { corpus: 'library', maxContextBytes: 7 } });
  });

  it('links every hit to exactly one retrieval manifest with its byte count and document', async () => {
    const base = resultWith([hit(1), hit(2)]);
    await rejected({ ...base, sources: [base.sources[0], { ...base.sources[1], bytes: base.sources[1].bytes + 1 }] }, broke('result.hitManifestBytes'));
    await rejected({ ...base, sources: [base.sources[0], { ...base.sources[1], location: { documentId: 'other' } }] }, broke('result.hitManifestDocument'));
    await rejected({ ...base, sources: [base.sources[0]] }, broke('result.retrievalManifests'));
    await rejected({ ...base, sources: [...base.sources, { ...base.sources[1], id: 'paper-extra' }] }, broke('result.retrievalManifests'));
    const { retrieval: _retrieval, ...noRetrieval } = base;
    await rejected(noRetrieval, broke('result.retrievalUnasked'), { provider: 'mock', model: 'demo', input: 'Hello' });
  });

  it('requires page coverage for a PDF and message coverage for an email', async () => {
    const { pages: _pages, ...pdfWithoutPages } = pdfIngestion();
    await rejected(resultWith([{ ...hit(1), ingestion: pdfWithoutPages }]), broke('ingestion.pagesForPdf'));
    const { messages: _messages, ...emailWithoutMessages } = emailIngestion();
    await rejected(resultWith([{ ...hit(1), ingestion: emailWithoutMessages }]), broke('ingestion.messagesForEmail'));
    await rejected(resultWith([{ ...hit(1), ingestion: { ...emailIngestion(), messages: { total: 3, empty: 0 } } }]), broke('ingestion.messages.chunks'));
  });

  it('requires indexed text and names the OCR extractor exactly when pages were OCRed', async () => {
    await rejected(resultWith([{ ...hit(1), ingestion: { ...pdfIngestion(), indexedTextBytes: 0 } }]), broke('ingestion.indexedText'));
    const ocrExtractor = { id: 'ocr-fixture', version: '1' };
    assert.equal(await outcome(resultWith([{ ...hit(1), ingestion: { ...pdfIngestion(), pages: { total: 2, ocr: [2], empty: [1] }, ocrExtractor } }])), 'accepted');
    await rejected(resultWith([{ ...hit(1), ingestion: { ...pdfIngestion(), ocrExtractor } }]), broke('ingestion.ocrExtractor'));
    await rejected(resultWith([{ ...hit(1), ingestion: { ...emailIngestion(), ocrExtractor } }]), broke('ingestion.ocrExtractor'));
  });

  it('refuses a page or line range end without its start', async () => {
    const entry = hit(1);
    entry.source.location = { documentId: 'paper', pageEnd: 2 };
    await rejected(resultWith([entry]), broke('location.pageRange'));
  });
});
