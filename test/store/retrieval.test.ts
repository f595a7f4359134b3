/**
 * The retrieval index on every store engine: lexical ranking by BM25 (checked against its
 * definition), scope (namespace, exact revisions) applied before ranking, atomic replace under
 * concurrent searches, conflicts and capacity, hostile queries, exact cosine search and abort.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DriverError } from '../../src/protocol/errors.js';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import type { SqlEngine } from '../../src/store/sql/engine.js';
import { SqlStateStore } from '../../src/store/sql/sql-store.js';
import { DEFAULT_RETRIEVAL_CAPACITY, type RetrievalCapacity } from '../../src/store/retrieval-capacity.js';
import { RetrievalTable } from '../../src/store/sql/tables/retrieval.js';
import { queryTerms, textTerms } from '../../src/store/sql/text-terms.js';
import { openSqliteEngine, openSqliteStore, SQLITE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import type { IndexedChunk, IndexedDocument, RetrievalIndexStore, RetrievalScope, StateStore } from '../../src/store/store.js';
import { freshDatabase } from '../support/postgres.js';
import { ENGINES, type Engine, openTestStore } from '../support/stores.js';
import { tempDir } from '../support/temp.js';

const DESCRIPTOR = JSON.stringify({ engine: 'lexical', version: '1' });

function doc(sourceId: string, revision: string, texts: string[], digest = `${sourceId}@${revision}:${texts.join('|').length}`): { document: IndexedDocument; chunks: IndexedChunk[] } {
  const chunks = texts.map((text, ordinal) => chunk(sourceId, revision, `${sourceId}#${ordinal}`, ordinal, text));
  return {
    document: { sourceId, revision, digest, source: { id: sourceId, revision, title: sourceId }, chunks: chunks.length, bytes: texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) },
    chunks,
  };
}

function chunk(sourceId: string, revision: string, chunkId: string, ordinal: number, text: string, vector?: number[]): IndexedChunk {
  return { chunkId, sourceId, revision, ordinal, text, location: { documentId: sourceId, chunk: ordinal } as IndexedChunk['location'], ...(vector ? { vector: unit(vector) } : {}) };
}

/** A deterministic pseudo-random stream (mulberry32). */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** BM25 from its definition (k1 1.2, b 0.75, Lucene's idf), over every chunk, normalised by Σ idf × (k1 + 1). */
function referenceBm25(corpus: { id: string; text: string }[], query: string): { id: string; score: number }[] {
  const analysed = corpus.map((entry) => ({ id: entry.id, terms: textTerms(entry.text) }));
  const average = analysed.reduce((sum, entry) => sum + entry.terms.length, 0) / analysed.length;
  const weights = queryTerms(query, 64).map((term) => {
    const df = analysed.filter((entry) => entry.terms.includes(term)).length;
    return { term, weight: Math.log(1 + (analysed.length - df + 0.5) / (df + 0.5)) * 2.2 };
  });
  const best = weights.reduce((sum, entry) => sum + entry.weight, 0);
  return analysed
    .map((entry) => {
      const k = 1.2 * (1 - 0.75 + (0.75 * entry.terms.length) / average);
      const score = weights.reduce((sum, { term, weight }) => {
        const tf = entry.terms.filter((candidate) => candidate === term).length;
        return sum + (weight * tf) / (tf + k);
      }, 0);
      return { id: entry.id, score: score / best };
    })
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

function unit(values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (value) => value / norm);
}

function scope(sources: Record<string, string>, namespace = 'tenant-a', corpus = 'docs'): RetrievalScope {
  return { corpus, namespace, sources };
}

async function openWithCapacity(engine: Engine, capacity: RetrievalCapacity): Promise<StateStore> {
  if (engine === 'sqlite') return SqlStateStore.open(openSqliteEngine(join(tempDir('agenticdriver-retrieval-'), SQLITE_FILE)), Date.now, { retrievalCapacity: capacity });
  const database = await freshDatabase();
  const store = await SqlStateStore.open(await PostgresEngine.connect(database.url), Date.now, { retrievalCapacity: capacity });
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await database.drop();
  };
  return store;
}

/** Two stores on one database: two SQLite connections to one file, or two PostgreSQL pools. */
async function sharedDatabase(engine: Engine): Promise<{ open(): Promise<{ store: StateStore; engine: SqlEngine }> }> {
  if (engine === 'sqlite') {
    const file = join(tempDir('agenticdriver-retrieval-'), SQLITE_FILE);
    return {
      open: async () => {
        const sql = openSqliteEngine(file);
        return { store: await SqlStateStore.open(sql), engine: sql };
      },
    };
  }
  const database = await freshDatabase();
  let open = 0;
  return {
    open: async () => {
      const sql = await PostgresEngine.connect(database.url);
      const store = await SqlStateStore.open(sql);
      open += 1;
      const close = store.close.bind(store);
      store.close = async () => {
        await close();
        open -= 1;
        if (open === 0) await database.drop();
      };
      return { store, engine: sql };
    },
  };
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: { code?: string }) => {
    assert.equal(error.code, code);
    return true;
  });
}

for (const engine of ENGINES) {
  describe(`retrieval index (${engine})`, () => {
    let store: StateStore;
    before(async () => {
      store = await openTestStore(engine);
      await store.retrieval.ensureIndex({ corpus: 'docs', descriptor: DESCRIPTOR });
      const { retrieval } = store;
      const manual = doc('manual', 'r1', [
        'The boiler must be serviced every spring by a certified technician.',
        'Replace the water filter when the indicator light turns red.',
        'Thermostat batteries last about two years under normal use.',
      ]);
      await retrieval.replace('docs', 'tenant-a', manual.document, manual.chunks, null);
      const faq = doc('faq', 'v7', ['Questions about billing go to the accounts team.', 'Filters are sold in packs of three.']);
      await retrieval.replace('docs', 'tenant-a', faq.document, faq.chunks, null);
      const secret = doc('secret', 'r1', ['The boiler serial number for the other tenant is classified.']);
      await retrieval.replace('docs', 'tenant-b', secret.document, secret.chunks, null);
    });
    after(async () => {
      await store.close();
    });

    it('finds the chunk that matches best first, with the document and a score in (0, 1]', async () => {
      const hits = await store.retrieval.searchLexical(scope({ manual: 'r1', faq: 'v7' }), 'when should the water filter be replaced?', 8);
      assert.ok(hits.length >= 1);
      assert.equal(hits[0]!.chunk.chunkId, 'manual#1');
      assert.equal(hits[0]!.rank, 1);
      assert.equal(hits[0]!.document.sourceId, 'manual');
      assert.equal(hits[0]!.document.revision, 'r1');
      assert.equal(hits[0]!.chunk.revision, 'r1');
      assert.deepEqual(hits[0]!.chunk.location, { documentId: 'manual', chunk: 1 });
      for (const hit of hits) assert.ok(hit.score > 0 && hit.score <= 1, `score ${hit.score}`);
      for (let index = 1; index < hits.length; index += 1) assert.ok(hits[index - 1]!.score >= hits[index]!.score);
      // Stemming: "filters" finds "filter".
      const stemmed = await store.retrieval.searchLexical(scope({ manual: 'r1', faq: 'v7' }), 'filters', 8);
      assert.deepEqual(stemmed.map((hit) => hit.chunk.chunkId).sort(), ['faq#1', 'manual#1']);
      const limited = await store.retrieval.searchLexical(scope({ manual: 'r1', faq: 'v7' }), 'filters', 1);
      assert.equal(limited.length, 1);
    });

    it('ranks by BM25 exactly as computed from the definition, with the namespace\'s statistics, on a large index', async () => {
      // 12 sources × 50 chunks of a small vocabulary (a few words in nearly every chunk), in a
      // namespace of their own; another namespace's chunks must not change the statistics.
      const next = seeded(31);
      const words = Array.from({ length: 60 }, (_, index) => `word${String.fromCharCode(97 + (index % 26))}${String.fromCharCode(97 + Math.floor(index / 26))}`);
      const pick = () => words[Math.min(words.length - 1, Math.floor(words.length * next() ** 2.5))]!;
      const corpus: { id: string; text: string }[] = [];
      for (let source = 0; source < 12; source += 1) {
        const texts = Array.from({ length: 50 }, () => Array.from({ length: 4 + Math.floor(next() * 30) }, pick).join(' '));
        const { document, chunks } = doc(`big${source}`, 'r1', texts);
        await store.retrieval.replace('bm25', 'mine', document, chunks, null);
        chunks.forEach((entry) => corpus.push({ id: entry.chunkId, text: entry.text }));
      }
      const walrus = doc('walrus', 'r1', [`${words[0]} ${words[1]}`, `${words[0]} ${words[2]} ${words[3]} walruses ${words[4]}`]);
      await store.retrieval.replace('bm25', 'mine', walrus.document, walrus.chunks, null);
      walrus.chunks.forEach((entry) => corpus.push({ id: entry.chunkId, text: entry.text }));
      const other = doc('noise', 'r1', Array.from({ length: 40 }, () => words.slice(40).join(' ')));
      await store.retrieval.replace('bm25', 'theirs', other.document, other.chunks, null);
      const sources = { walrus: 'r1', ...Object.fromEntries(Array.from({ length: 12 }, (_, source) => [`big${source}`, 'r1'])) };
      for (let round = 0; round < 25; round += 1) {
        const query = Array.from({ length: 1 + Math.floor(next() * 4) }, pick).join(' ');
        const hits = await store.retrieval.searchLexical(scope(sources, 'mine', 'bm25'), query, 10);
        const expected = referenceBm25(corpus, query).slice(0, 10);
        assert.deepEqual(hits.map((hit) => hit.chunk.chunkId), expected.map((entry) => entry.id), query);
        hits.forEach((hit, index) => assert.ok(Math.abs(hit.score - expected[index]!.score) < 1e-9, `${query}: ${hit.score} vs ${expected[index]!.score}`));
      }
      // The chunk with a rare word scores far above the chunks that only share the common one.
      const [strong, weak] = await store.retrieval.searchLexical(scope(sources, 'mine', 'bm25'), `${words[0]} walruses`, 2);
      assert.equal(strong!.chunk.chunkId, 'walrus#1');
      assert.ok(strong!.score > 2 * weak!.score, `${strong!.score} vs ${weak!.score}`);
    });

    it('never shows another namespace, a source outside the scope or another revision', async () => {
      const mine = await store.retrieval.searchLexical(scope({ manual: 'r1', faq: 'v7', secret: 'r1' }), 'boiler serial classified', 16);
      assert.deepEqual(mine.map((hit) => hit.chunk.chunkId), ['manual#0']);
      const theirs = await store.retrieval.searchLexical(scope({ secret: 'r1' }, 'tenant-b'), 'boiler', 16);
      assert.deepEqual(theirs.map((hit) => hit.chunk.chunkId), ['secret#0']);
      assert.deepEqual(await store.retrieval.searchLexical(scope({ manual: 'r2' }), 'boiler', 16), []);
      assert.deepEqual(await store.retrieval.searchLexical(scope({ faq: 'v7' }), 'boiler', 16), []);
      assert.deepEqual(await store.retrieval.searchLexical(scope({}), 'boiler', 16), []);
      assert.deepEqual(await store.retrieval.searchLexical(scope({ manual: 'r1' }, 'tenant-a', 'other-corpus'), 'boiler', 16), []);
      const docs = await store.retrieval.documents('docs', 'tenant-a');
      assert.deepEqual(docs.map((document) => [document.sourceId, document.revision, document.chunks]), [['faq', 'v7', 2], ['manual', 'r1', 3]]);
      assert.deepEqual((await store.retrieval.documents('docs', 'tenant-a', ['manual', 'missing'])).map((document) => document.sourceId), ['manual']);
    });

    it('takes hostile queries as plain words and never throws', async () => {
      const everything = scope({ manual: 'r1', faq: 'v7' });
      const hostile = ['"', '""', '*', 'NEAR(', 'NEAR(boiler water, 2)', 'OR', 'AND NOT', '-', '-boiler', ':', 'text:boiler', '^boiler', 'boil*', "'; DROP TABLE retrieval_chunks; --", '!&|<->', 'ñandú Ωμέγα 水 🔥', '\u0000\u0301', ' '];
      for (const query of hostile) {
        const hits = await store.retrieval.searchLexical(everything, query, 8);
        assert.ok(Array.isArray(hits), query);
      }
      assert.deepEqual(await store.retrieval.searchLexical(everything, '"*:-', 8), []);
      const quoted = await store.retrieval.searchLexical(everything, '"boiler" OR (NEAR', 8);
      assert.equal(quoted[0]?.chunk.chunkId, 'manual#0');
      const long = 'boiler '.repeat(2400).slice(0, 16_384);
      assert.equal((await store.retrieval.searchLexical(everything, long, 8))[0]?.chunk.chunkId, 'manual#0');
      const varied = Array.from({ length: 3000 }, (_, index) => `w${index}`).join(' ');
      assert.deepEqual(await store.retrieval.searchLexical(everything, varied, 8), []);
    });

    it('replaces a source atomically: concurrent searches see the old set or the new, never a mix', async () => {
      const before = doc('atomic', 'r1', Array.from({ length: 20 }, (_, index) => `zebra stripes old generation ${index}`));
      await store.retrieval.replace('docs', 'tenant-a', before.document, before.chunks, null);
      let digest = before.document.digest;
      let replacing = true;
      const observed = new Set<string>();
      const searches = (async () => {
        let count = 0;
        while (replacing || count < 20) {
          const hits = await store.retrieval.searchLexical(scope({ atomic: 'r1' }), 'zebra stripes', 16);
          const generations = new Set(hits.map((hit) => hit.chunk.text.split(' ')[2]));
          assert.equal(hits.length, 16);
          assert.equal(generations.size, 1, `a mix of ${[...generations].join(', ')}`);
          observed.add([...generations][0]!);
          count += 1;
          // SQLite answers in microtasks: let the replacing loop's turn come.
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const moreSearches = (async () => {
        while (replacing) {
          const hits = await store.retrieval.searchLexical(scope({ atomic: 'r1' }), 'zebra', 16);
          assert.equal(new Set(hits.map((hit) => hit.chunk.text.split(' ')[2])).size, 1);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      try {
        for (let round = 0; round < 15; round += 1) {
          const generation = round % 2 === 0 ? 'new' : 'old';
          const next = doc('atomic', 'r1', Array.from({ length: 20 }, (_, index) => `zebra stripes ${generation} generation ${index}`), `digest-${round}`);
          await store.retrieval.replace('docs', 'tenant-a', next.document, next.chunks, digest);
          digest = next.document.digest;
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        replacing = false;
      }
      await Promise.all([searches, moreSearches]);
      assert.ok(observed.size >= 1);
    });

    it('refuses a stale digest (SOURCE_CONFLICT) and a chunk id of another source (CHUNK_CONFLICT), keeping the previous revision', async () => {
      const first = doc('guarded', 'r1', ['penguins waddle across the ice']);
      await store.retrieval.replace('docs', 'tenant-a', first.document, first.chunks, null);
      const second = doc('guarded', 'r2', ['penguins swim fast']);
      await rejectsWith(store.retrieval.replace('docs', 'tenant-a', second.document, second.chunks, null), 'SOURCE_CONFLICT');
      await rejectsWith(store.retrieval.replace('docs', 'tenant-a', second.document, second.chunks, 'wrong-digest'), 'SOURCE_CONFLICT');
      const thief = { document: { ...doc('thief', 'r1', ['x']).document }, chunks: [chunk('thief', 'r1', 'guarded#0', 0, 'penguins stolen')] };
      await rejectsWith(store.retrieval.replace('docs', 'tenant-a', thief.document, thief.chunks, null), 'CHUNK_CONFLICT');
      // The same chunk id in another namespace is another chunk.
      await store.retrieval.replace('docs', 'tenant-b', thief.document, thief.chunks, null);
      const hits = await store.retrieval.searchLexical(scope({ guarded: 'r1', thief: 'r1' }), 'penguins', 8);
      assert.deepEqual(hits.map((hit) => [hit.chunk.chunkId, hit.chunk.text]), [['guarded#0', 'penguins waddle across the ice']]);
      await store.retrieval.replace('docs', 'tenant-a', second.document, second.chunks, first.document.digest);
      assert.deepEqual((await store.retrieval.searchLexical(scope({ guarded: 'r2' }), 'penguins', 8)).map((hit) => hit.chunk.text), ['penguins swim fast']);
    });

    it('deletes only at the stored revision', async () => {
      const target = doc('doomed', 'r3', ['walruses sleep on beaches']);
      await store.retrieval.replace('docs', 'tenant-a', target.document, target.chunks, null);
      await rejectsWith(store.retrieval.delete('docs', 'tenant-a', 'doomed', 'r2'), 'SOURCE_CONFLICT');
      assert.equal(await store.retrieval.delete('docs', 'tenant-b', 'doomed', 'r3'), false);
      assert.equal(await store.retrieval.delete('docs', 'tenant-a', 'doomed', 'r3'), true);
      assert.equal(await store.retrieval.delete('docs', 'tenant-a', 'doomed', 'r3'), false);
      assert.deepEqual(await store.retrieval.searchLexical(scope({ doomed: 'r3' }), 'walruses', 8), []);
      assert.deepEqual(await store.retrieval.documents('docs', 'tenant-a', ['doomed']), []);
      // Its chunk ids are free again.
      const reuse = { document: doc('heir', 'r1', ['x']).document, chunks: [chunk('heir', 'r1', 'doomed#0', 0, 'walruses again')] };
      await store.retrieval.replace('docs', 'tenant-a', reuse.document, reuse.chunks, null);
    });

    it('freezes the descriptor of a corpus (INDEX_INCOMPATIBLE)', async () => {
      await store.retrieval.ensureIndex({ corpus: 'docs', descriptor: DESCRIPTOR });
      await rejectsWith(store.retrieval.ensureIndex({ corpus: 'docs', descriptor: JSON.stringify({ engine: 'lexical', version: '2' }) }), 'INDEX_INCOMPATIBLE');
      await store.retrieval.ensureIndex({ corpus: 'another', descriptor: JSON.stringify({ engine: 'lexical', version: '2' }) });
    });

    it('ranks by exact cosine in the scope, ties by chunk id, and stops when aborted', async () => {
      await store.retrieval.ensureIndex({ corpus: 'vectors', descriptor: DESCRIPTOR });
      const chunks = [
        chunk('v1', 'r1', 'b-same', 0, 'same direction b', [1, 0, 0]),
        chunk('v1', 'r1', 'a-same', 1, 'same direction a', [2, 0, 0]),
        chunk('v1', 'r1', 'c-near', 2, 'near', [1, 1, 0]),
        chunk('v1', 'r1', 'd-opposite', 3, 'opposite', [-1, 0, 0]),
      ];
      const document: IndexedDocument = { sourceId: 'v1', revision: 'r1', digest: 'd', source: { id: 'v1', revision: 'r1' }, chunks: 4, bytes: 10 };
      await store.retrieval.replace('vectors', 'n', document, chunks, null);
      const many = Array.from({ length: 1200 }, (_, index) => chunk('v2', 'r1', `bulk-${String(index).padStart(4, '0')}`, index, `bulk ${index}`, [0, Math.cos(index), Math.sin(index)]));
      await store.retrieval.replace('vectors', 'n', { ...document, sourceId: 'v2', chunks: many.length }, many, null);
      const hits = await store.retrieval.searchVector(scope({ v1: 'r1' }, 'n', 'vectors'), unit([1, 0, 0]), 3);
      assert.deepEqual(hits.map((hit) => hit.chunk.chunkId), ['a-same', 'b-same', 'c-near']);
      assert.deepEqual(hits.map((hit) => hit.rank), [1, 2, 3]);
      assert.ok(Math.abs(hits[0]!.score - 1) < 1e-6);
      assert.ok(Math.abs(hits[2]!.score - Math.SQRT1_2) < 1e-6);
      const all = await store.retrieval.searchVector(scope({ v1: 'r1' }, 'n', 'vectors'), unit([1, 0, 0]), 16);
      assert.equal(all.at(-1)!.chunk.chunkId, 'd-opposite');
      assert.ok(Math.abs(all.at(-1)!.score + 1) < 1e-6);
      // Across pages: the best of 1,204 chunks.
      const across = await store.retrieval.searchVector(scope({ v1: 'r1', v2: 'r1' }, 'n', 'vectors'), unit([0, 1, 0]), 2);
      assert.deepEqual(across.map((hit) => hit.chunk.chunkId), ['bulk-0000', 'bulk-0710']);
      assert.deepEqual(await store.retrieval.searchVector(scope({ v1: 'r2' }, 'n', 'vectors'), unit([1, 0, 0]), 3), []);
      const aborted = new AbortController();
      aborted.abort(new Error('stop'));
      await assert.rejects(store.retrieval.searchVector(scope({ v1: 'r1', v2: 'r1' }, 'n', 'vectors'), unit([1, 0, 0]), 3, aborted.signal), /stop/);
      const midway = new AbortController();
      const pending = store.retrieval.searchVector(scope({ v1: 'r1', v2: 'r1' }, 'n', 'vectors'), unit([1, 0, 0]), 3, midway.signal);
      midway.abort(new Error('stopped midway'));
      await assert.rejects(pending, /stopped midway/);
      // The store is still usable after an abort.
      assert.equal((await store.retrieval.searchVector(scope({ v1: 'r1' }, 'n', 'vectors'), unit([1, 0, 0]), 1))[0]!.chunk.chunkId, 'a-same');
    });
  });

  describe(`retrieval vector cache (${engine})`, () => {
    it("sees another store's replace and delete on the same database, and scans pages when the cache is too small", async () => {
      const state = await sharedDatabase(engine);
      const { store: writer } = await state.open();
      const { store: reader, engine: readerEngine } = await state.open();
      try {
        const uncached = new RetrievalTable(readerEngine, DEFAULT_RETRIEVAL_CAPACITY, 0);
        await writer.retrieval.ensureIndex({ corpus: 'docs', descriptor: DESCRIPTOR });
        const put = (revision: string, direction: number[], previous: string | null) =>
          writer.retrieval.replace('docs', 'n', { sourceId: 's', revision, digest: revision, source: { id: 's', revision }, chunks: 2, bytes: 2 }, [chunk('s', revision, `s-${revision}-a`, 0, 'a', direction), chunk('s', revision, `s-${revision}-b`, 1, 'b', [0, 0, 1])], previous);
        await put('r1', [1, 0, 0], null);
        const search = (table: RetrievalIndexStore, revision: string) => table.searchVector(scope({ s: revision }, 'n'), unit([1, 0, 0]), 1);
        assert.equal((await search(reader.retrieval, 'r1'))[0]!.chunk.chunkId, 's-r1-a');
        await put('r2', [-1, 0, 0], 'r1');
        // The reader's cached copy (generation of r1) must not answer for r2.
        for (const table of [reader.retrieval, uncached]) {
          const [best] = await search(table, 'r2');
          assert.equal(best!.chunk.chunkId, 's-r2-b');
          assert.ok(Math.abs(best!.score) < 1e-6);
          assert.deepEqual(await search(table, 'r1'), []);
        }
        assert.equal(await writer.retrieval.delete('docs', 'n', 's', 'r2'), true);
        assert.deepEqual(await search(reader.retrieval, 'r2'), []);
      } finally {
        await reader.close();
        await writer.close();
      }
    });
  });

  describe(`retrieval index capacity (${engine})`, () => {
    it('refuses past maxChunks or maxBytes (INDEX_FULL) and keeps the previous revision searchable', async () => {
      const store = await openWithCapacity(engine, { maxChunks: 4, maxBytes: 1000 });
      try {
        await store.retrieval.ensureIndex({ corpus: 'docs', descriptor: DESCRIPTOR });
        const first = doc('one', 'r1', ['otters hold hands', 'otters sleep']);
        await store.retrieval.replace('docs', 'n', first.document, first.chunks, null);
        const other = doc('two', 'r1', ['beavers build dams']);
        await store.retrieval.replace('docs', 'n', other.document, other.chunks, null);
        const bigger = doc('one', 'r2', ['otters a', 'otters b', 'otters c', 'otters d']);
        await rejectsWith(store.retrieval.replace('docs', 'n', bigger.document, bigger.chunks, first.document.digest), 'INDEX_FULL');
        const heavy = doc('one', 'r2', ['otters '.repeat(200)]);
        await rejectsWith(store.retrieval.replace('docs', 'n', heavy.document, heavy.chunks, first.document.digest), 'INDEX_FULL');
        assert.equal((await store.retrieval.searchLexical(scope({ one: 'r1' }, 'n'), 'otters', 8)).length, 2);
        // Replacing counts the new revision instead of the old one.
        const same = doc('one', 'r2', ['otters a', 'otters b', 'otters c']);
        await store.retrieval.replace('docs', 'n', same.document, same.chunks, first.document.digest);
        assert.equal((await store.retrieval.searchLexical(scope({ one: 'r2' }, 'n'), 'otters', 8)).length, 3);
      } finally {
        await store.close();
      }
    });

    it("holds each subject to its share (RESOURCE_LIMIT) and each corpus to its own (INDEX_FULL) while others go on indexing", async () => {
      const store = await openWithCapacity(engine, {
        maxChunks: 100,
        maxBytes: 100_000,
        perSubject: { maxChunks: 3, maxBytes: 100_000 },
        perCorpus: { small: { maxChunks: 4, maxBytes: 100_000 } },
      });
      try {
        for (const corpus of ['docs', 'small']) await store.retrieval.ensureIndex({ corpus, descriptor: DESCRIPTOR });
        const a1 = doc('a1', 'r1', ['alpha one', 'alpha two']);
        await store.retrieval.replace('docs', 'shared', a1.document, a1.chunks, null, 'alice');
        // Alice's share counts across corpora and namespaces.
        const a2 = doc('a2', 'r1', ['alpha three', 'alpha four']);
        await assert.rejects(store.retrieval.replace('small', 'subject:alice', a2.document, a2.chunks, null, 'alice'), (error: DriverError) => {
          assert.equal(error.code, 'RESOURCE_LIMIT');
          assert.match(error.message, /2 of 3 chunks/);
          return error.retryable === false;
        });
        // Bob indexes as before, in the same corpus and namespace.
        const b1 = doc('b1', 'r1', ['beta one', 'beta two', 'beta three']);
        await store.retrieval.replace('docs', 'shared', b1.document, b1.chunks, null, 'bob');
        // Replacing her own document counts the new revision, not both.
        const a1next = doc('a1', 'r2', ['alpha one', 'alpha two', 'alpha five']);
        await store.retrieval.replace('docs', 'shared', a1next.document, a1next.chunks, a1.document.digest, 'alice');
        // The corpus share: carol and dave fit alone, not together in `small`.
        const c1 = doc('c1', 'r1', ['gamma one', 'gamma two', 'gamma three']);
        await store.retrieval.replace('small', 'shared', c1.document, c1.chunks, null, 'carol');
        const d1 = doc('d1', 'r1', ['delta one', 'delta two']);
        await assert.rejects(store.retrieval.replace('small', 'shared', d1.document, d1.chunks, null, 'dave'), { code: 'INDEX_FULL', message: /corpus small/ });
        await store.retrieval.replace('docs', 'shared', d1.document, d1.chunks, null, 'dave');
        // Deleting frees the share.
        assert.equal(await store.retrieval.delete('docs', 'shared', 'a1', 'r2'), true);
        await store.retrieval.replace('docs', 'subject:alice', a2.document, a2.chunks, null, 'alice');
        assert.equal((await store.retrieval.searchLexical(scope({ b1: 'r1', d1: 'r1' }, 'shared'), 'beta delta', 8)).length, 5);
      } finally {
        await store.close();
      }
    });
  });
}

describe('retrieval index on a SQLite file', () => {
  it('keeps corpora, documents, chunks, vectors and the full-text index across a reopen', async () => {
    const directory = tempDir('agenticdriver-retrieval-');
    const first = await openSqliteStore(directory);
    await first.retrieval.ensureIndex({ corpus: 'docs', descriptor: DESCRIPTOR });
    const chunks = [chunk('kept', 'r1', 'kept#0', 0, 'lighthouses guide ships at night', [0, 1])];
    await first.retrieval.replace('docs', 'n', { sourceId: 'kept', revision: 'r1', digest: 'd1', source: { id: 'kept', revision: 'r1', title: 'Kept' }, chunks: 1, bytes: 32 }, chunks, null);
    await first.close();
    const second = await openSqliteStore(directory);
    try {
      await rejectsWith(second.retrieval.ensureIndex({ corpus: 'docs', descriptor: '{}' }), 'INDEX_INCOMPATIBLE');
      const lexical = await second.retrieval.searchLexical(scope({ kept: 'r1' }, 'n'), 'lighthouse', 8);
      assert.equal(lexical[0]?.chunk.chunkId, 'kept#0');
      assert.equal(lexical[0]?.document.source.title, 'Kept');
      const vector = await second.retrieval.searchVector(scope({ kept: 'r1' }, 'n'), unit([0, 1]), 8);
      assert.ok(Math.abs(vector[0]!.score - 1) < 1e-6);
    } finally {
      await second.close();
    }
  });
});
