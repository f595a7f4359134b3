/**
 * The one record of a run: a `runs` row and its `run_events`, whatever started it. The stores
 * that read and write them keep their own shapes — background runs (`jobs.ts`), the records of
 * idempotent attached runs (`operations.ts`), the start records of runs in flight (`usage.ts`) —
 * and this module owns the tables. Each of those modules' last migration step moves its former
 * tables' rows here, so it runs after this module's steps.
 *
 * A row's columns, by what uses them:
 * - every run: `id`, `mode` (`attached` | `background`), `subject`, `provider`, `model`,
 *   `state`, `owner` (the replica running it), `created_at`, `updated_at`, `run_id` (the wire
 *   run id, fixed before the run starts: when a job is queued, when an idempotency key is claimed);
 * - in flight: `start_record`, its usage start record until the usage record arrives (or the
 *   reaper records it interrupted). An attached run without a key has only this: its row, whose
 *   `id` is its run id, is removed with the start record;
 * - keyed runs: `run_key` (the job key or the idempotency key, unique per subject and mode),
 *   `fingerprint` (of the request), `cursor` (events committed, the last `seq`), `bytes`;
 * - background runs: `token_id`, `request` (erased at expiry: a tombstone), `cancel_requested`,
 *   `expires_at`, `retention_ms`.
 *
 * `run_events.event` is a background run's event as it was sent, or, in an attached run's
 * journal, the event's payload (stamped with a run id and sequence when it is replayed); `at`
 * is when it was committed. A recorded attached run without a key (`run-records.ts`) stores the
 * events of one commit in one row: their JSON texts a line each, `seq` the last one's sequence.
 */
import type { Migrations } from '../table.js';

const RUNS = `CREATE TABLE runs (
     id TEXT PRIMARY KEY, mode TEXT NOT NULL, subject TEXT NOT NULL, run_key TEXT, fingerprint TEXT, token_id TEXT,
     request TEXT, run_id TEXT UNIQUE, provider TEXT NOT NULL, model TEXT NOT NULL, state TEXT NOT NULL,
     cursor BIGINT NOT NULL, cancel_requested INTEGER NOT NULL, owner TEXT, start_record TEXT,
     created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, expires_at BIGINT, retention_ms BIGINT, bytes BIGINT NOT NULL,
     UNIQUE (subject, mode, run_key));
   CREATE INDEX runs_queued ON runs (created_at) WHERE state = 'queued';
   CREATE INDEX runs_running ON runs (owner) WHERE state = 'running';
   CREATE INDEX runs_started ON runs (owner) WHERE start_record IS NOT NULL;
   CREATE INDEX runs_updated ON runs (updated_at);
   CREATE TABLE run_events (id TEXT NOT NULL, seq BIGINT NOT NULL, at TEXT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (id, seq))`;

/** The channel every replica announces background runs' changes on (signals are hints: readers re-read the rows). */
export const RUN_CHANGES = 'agenticdriver_jobs';

/** The runs any replica is serving or that wait for a person: what the operator's run list shows as active. */
const ACTIVE_RUNS = "CREATE INDEX runs_active ON runs (created_at) WHERE state IN ('running', 'waiting')";

export const RUNS_MIGRATIONS: Migrations = { sqlite: [RUNS, ACTIVE_RUNS], postgres: [RUNS, ACTIVE_RUNS] };

/** Every column of `runs`, in order: the INSERTs that move former tables' rows here list them all. */
export const RUN_COLUMNS =
  'id, mode, subject, run_key, fingerprint, token_id, request, run_id, provider, model, state, cursor, cancel_requested, owner, start_record, created_at, updated_at, expires_at, retention_ms, bytes';

/** The row of a background run (a job) or of an idempotent attached run, as read. */
export interface RunColumns {
  id: string;
  mode: 'attached' | 'background';
  subject: string;
  run_key: string | null;
  fingerprint: string | null;
  token_id: string | null;
  request: string | null;
  run_id: string | null;
  provider: string;
  model: string;
  state: string;
  cursor: number;
  cancel_requested: number | boolean;
  owner: string | null;
  start_record: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  retention_ms: number | null;
  bytes: number;
}
