/**
 * The one record of runs, on both engines: a run has one row whatever its mode — a start record
 * joins its job's or operation's row, and a run without a key has a row only while in flight —
 * and a database with the schema of 25f3c58 (runs in flight, operation records with events, jobs
 * with events, in their former tables, as that host wrote them) upgrades in place with nothing
 * lost: every row and event reads back through the stores' interfaces, and what a dead host left
 * open is closed as before (runs recorded interrupted, a running operation uncertain, a running
 * job interrupted, a queued job still taken).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { RunEvent } from '../../src/protocol/schemas.js';
import { USAGE_RECORD_SCHEMA, type RunStartRecord, type UsageRecord } from '../../src/runtime/usage-record.js';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import type { SqlEngine } from '../../src/store/sql/engine.js';
import { SqlStateStore, TABLES } from '../../src/store/sql/sql-store.js';
import { openSqliteEngine, SQLITE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import { freshDatabase } from '../support/postgres.js';
import { ENGINES, type Engine } from '../support/stores.js';
import { tempDir } from '../support/temp.js';

/** How many steps each module had at 25f3c58, in the order they ran then (before `runs` existed). */
const AT_25F3C58: Record<SqlEngine['dialect'], [string, number][]> = {
  sqlite: [['replicas', 1], ['usage', 4], ['audit', 1], ['approvals', 2], ['tickets', 1], ['operations', 1], ['jobs', 1], ['sessions', 2], ['retrieval', 5]],
  postgres: [['replicas', 1], ['usage', 2], ['audit', 1], ['approvals', 1], ['tickets', 1], ['operations', 1], ['jobs', 1], ['sessions', 2], ['retrieval', 4]],
};

async function emptyDatabase(engine: Engine): Promise<{ open(): Promise<SqlEngine>; drop(): Promise<void> }> {
  if (engine === 'sqlite') {
    const path = join(tempDir('agenticdriver-runs-upgrade-'), SQLITE_FILE);
    return { open: async () => openSqliteEngine(path), drop: async () => undefined };
  }
  const database = await freshDatabase();
  return { open: () => PostgresEngine.connect(database.url), drop: database.drop };
}

async function schemaAt25f3c58(sql: SqlEngine): Promise<void> {
  await sql.transaction(async (tx) => {
    await tx.exec('CREATE TABLE table_migrations (name TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    for (const [name, steps] of AT_25F3C58[tx.dialect]) {
      const module = TABLES.find((table) => table.name === name)!;
      for (const step of module.migrations[tx.dialect].slice(0, steps)) await tx.exec(step);
      await tx.run('INSERT INTO table_migrations (name, version) VALUES (?, ?)', [name, steps]);
    }
  });
}

const DEAD = 'replica-that-died';
const T0 = Date.parse('2026-11-30T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const start = (runId: string, subject: string): RunStartRecord => ({ schema: USAGE_RECORD_SCHEMA, recordId: runId, hostId: 'h1', runId, subject, tokenId: 'app', provider: 'mock', vendor: 'mock', model: 'demo', authMode: 'none', source: 'synthetic', startedAt: iso(T0) }) as RunStartRecord;
const completed = (runId: string, subject: string) =>
  ({ ...start(runId, subject), status: 'completed', finishedAt: iso(T0 + 10), durationMs: 10, steps: 1, observedUsage: {}, coverage: { startedSteps: 1, completedSteps: 1, reportedSteps: 0 } }) as UsageRecord;
const event = (runId: string, sequence: number, type: string, fields: object = {}) => ({ type, runId, sequence, timestamp: iso(T0 + sequence), ...fields }) as RunEvent;
const request = { provider: 'mock', model: 'demo', input: 'hello' };

const doneJobEvents = [
  event('run-job-done', 1, 'run.started', { provider: 'mock', model: 'demo' }),
  event('run-job-done', 2, 'text.delta', { text: 'hi' }),
  event('run-job-done', 3, 'run.completed', { result: { text: 'hi' } }),
];
const runningJobEvents = [event('run-job-running', 1, 'run.started', { provider: 'mock', model: 'demo' })];
const doneJournal = [
  { at: iso(T0 + 1), event: { type: 'run.started', provider: 'mock', model: 'demo' } },
  { at: iso(T0 + 2), event: { type: 'run.completed', result: { text: 'done' } } },
];

/** The rows today's host would have left: written with the former tables' own columns. */
async function rowsAt25f3c58(sql: SqlEngine): Promise<void> {
  const inFlight = (runId: string, subject: string) => sql.run('INSERT INTO runs_in_flight (run_id, record, owner) VALUES (?, ?, ?)', [runId, JSON.stringify(start(runId, subject)), DEAD]);
  await inFlight('run-keyless', 'alice');
  await inFlight('run-op-running', 'alice');
  await inFlight('run-job-running', 'bob');
  const old = completed('run-old', 'alice');
  await sql.run('INSERT INTO usage_records (run_id, subject, provider, model, status, finished_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)', ['run-old', 'alice', 'mock', 'demo', 'completed', old.finishedAt, JSON.stringify(old)]);

  const operation = (key: string, runId: string, state: string, journal: { at: string; event: object }[]) => async () => {
    const bytes = journal.reduce((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry.event)), 0);
    await sql.run('INSERT INTO operations (subject, key, fingerprint, run_id, provider, model, state, owner, bytes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      'alice', key, `fp-${key}`, runId, 'mock', 'demo', state, DEAD, bytes, T0, T0 + 2,
    ]);
    for (const [index, entry] of journal.entries()) {
      await sql.run('INSERT INTO operation_events (subject, key, seq, at, event) VALUES (?, ?, ?, ?, ?)', ['alice', key, index + 1, entry.at, JSON.stringify(entry.event)]);
    }
  };
  await operation('k-done', 'run-op-done', 'completed', doneJournal)();
  await operation('k-running', 'run-op-running', 'running', doneJournal.slice(0, 1))();

  const job = async (id: string, key: string, runId: string, state: string, owner: string | null, events: RunEvent[], expiresAt: number | null) => {
    const body = JSON.stringify(request);
    await sql.run(
      `INSERT INTO jobs (id, subject, job_key, fingerprint, token_id, request, run_id, provider, model, state, cursor, cancel_requested, owner, created_at, updated_at, expires_at, retention_ms, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
      [id, 'bob', key, `fp-${key}`, 'app', body, runId, 'mock', 'demo', state, events.length, owner, T0, T0 + events.length, expiresAt, 3_600_000, Buffer.byteLength(body)],
    );
    for (const item of events) await sql.run('INSERT INTO job_events (job_id, seq, event) VALUES (?, ?, ?)', [id, item.sequence, JSON.stringify(item)]);
  };
  // Retention far ahead of the test's clock, so that nothing expires under it.
  await job('00000000-0000-4000-8000-00000000000a', 'report-done', 'run-job-done', 'completed', DEAD, doneJobEvents, Date.parse('2100-01-01T00:00:00.000Z'));
  await job('00000000-0000-4000-8000-00000000000b', 'report-running', 'run-job-running', 'running', DEAD, runningJobEvents, null);
  await job('00000000-0000-4000-8000-00000000000c', 'report-queued', 'run-job-queued', 'queued', null, [], null);
}

/** Each run's row: its mode, state, run id and whether its start record is there. */
async function runRows(sql: SqlEngine): Promise<[string, string, string | null, boolean][]> {
  const rows = await sql.all<{ mode: string; state: string; run_id: string | null; start_record: string | null }>('SELECT mode, state, run_id, start_record FROM runs ORDER BY mode, run_id');
  return rows.map((row) => [row.mode, row.state, row.run_id, row.start_record !== null]);
}

for (const engine of ENGINES) {
  describe(`the one record of runs (${engine})`, () => {
    it("gives a run one row: its start record joins its job's or operation's row, and a run without a key has one only while in flight", async () => {
      const database = await emptyDatabase(engine);
      const first = await SqlStateStore.open(await database.open());
      const raw = await database.open();
      try {
        let jobRun = '';
        try {
          await first.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
          assert.deepEqual(await first.operations.claim({ subject: 'alice', key: 'k', fingerprint: 'fp', runId: 'run-op', provider: 'mock', model: 'demo' }), { claimed: true });
          const { job } = await first.jobs.submit({ subject: 'bob', key: 'j', fingerprint: 'fp', tokenId: 'app', request, retentionMs: 60_000, maxJobs: 10, maxJobsPerSubject: 10 });
          assert.equal((await first.jobs.claim())?.info.id, job.info.id);
          jobRun = job.info.runId;
          await Promise.all(['run-op', job.info.runId, 'run-free', 'run-done'].map((runId) => first.usage.runStarted(start(runId, 'alice'))));
          await first.usage.record(completed('run-done', 'alice'));
          assert.deepEqual(await runRows(raw), [
            ['attached', 'running', 'run-free', true],
            ['attached', 'running', 'run-op', true],
            ['background', 'running', job.info.runId, true],
          ]);
        } finally {
          // Closed without finishing its runs: its lease goes, and what it left open is anybody's to reap.
          await first.close();
        }
        const second = await SqlStateStore.open(await database.open());
        try {
          const report = await second.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
          assert.deepEqual(report, { runs: 3, approvals: 0, tickets: 0, operations: 1, jobs: 1, sessions: 0, records: 0 });
          assert.deepEqual(await runRows(raw), [
            ['attached', 'uncertain', 'run-op', false],
            ['background', 'interrupted', jobRun, false],
          ]);
          const finished = await second.usage.finished({ limit: 10 });
          assert.deepEqual(
            finished.records.map((record) => [record.runId, record.status]).sort(),
            [[jobRun, 'interrupted'], ['run-done', 'completed'], ['run-free', 'interrupted'], ['run-op', 'interrupted']].sort(),
          );
        } finally {
          await second.close();
        }
      } finally {
        await raw.close();
        await database.drop();
      }
    });

    it('keeps every run, operation and job with its events, and closes what the dead host left open', async () => {
      const database = await emptyDatabase(engine);
      try {
        const old = await database.open();
        await schemaAt25f3c58(old);
        await rowsAt25f3c58(old);
        await old.close();

        const store = await SqlStateStore.open(await database.open());
        try {
          // Before any reaping: everything reads back as it was written.
          const doneJob = await store.jobs.read('00000000-0000-4000-8000-00000000000a');
          assert.deepEqual(doneJob?.info, {
            id: '00000000-0000-4000-8000-00000000000a',
            runId: 'run-job-done',
            provider: 'mock',
            model: 'demo',
            state: 'completed',
            cursor: 3,
            cancelRequested: false,
            createdAt: iso(T0),
            updatedAt: iso(T0 + 3),
            expiresAt: '2100-01-01T00:00:00.000Z',
          });
          assert.deepEqual([doneJob.subject, doneJob.tokenId, doneJob.fingerprint, doneJob.request, doneJob.expired], ['bob', 'app', 'fp-report-done', request, false]);
          assert.deepEqual(await store.jobs.events('00000000-0000-4000-8000-00000000000a', 0, 100, 1_000_000), doneJobEvents);
          assert.deepEqual(await store.jobs.events('00000000-0000-4000-8000-00000000000a', 1, 100, 1_000_000), doneJobEvents.slice(1));
          assert.deepEqual((await store.jobs.list(10, { subject: 'bob' })).map((row) => row.info.state).sort(), ['completed', 'queued', 'running']);
          const doneOperation = await store.operations.find('alice', 'k-done');
          assert.deepEqual(
            { ...doneOperation, ownerAlive: undefined },
            { subject: 'alice', key: 'k-done', fingerprint: 'fp-k-done', runId: 'run-op-done', provider: 'mock', model: 'demo', state: 'completed', owner: DEAD, ownerAlive: undefined, events: doneJournal },
          );
          assert.equal((await store.operations.find('alice', 'k-running'))?.state, 'running');
          assert.equal(await store.jobs.queued(), 1);

          // What the dead host left open is closed as it always was.
          const report = await store.start({ leaseMs: 60_000, onLeaseLost: () => undefined });
          assert.deepEqual(report, { runs: 3, approvals: 0, tickets: 0, operations: 1, jobs: 1, sessions: 0, records: 0 });
          const finished = await store.usage.finished({ limit: 10 });
          assert.deepEqual(
            finished.records.map((record) => [record.runId, record.status]).sort(),
            [['run-job-running', 'interrupted'], ['run-keyless', 'interrupted'], ['run-old', 'completed'], ['run-op-running', 'interrupted']],
          );
          const uncertain = await store.operations.find('alice', 'k-running');
          assert.deepEqual([uncertain?.state, uncertain?.runId, uncertain?.events], ['uncertain', 'run-op-running', doneJournal.slice(0, 1)]);
          const interrupted = await store.jobs.read('00000000-0000-4000-8000-00000000000b');
          assert.equal(interrupted?.info.state, 'interrupted');
          const log = await store.jobs.events('00000000-0000-4000-8000-00000000000b', 0, 100, 1_000_000);
          assert.deepEqual(log.map((item) => [item.sequence, item.type]), [[1, 'run.started'], [2, 'run.failed']]);
          assert.deepEqual(log[0], runningJobEvents[0]);
          const claimed = await store.jobs.claim();
          assert.deepEqual([claimed?.info.id, claimed?.info.runId, claimed?.request], ['00000000-0000-4000-8000-00000000000c', 'run-job-queued', request]);

          // The upgraded record keeps working: a key used before the upgrade is still taken, a new one is claimed.
          const again = await store.operations.claim({ subject: 'alice', key: 'k-done', fingerprint: 'fp-k-done', runId: 'run-new', provider: 'mock', model: 'demo' });
          assert.equal(again.claimed, false);
          const resubmitted = await store.jobs.submit({ subject: 'bob', key: 'report-done', fingerprint: 'fp-report-done', tokenId: 'app', request, retentionMs: 1, maxJobs: 10, maxJobsPerSubject: 10 });
          assert.deepEqual([resubmitted.created, resubmitted.job.info.id], [false, '00000000-0000-4000-8000-00000000000a']);
        } finally {
          await store.close();
        }

        // The former tables are gone; one row per operation and job is left (the start records went with their usage records).
        const upgraded = await database.open();
        try {
          for (const table of ['runs_in_flight', 'operations', 'operation_events', 'jobs', 'job_events']) {
            await assert.rejects(upgraded.all(`SELECT COUNT(*) AS n FROM ${table}`), /no such table|does not exist/, `${table} is dropped`);
          }
          const rows = await upgraded.all<{ mode: string; state: string; start_record: string | null }>('SELECT mode, state, start_record FROM runs ORDER BY mode, state');
          assert.deepEqual(
            rows.map((row) => [row.mode, row.state, row.start_record]),
            [['attached', 'completed', null], ['attached', 'uncertain', null], ['background', 'completed', null], ['background', 'interrupted', null], ['background', 'running', null]],
          );
          const [{ n } = { n: 0 }] = await upgraded.all<{ n: number }>('SELECT COUNT(*) AS n FROM run_events');
          assert.equal(Number(n), 2 + 1 + 3 + 2);
        } finally {
          await upgraded.close();
        }
      } finally {
        await database.drop();
      }
    });
  });
}
