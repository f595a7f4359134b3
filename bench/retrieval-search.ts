/**
 * Search latency of the retrieval index at 20,000 chunks (issue 18): lexical (BM25 in the store,
 * with its inverted index) and hybrid (lexical + exact cosine over 256-dim hash-embedder vectors,
 * fused as the service fuses them), on SQLite and — when a server URL is given — on
 * PostgreSQL. Every search is scoped to all 1,000 sources (the largest scope a call may carry).
 *
 *   npx tsx bench/retrieval-search.ts [--chunks N] [--queries N] [--json FILE]
 *   node scripts/postgres.mjs --run npx tsx bench/retrieval-search.ts   (adds PostgreSQL)
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { hybridFusion } from '../src/extensions/retrieval/fusion.js';
import { hashEmbedder } from '../src/providers/embeddings/index.js';
import { PostgresEngine } from '../src/store/postgres/postgres-engine.js';
import { SqlStateStore } from '../src/store/sql/sql-store.js';
import { openSqliteEngine, SQLITE_FILE } from '../src/store/sqlite/sqlite-store.js';
import type { IndexedChunk, RetrievalScope, StateStore } from '../src/store/store.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const index = args.indexOf(name);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const CHUNKS = option('--chunks', 20_000);
const QUERIES = option('--queries', 300);
const SOURCES = 1000;
const DIMENSIONS = 256;
const LIMIT = 8;
const jsonIndex = args.indexOf('--json');

/** A deterministic pseudo-random stream (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 8,000 made-up words, drawn with a Zipf-like skew (a few common, most rare), as prose is. */
const next = random(18);
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vel', 'or', 'pi', 'dan', 'qui', 'est', 'mon', 'ar', 'li', 'nex', 'ter', 'bo', 'cha', 'fu'];
const VOCABULARY = Array.from({ length: 8000 }, (_, index) => {
  let word = '';
  for (let count = 2 + (index % 3); count > 0; count -= 1) word += SYLLABLES[Math.floor(next() * SYLLABLES.length)];
  return `${word}${index % 7 === 0 ? 's' : ''}`;
});
const zipf = () => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(Math.exp(next() * Math.log(VOCABULARY.length))) - 1)]!;
function sentence(words: number): string {
  const out = Array.from({ length: words }, zipf);
  out[0] = out[0]!.charAt(0).toUpperCase() + out[0]!.slice(1);
  return `${out.join(' ')}.`;
}
const chunkText = () => Array.from({ length: 4 + Math.floor(next() * 4) }, () => sentence(8 + Math.floor(next() * 10))).join(' ');

const embedder = hashEmbedder(DIMENSIONS);

async function fill(store: StateStore): Promise<number> {
  await store.retrieval.ensureIndex({ corpus: 'bench', descriptor: JSON.stringify({ engine: 'bench', dimensions: DIMENSIONS }) });
  const perSource = Math.ceil(CHUNKS / SOURCES);
  const started = performance.now();
  let made = 0;
  for (let source = 0; source < SOURCES && made < CHUNKS; source += 1) {
    const sourceId = `doc-${String(source).padStart(4, '0')}`;
    const texts = Array.from({ length: Math.min(perSource, CHUNKS - made) }, chunkText);
    const { vectors } = await embedder.embed(texts);
    const chunks: IndexedChunk[] = texts.map((text, ordinal) => ({ chunkId: `${sourceId}#${ordinal}`, sourceId, revision: 'r1', ordinal, text, location: { documentId: sourceId } as IndexedChunk['location'], vector: vectors[ordinal]! }));
    const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    await store.retrieval.replace('bench', 'tenant', { sourceId, revision: 'r1', digest: `d-${source}`, source: { id: sourceId, revision: 'r1' }, chunks: chunks.length, bytes }, chunks, null);
    made += chunks.length;
  }
  return performance.now() - started;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

async function measure(store: StateStore): Promise<{ lexical: number[]; hybrid: number[]; lexicalHits: number }> {
  const scope: RetrievalScope = { corpus: 'bench', namespace: 'tenant', sources: Object.fromEntries(Array.from({ length: SOURCES }, (_, source) => [`doc-${String(source).padStart(4, '0')}`, 'r1'])) };
  const queries = Array.from({ length: QUERIES }, () => Array.from({ length: 3 + Math.floor(next() * 4) }, zipf).join(' '));
  // Warm-up: statement caches, pages in memory.
  for (const query of queries.slice(0, 20)) await store.retrieval.searchLexical(scope, query, LIMIT);
  const lexical: number[] = [];
  const hybrid: number[] = [];
  let lexicalHits = 0;
  for (const query of queries) {
    let started = performance.now();
    lexicalHits += (await store.retrieval.searchLexical(scope, query, LIMIT)).length;
    lexical.push(performance.now() - started);
    started = performance.now();
    const [vector] = (await embedder.embed([query])).vectors;
    const [words, vectors] = await Promise.all([store.retrieval.searchLexical(scope, query, LIMIT * 2), store.retrieval.searchVector(scope, vector!, LIMIT * 2)]);
    hybridFusion(words, vectors).slice(0, LIMIT);
    hybrid.push(performance.now() - started);
  }
  return { lexical: lexical.sort((a, b) => a - b), hybrid: hybrid.sort((a, b) => a - b), lexicalHits };
}

interface Row {
  engine: string;
  chunks: number;
  indexMs: number;
  indexBytes: number;
  lexicalP50: number;
  lexicalP99: number;
  hybridP50: number;
  hybridP99: number;
  lexicalHitsPerQuery: number;
}

async function runSqlite(): Promise<Row> {
  const directory = mkdtempSync(join(tmpdir(), 'agenticdriver-bench-retrieval-'));
  try {
    const engine = openSqliteEngine(join(directory, SQLITE_FILE));
    const store = await SqlStateStore.open(engine);
    const indexMs = await fill(store);
    engine.db.pragma('wal_checkpoint(TRUNCATE)');
    const indexBytes = statSync(join(directory, SQLITE_FILE)).size;
    const figures = await measure(store);
    await store.close();
    return row('sqlite', indexMs, indexBytes, figures);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function runPostgres(serverUrl: string): Promise<Row> {
  const name = `bench_retrieval_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    const store = await SqlStateStore.open(await PostgresEngine.connect(url.toString()));
    const indexMs = await fill(store);
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query('VACUUM ANALYZE retrieval_chunks');
    const { rows } = await client.query<{ bytes: string }>(
      "SELECT SUM(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c WHERE c.relname IN ('retrieval_chunks', 'retrieval_documents', 'retrieval_corpora')",
    );
    await client.end();
    const figures = await measure(store);
    await store.close();
    return row('postgres', indexMs, Number(rows[0]!.bytes), figures);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

function row(engine: string, indexMs: number, indexBytes: number, figures: { lexical: number[]; hybrid: number[]; lexicalHits: number }): Row {
  return {
    engine,
    chunks: CHUNKS,
    indexMs: Math.round(indexMs),
    indexBytes,
    lexicalP50: percentile(figures.lexical, 50),
    lexicalP99: percentile(figures.lexical, 99),
    hybridP50: percentile(figures.hybrid, 50),
    hybridP99: percentile(figures.hybrid, 99),
    lexicalHitsPerQuery: figures.lexicalHits / QUERIES,
  };
}

const rows: Row[] = [await runSqlite()];
const serverUrl = process.env.AGENTICDRIVER_TEST_POSTGRES_URL;
if (serverUrl) rows.push(await runPostgres(serverUrl));
else console.error('PostgreSQL skipped: run through `node scripts/postgres.mjs --run npx tsx bench/retrieval-search.ts`.');

const ms = (value: number) => value.toFixed(1);
console.log(`retrieval search: ${CHUNKS.toLocaleString('en-US')} chunks in ${SOURCES} sources, scope = all sources, ${QUERIES} queries, limit ${LIMIT}, hybrid = lexical + cosine (${DIMENSIONS} dims), fused`);
console.log('engine    index s   index MB   lexical p50/p99 ms   hybrid p50/p99 ms   (targets on SQLite: p50 ≤ 20 lexical, ≤ 50 hybrid)');
for (const r of rows) {
  console.log(`${r.engine.padEnd(9)} ${(r.indexMs / 1000).toFixed(1).padStart(7)}   ${(r.indexBytes / 1048576).toFixed(1).padStart(8)}   ${`${ms(r.lexicalP50)} / ${ms(r.lexicalP99)}`.padStart(18)}   ${`${ms(r.hybridP50)} / ${ms(r.hybridP99)}`.padStart(17)}`);
}
if (jsonIndex >= 0) writeFileSync(args[jsonIndex + 1]!, JSON.stringify({ rows }, null, 2));
