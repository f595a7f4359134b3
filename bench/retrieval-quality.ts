/**
 * Retrieval quality (issue 31): the labelled questions of retrieval-quality-data.ts over its 40
 * passages, ranked lexically (BM25), by vector (cosine) and fused (hybrid, as the service fuses), with the built-in hash embedder and with a real local model
 * (all-MiniLM-L6-v2 int8 ONNX from PyPI, test/support/local-model.ts), on SQLite and — when a
 * server URL is given — PostgreSQL. Prints hit@1, hit@5 and MRR (of the top 10) separately for
 * questions that share a content word with their answer and for paraphrases that share none.
 *
 *   npx tsx bench/retrieval-quality.ts [--json FILE] [--no-model]
 *   node scripts/postgres.mjs --run npx tsx bench/retrieval-quality.ts   (adds PostgreSQL)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { hybridFusion } from '../src/extensions/retrieval/fusion.js';
import { builtinEmbedder, createEmbeddingAdapter, normalizeVector, type EmbeddingAdapter } from '../src/providers/embeddings/index.js';
import { PostgresEngine } from '../src/store/postgres/postgres-engine.js';
import { SqlStateStore } from '../src/store/sql/sql-store.js';
import { queryTerms, textTerms } from '../src/store/sql/text-terms.js';
import { openSqliteEngine, SQLITE_FILE } from '../src/store/sqlite/sqlite-store.js';
import type { ChunkMatch, IndexedChunk, RetrievalScope, StateStore } from '../src/store/store.js';
import { LOCAL_MODEL, localModelFixture } from '../test/support/local-model.js';
import { tempDir } from '../test/support/temp.js';
import { PASSAGES, QUESTIONS, type Question } from './retrieval-quality-data.js';

const args = process.argv.slice(2);
const jsonIndex = args.indexOf('--json');
const DEPTH = 10;
const CANDIDATES = 64;
const SCOPE: RetrievalScope = { corpus: 'quality', namespace: 'bench', sources: Object.fromEntries(PASSAGES.map((passage) => [passage.id, 'r1'])) };

/** The labels are checked, not trusted: a paraphrase shares no analysed term with its answer, an overlap question at least one. */
function checkLabels(): void {
  const passages = new Map(PASSAGES.map((passage) => [passage.id, new Set(textTerms(passage.text))]));
  for (const question of QUESTIONS) {
    const answer = passages.get(question.answer);
    if (!answer) throw new Error(`No passage ${question.answer} for "${question.question}".`);
    const shared = queryTerms(question.question, 64).filter((term) => answer.has(term));
    if ((question.kind === 'paraphrase') !== (shared.length === 0)) throw new Error(`"${question.question}" is labelled ${question.kind} but shares ${JSON.stringify(shared)} with ${question.answer}.`);
  }
}

interface Embedder {
  name: string;
  adapter: EmbeddingAdapter;
}

async function fill(store: StateStore, embedder: Embedder): Promise<void> {
  const { vectors } = await embedder.adapter.embed(PASSAGES.map((passage) => passage.text));
  await store.retrieval.ensureIndex({ corpus: SCOPE.corpus, descriptor: embedder.name });
  for (const [index, passage] of PASSAGES.entries()) {
    const chunk: IndexedChunk = {
      chunkId: passage.id,
      sourceId: passage.id,
      revision: 'r1',
      ordinal: 0,
      text: passage.text,
      location: { documentId: passage.id } as IndexedChunk['location'],
      vector: normalizeVector(vectors[index]!, embedder.adapter.identity.dimensions),
    };
    const document = { sourceId: passage.id, revision: 'r1', digest: passage.id, source: { id: passage.id, revision: 'r1', title: passage.title }, chunks: 1, bytes: Buffer.byteLength(passage.text) };
    await store.retrieval.replace(SCOPE.corpus, SCOPE.namespace, document, [chunk], null);
  }
}

type Ranking = 'lexical' | 'vector' | 'fused';
interface Row {
  engine: string;
  ranking: Ranking;
  embedder: string;
  overlap: Metrics;
  paraphrase: Metrics;
}
interface Metrics {
  questions: number;
  hit1: number;
  hit5: number;
  mrr: number;
}

function metrics(ranks: (number | undefined)[]): Metrics {
  const count = ranks.length;
  return {
    questions: count,
    hit1: ranks.filter((rank) => rank === 1).length / count,
    hit5: ranks.filter((rank) => rank !== undefined && rank <= 5).length / count,
    mrr: ranks.reduce<number>((sum, rank) => sum + (rank === undefined ? 0 : 1 / rank), 0) / count,
  };
}

async function evaluate(store: StateStore, engine: string, embedder: Embedder): Promise<Row[]> {
  const ranks: Record<Ranking, Map<Question, number | undefined>> = { lexical: new Map(), vector: new Map(), fused: new Map() };
  const rankOf = (matches: { chunk: ChunkMatch['chunk'] }[], question: Question) => {
    const index = matches.slice(0, DEPTH).findIndex((match) => match.chunk.chunkId === question.answer);
    return index < 0 ? undefined : index + 1;
  };
  const { vectors } = await embedder.adapter.embed(QUESTIONS.map((question) => question.question));
  for (const [index, question] of QUESTIONS.entries()) {
    const lexical = await store.retrieval.searchLexical(SCOPE, question.question, CANDIDATES);
    const vector = await store.retrieval.searchVector(SCOPE, normalizeVector(vectors[index]!, embedder.adapter.identity.dimensions), CANDIDATES);
    ranks.lexical.set(question, rankOf(lexical, question));
    ranks.vector.set(question, rankOf(vector, question));
    ranks.fused.set(question, rankOf(hybridFusion(lexical, vector).map((fused) => fused.match), question));
  }
  const split = (ranking: Ranking, kind: Question['kind']) => metrics(QUESTIONS.filter((question) => question.kind === kind).map((question) => ranks[ranking].get(question)));
  return (['lexical', 'vector', 'fused'] as const).map((ranking) => ({ engine, ranking, embedder: embedder.name, overlap: split(ranking, 'overlap'), paraphrase: split(ranking, 'paraphrase') }));
}

async function withSqlite<T>(body: (store: StateStore) => Promise<T>): Promise<T> {
  const store = await SqlStateStore.open(openSqliteEngine(join(tempDir('agenticdriver-bench-quality-'), SQLITE_FILE)));
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

async function withPostgres<T>(serverUrl: string, body: (store: StateStore) => Promise<T>): Promise<T> {
  const name = `bench_quality_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    const store = await SqlStateStore.open(await PostgresEngine.connect(url.toString()));
    try {
      return await body(store);
    } finally {
      await store.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

checkLabels();
const fixture = args.includes('--no-model') ? undefined : localModelFixture();
const embedders: Embedder[] = [{ name: 'builtin hash', adapter: builtinEmbedder() }];
if (fixture) {
  embedders.push({
    name: `${LOCAL_MODEL.name} (local)`,
    adapter: createEmbeddingAdapter({ kind: 'local', model: LOCAL_MODEL.name, dimensions: LOCAL_MODEL.dimensions, path: fixture.directory }, { readSecret: async () => '' }),
  });
}
const rows: Row[] = [];
try {
  const serverUrl = process.env.AGENTICDRIVER_TEST_POSTGRES_URL;
  for (const embedder of embedders) {
    rows.push(...(await withSqlite(async (store) => (await fill(store, embedder), evaluate(store, 'sqlite', embedder)))));
    if (serverUrl) rows.push(...(await withPostgres(serverUrl, async (store) => (await fill(store, embedder), evaluate(store, 'postgres', embedder)))));
  }
  if (!serverUrl) console.error('PostgreSQL skipped: run through `node scripts/postgres.mjs --run npx tsx bench/retrieval-quality.ts`.');
} finally {
  for (const embedder of embedders) await (embedder.adapter as { close?: () => Promise<void> }).close?.();
  fixture?.remove();
}

const overlapCount = QUESTIONS.filter((question) => question.kind === 'overlap').length;
console.log(`retrieval quality: ${PASSAGES.length} passages, ${overlapCount} questions sharing a content word with their answer, ${QUESTIONS.length - overlapCount} paraphrases sharing none; top ${DEPTH}`);
console.log('engine    ranking  embedder                     | overlap hit@1 hit@5  MRR  | paraphrase hit@1 hit@5  MRR');
const figure = (value: number) => value.toFixed(2).padStart(5);
for (const row of rows) {
  // Lexical ranking uses no embedder: print it once per engine.
  if (row.ranking === 'lexical' && row.embedder !== embedders[0]!.name) continue;
  const embedder = row.ranking === 'lexical' ? '-' : row.embedder;
  console.log(
    `${row.engine.padEnd(9)} ${row.ranking.padEnd(8)} ${embedder.padEnd(28)} |       ${figure(row.overlap.hit1)} ${figure(row.overlap.hit5)} ${figure(row.overlap.mrr)} |          ${figure(row.paraphrase.hit1)} ${figure(row.paraphrase.hit5)} ${figure(row.paraphrase.mrr)}`,
  );
}
if (jsonIndex >= 0) writeFileSync(args[jsonIndex + 1]!, JSON.stringify({ rows }, null, 2));
