/**
 * Schema versions, per engine. SQLite keeps the versions already shipped (1–3) and grows from
 * there; PostgreSQL starts at today's schema. Timestamps the store compares are epoch
 * milliseconds (BIGINT); records are JSON text.
 */
import type { SqlEngine } from './engine.js';

/** A native-mode session's opaque provider state (a CLI's conversation id); never part of a snapshot. */
const SESSION_PROVIDER_STATE = 'ALTER TABLE sessions ADD COLUMN provider_state TEXT';
// The console and `usage --since` read the newest records first.
const USAGE_BY_TIME = 'CREATE INDEX usage_records_finished ON usage_records (finished_at)';

/**
 * Bumped by every replace/delete in a corpus, in the same transaction: a search reads it to
 * know whether its in-process copy of the corpus's vectors is still current (on any replica).
 */
const RETRIEVAL_GENERATION = 'ALTER TABLE retrieval_corpora ADD COLUMN generation';

/** Who indexed each document: a subject's share of the index is what its documents hold (NULL: indexed before shares). */
const RETRIEVAL_SUBJECT = `ALTER TABLE retrieval_documents ADD COLUMN subject TEXT;
   CREATE INDEX retrieval_documents_subject ON retrieval_documents (subject)`;

const SQLITE: string[] = [
  `CREATE TABLE usage_records (
     run_id TEXT PRIMARY KEY, subject TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
     status TEXT NOT NULL, finished_at TEXT NOT NULL, record TEXT NOT NULL)`,
  `CREATE TABLE approval_audit (
     id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL,
     approval_id TEXT, record TEXT NOT NULL)`,
  `CREATE TABLE runs_in_flight (run_id TEXT PRIMARY KEY, record TEXT NOT NULL);
   CREATE TABLE open_approvals (approval_id TEXT PRIMARY KEY, record TEXT NOT NULL);
   INSERT OR IGNORE INTO open_approvals (approval_id, record)
     SELECT requested.approval_id, requested.record FROM approval_audit AS requested
     WHERE requested.kind = 'approval.requested' AND requested.approval_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM approval_audit AS resolved
                       WHERE resolved.kind = 'approval.resolved' AND resolved.approval_id = requested.approval_id)`,
  // Replicas and their leases; owners on everything a crash can leave open. Approvals left
  // open by version 3 have no owner, so the next start reaps them as interrupted.
  `CREATE TABLE replicas (id TEXT PRIMARY KEY, started_at BIGINT NOT NULL, lease_expires_at BIGINT NOT NULL);
   ALTER TABLE runs_in_flight ADD COLUMN owner TEXT;
   ${approvalsTable()};
   INSERT INTO approvals (approval_id, subject, run_id, provider, tool, call_json, request, expires_at, owner, state)
     SELECT approval_id, json_extract(record, '$.subject'), coalesce(json_extract(record, '$.runId'), ''),
            coalesce(json_extract(record, '$.provider'), ''), coalesce(json_extract(record, '$.tool'), ''),
            '', '{}', NULL, NULL, 'pending'
     FROM open_approvals;
   DROP TABLE open_approvals;
   ${ticketsTable()};
   ${operationsTables()}`,
  jobsTables(),
  sessionsTable(),
  SESSION_PROVIDER_STATE,
  retrievalTables('sqlite'),
  USAGE_BY_TIME,
  `${RETRIEVAL_GENERATION} INTEGER NOT NULL DEFAULT 0;
   CREATE VIRTUAL TABLE retrieval_fts_vocab USING fts5vocab(retrieval_fts, 'row')`,
  // Lexical search checks each full-text match's scope here, not in the wide chunk rows.
  'CREATE INDEX retrieval_chunks_rank ON retrieval_chunks (id, corpus, namespace, source_id, chunk_id)',
  `DROP TRIGGER retrieval_chunks_fts_insert;
   DROP TRIGGER retrieval_chunks_fts_delete;
   DROP TABLE retrieval_fts_vocab;
   DROP TABLE retrieval_fts;
   DROP INDEX retrieval_chunks_rank;
   ${analyzedTerms('sqlite')}`,
  RETRIEVAL_SUBJECT,
];

const POSTGRES: string[] = [
  `CREATE TABLE usage_records (
     run_id TEXT PRIMARY KEY, subject TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
     status TEXT NOT NULL, finished_at TEXT NOT NULL, record TEXT NOT NULL);
   CREATE TABLE approval_audit (
     id BIGSERIAL PRIMARY KEY, at TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL,
     approval_id TEXT, record TEXT NOT NULL);
   CREATE TABLE runs_in_flight (run_id TEXT PRIMARY KEY, record TEXT NOT NULL, owner TEXT);
   CREATE TABLE replicas (id TEXT PRIMARY KEY, started_at BIGINT NOT NULL, lease_expires_at BIGINT NOT NULL);
   ${approvalsTable()};
   ${ticketsTable()};
   ${operationsTables()}`,
  jobsTables(),
  sessionsTable(),
  SESSION_PROVIDER_STATE,
  retrievalTables('postgres'),
  USAGE_BY_TIME,
  `${RETRIEVAL_GENERATION} BIGINT NOT NULL DEFAULT 0`,
  `ALTER TABLE retrieval_chunks DROP COLUMN tsv;
   ${analyzedTerms('postgres')}`,
  RETRIEVAL_SUBJECT,
];

function approvalsTable(): string {
  return `CREATE TABLE approvals (
     approval_id TEXT PRIMARY KEY, subject TEXT NOT NULL, run_id TEXT NOT NULL, provider TEXT NOT NULL,
     tool TEXT NOT NULL, call_json TEXT NOT NULL, request TEXT NOT NULL, expires_at BIGINT, owner TEXT,
     state TEXT NOT NULL, resolution TEXT);
   CREATE INDEX approvals_open ON approvals (owner) WHERE state = 'pending'`;
}

function ticketsTable(): string {
  return `CREATE TABLE tool_tickets (
     execution_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, call_id TEXT NOT NULL, subject TEXT NOT NULL,
     provider TEXT NOT NULL, tool TEXT NOT NULL, output_schema TEXT, owner TEXT, state TEXT NOT NULL,
     result TEXT);
   CREATE INDEX tool_tickets_open ON tool_tickets (owner) WHERE state = 'pending'`;
}

function operationsTables(): string {
  return `CREATE TABLE operations (
     subject TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, run_id TEXT,
     provider TEXT NOT NULL, model TEXT NOT NULL, state TEXT NOT NULL, owner TEXT,
     bytes BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
     PRIMARY KEY (subject, key));
   CREATE INDEX operations_running ON operations (owner) WHERE state = 'running';
   CREATE INDEX operations_updated ON operations (updated_at);
   CREATE TABLE operation_events (
     subject TEXT NOT NULL, key TEXT NOT NULL, seq BIGINT NOT NULL, at TEXT NOT NULL, event TEXT NOT NULL,
     PRIMARY KEY (subject, key, seq))`;
}

function sessionsTable(): string {
  return `CREATE TABLE sessions (
     id TEXT PRIMARY KEY, subject TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,
     revision BIGINT NOT NULL, state TEXT NOT NULL, history TEXT NOT NULL, instructions TEXT, owner TEXT,
     created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, expires_at BIGINT, retention_ms BIGINT NOT NULL);
   CREATE INDEX sessions_expiry ON sessions (expires_at)`;
}

function jobsTables(): string {
  return `CREATE TABLE jobs (
     id TEXT PRIMARY KEY, subject TEXT NOT NULL, job_key TEXT NOT NULL, fingerprint TEXT NOT NULL, token_id TEXT NOT NULL,
     request TEXT, run_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, state TEXT NOT NULL,
     cursor BIGINT NOT NULL, cancel_requested INTEGER NOT NULL, owner TEXT, created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL, expires_at BIGINT, retention_ms BIGINT NOT NULL, bytes BIGINT NOT NULL,
     UNIQUE (subject, job_key));
   CREATE INDEX jobs_queued ON jobs (created_at) WHERE state = 'queued';
   CREATE INDEX jobs_running ON jobs (owner) WHERE state = 'running';
   CREATE TABLE job_events (job_id TEXT NOT NULL, seq BIGINT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (job_id, seq))`;
}

/**
 * The retrieval index: corpora (frozen descriptor), documents (one revision per source) and
 * chunks with their vectors (float32 little-endian BLOB/bytea). The lexical index is the
 * engine's own: an FTS5 table kept in step by triggers on SQLite, a generated tsvector with
 * a GIN index on PostgreSQL (Porter / English stemming on both).
 */
function retrievalTables(dialect: 'sqlite' | 'postgres'): string {
  const tables = `CREATE TABLE retrieval_corpora (corpus TEXT PRIMARY KEY, descriptor TEXT NOT NULL);
   CREATE TABLE retrieval_documents (
     corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL, revision TEXT NOT NULL,
     digest TEXT NOT NULL, source TEXT NOT NULL, ingestion TEXT, chunks BIGINT NOT NULL, bytes BIGINT NOT NULL,
     stored_bytes BIGINT NOT NULL, PRIMARY KEY (corpus, namespace, source_id))`;
  if (dialect === 'sqlite') {
    return `${tables};
   CREATE TABLE retrieval_chunks (
     id INTEGER PRIMARY KEY, corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL,
     chunk_id TEXT NOT NULL, ordinal BIGINT NOT NULL, text TEXT NOT NULL, location TEXT NOT NULL, vector BLOB,
     UNIQUE (corpus, namespace, chunk_id));
   CREATE INDEX retrieval_chunks_source ON retrieval_chunks (corpus, namespace, source_id);
   CREATE VIRTUAL TABLE retrieval_fts USING fts5(text, content='retrieval_chunks', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
   CREATE TRIGGER retrieval_chunks_fts_insert AFTER INSERT ON retrieval_chunks BEGIN
     INSERT INTO retrieval_fts (rowid, text) VALUES (new.id, new.text);
   END;
   CREATE TRIGGER retrieval_chunks_fts_delete AFTER DELETE ON retrieval_chunks BEGIN
     INSERT INTO retrieval_fts (retrieval_fts, rowid, text) VALUES ('delete', old.id, old.text);
   END`;
  }
  return `${tables};
   CREATE TABLE retrieval_chunks (
     id BIGSERIAL PRIMARY KEY, corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL,
     chunk_id TEXT NOT NULL, ordinal BIGINT NOT NULL, text TEXT NOT NULL, location TEXT NOT NULL, vector BYTEA,
     tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
     UNIQUE (corpus, namespace, chunk_id));
   CREATE INDEX retrieval_chunks_source ON retrieval_chunks (corpus, namespace, source_id);
   CREATE INDEX retrieval_chunks_tsv ON retrieval_chunks USING GIN (tsv)`;
}

/**
 * Lexical search on the store's own analysis (src/store/sql/text-terms.ts), the same on both
 * engines: per chunk its length in terms and each term's frequency, an inverted index from term
 * to chunks (FTS5 over the distinct terms on SQLite, GIN over a term array on PostgreSQL), and each
 * term's document frequency per corpus and namespace. The engines' own text search (porter FTS5,
 * english tsvector) analysed text differently and ranked differently, so what it indexed is
 * cleared: corpora indexed before are ingested again (their descriptors changed too).
 */
function analyzedTerms(dialect: 'sqlite' | 'postgres'): string {
  const clear = `DELETE FROM retrieval_chunks;
   DELETE FROM retrieval_documents;
   DELETE FROM retrieval_corpora;
   ALTER TABLE retrieval_documents ADD COLUMN terms BIGINT NOT NULL DEFAULT 0;
   CREATE TABLE retrieval_term_counts (
     corpus TEXT NOT NULL, namespace TEXT NOT NULL, term TEXT NOT NULL, df BIGINT NOT NULL,
     PRIMARY KEY (corpus, namespace, term))`;
  if (dialect === 'sqlite') {
    return `${clear} WITHOUT ROWID;
   CREATE TABLE retrieval_chunk_terms (
     id INTEGER PRIMARY KEY, corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL,
     chunk_id TEXT NOT NULL, length BIGINT NOT NULL, terms BLOB NOT NULL);
   CREATE INDEX retrieval_chunk_terms_source ON retrieval_chunk_terms (corpus, namespace, source_id);
   CREATE VIRTUAL TABLE retrieval_terms_fts USING fts5(terms, content='', contentless_delete=1, tokenize='ascii')`;
  }
  // Rows up to a page stay uncompressed in line: scoring reads each candidate's arrays directly.
  return `${clear};
   CREATE TABLE retrieval_chunk_terms (
     id BIGINT PRIMARY KEY, corpus TEXT NOT NULL, namespace TEXT NOT NULL, source_id TEXT NOT NULL,
     chunk_id TEXT NOT NULL, length BIGINT NOT NULL, terms TEXT[] NOT NULL, counts INT2[] NOT NULL)
     WITH (toast_tuple_target = 8160);
   CREATE INDEX retrieval_chunk_terms_source ON retrieval_chunk_terms (corpus, namespace, source_id);
   CREATE INDEX retrieval_chunk_terms_terms ON retrieval_chunk_terms USING GIN (terms)`;
}

/**
 * Applies what is missing, one version per transaction. On PostgreSQL an advisory lock keeps
 * replicas that start together from migrating twice.
 */
export async function migrate(engine: SqlEngine): Promise<void> {
  const versions = engine.dialect === 'sqlite' ? SQLITE : POSTGRES;
  await engine.transaction(async (tx) => {
    if (tx.dialect === 'postgres') await tx.all('SELECT pg_advisory_xact_lock(7433)');
    // Under the lock: two replicas creating the table at once would collide even with IF NOT EXISTS.
    await tx.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)');
    const [row] = await tx.all<{ version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations');
    for (let index = row?.version ?? 0; index < versions.length; index += 1) {
      await tx.exec(versions[index]!);
      await tx.run('INSERT INTO schema_migrations (version) VALUES (?)', [index + 1]);
    }
  });
}
