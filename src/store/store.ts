/**
 * The state seam. Everything durable lives behind this interface, as one object of table
 * modules — `replica` (this process's lease and the signals between replicas), `usage`,
 * `audit`, `operations` (idempotency), `approvals`, `tickets`, `jobs`, `sessions` and
 * `retrieval` — so that the embedded SQLite store and a PostgreSQL store shared by several
 * replicas are interchangeable. Both are one implementation (`sql/sql-store.ts`) over an
 * engine, each table module with its SQL and its migrations in one file (`sql/tables/`).
 */
import type {
  ApprovalRequest,
  ApprovalResolution,
  ContextSource,
  ErrorInfo,
  HistoryMessage,
  IngestionManifest,
  JobInfo,
  JobState,
  RunEvent,
  RunRequest,
  SessionCreate,
  SessionInfo,
} from '../protocol/schemas.js';
import type { EventPayload } from '../runtime/types.js';
import type { AuditRecord } from './audit-record.js';
import type { RunStartRecord, UsageRecord } from '../runtime/usage-record.js';
import type { UsageTotalsQuery, UsageTotalsRow } from './usage-totals.js';

/** Where a page of finished runs starts: after this run in newest-first order. */
export interface FinishedRunKey {
  finishedAt: string;
  runId: string;
}

export interface FinishedRunsQuery {
  limit: number;
  before?: FinishedRunKey;
  status?: UsageRecord['status'];
  subject?: string;
  provider?: string;
  runId?: string;
  /** Case-insensitive (ASCII) substring of the run id, subject, provider or model. */
  search?: string;
}

export interface FinishedRunsPage {
  records: UsageRecord[];
  /** Set when older matching records may exist: pass it as `before` for the next page. */
  next?: FinishedRunKey;
}

export interface OperatorMarks {
  pendingApprovals: number;
  /** The newest usage record's finish time. */
  lastFinishedAt: string | undefined;
  /** Changes whenever a job is submitted, changes state or is erased. */
  jobs: string;
}

export interface UsageSummary {
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
  interrupted: number;
}

/** What reaping closed: work of replicas that died (or, on SQLite, of the previous process). */
export interface ReconcileReport {
  runs: number;
  approvals: number;
  tickets: number;
  operations: number;
  jobs: number;
  sessions: number;
  /** Recorded attached runs (run records) closed `interrupted`. */
  records: number;
}

export type OperationState = 'running' | 'completed' | 'failed' | 'cancelled' | 'uncertain';

/** One event of an operation's compact log, as recorded (runId and sequence are stamped on replay). */
export interface JournalEntry {
  at: string;
  event: EventPayload;
}

export interface OperationRecord {
  subject: string;
  key: string;
  fingerprint: string;
  runId: string | undefined;
  provider: string;
  model: string;
  state: OperationState;
  owner: string | undefined;
  /** Whether the owning replica still holds its lease (a running record of a dead owner is uncertain). */
  ownerAlive: boolean;
  events: JournalEntry[];
}

export interface OperationClaim {
  subject: string;
  key: string;
  fingerprint: string;
  /** The id the run will have: its record and its start record (in flight) are one row. */
  runId: string;
  provider: string;
  model: string;
}

export type PendingState = 'pending' | 'interrupted';

export interface ApprovalRow {
  approval: ApprovalRequest;
  subject: string;
  provider: string;
  /** The canonical JSON of the call under review; a decision must match it exactly. */
  call: string;
  /** Epoch milliseconds, when the approval expires. */
  expiresAt: number | undefined;
  state: PendingState | ApprovalResolution['outcome'];
  resolution: ApprovalResolution | undefined;
  /** Whether the replica running the waiting run still holds its lease. */
  ownerAlive: boolean;
}

/** What a ticket was settled with: the output, the application's failure, or an output its contract rejected. */
export type TicketResult = { output: unknown } | { error: true } | { rejected: { code: string; message: string } };

export interface TicketRow {
  executionId: string;
  runId: string;
  callId: string;
  subject: string;
  provider: string;
  tool: string;
  /** The tool's output schema, checked on whichever replica receives the result. */
  outputSchema: unknown;
  state: PendingState | 'accepted' | 'closed';
  ownerAlive: boolean;
}

/** A job row as the store keeps it: the public info, and what only the host may see. */
export interface JobRow {
  info: JobInfo;
  subject: string;
  /** The token that submitted it: dispatch re-checks that it is still configured with its grants. */
  tokenId: string;
  fingerprint: string;
  /** Undefined once retention erased it (the row stays as a tombstone). */
  request: RunRequest | undefined;
  expired: boolean;
  owner: string | undefined;
}

export interface JobSubmission {
  subject: string;
  key: string;
  fingerprint: string;
  tokenId: string;
  request: RunRequest;
  retentionMs: number;
  maxJobs: number;
  maxJobsPerSubject: number;
}

export interface JobFilter {
  state?: JobState;
  subject?: string;
  /** Only jobs of these providers. */
  providers?: readonly string[];
}

/**
 * What a replica announces of a job, to every replica: it was queued (a worker may take it),
 * its log grew (followers read on), or a cancel was asked of its running owner. A hint only: a
 * signal can be lost, so whoever waits on one also re-reads now and then.
 */
export interface JobChange {
  kind: 'queued' | 'events' | 'cancel';
  id: string;
}

export interface JobStore {
  /** Creates the job, or returns the one this subject submitted under the key (IDEMPOTENCY_CONFLICT when the request differs). */
  submit(submission: JobSubmission): Promise<{ job: JobRow; created: boolean }>;
  read(id: string): Promise<JobRow | undefined>;
  /** Jobs that match `filter` (all by default), most recently updated first: the operator's list, or a subject's. */
  list(limit: number, filter?: JobFilter): Promise<JobRow[]>;
  /** Committed events after `after`, at most `limit`, stopping before `maxBytes` of JSON (at least one). */
  events(id: string, after: number, limit: number, maxBytes: number): Promise<RunEvent[]>;
  /** Starts the next queued job on this replica (fair across subjects), if any, of a subject not in `skipSubjects`. */
  claim(skipSubjects?: readonly string[]): Promise<JobRow | undefined>;
  /** Queues again a job this replica claimed and did not start (it had no admission slot by then). */
  requeue(id: string): Promise<void>;
  /** Commits the next event of a job this replica runs; fenced by ownership. */
  append(id: string, event: RunEvent, maxJobBytes: number): Promise<void>;
  cancel(id: string): Promise<JobRow | undefined>;
  /** This replica's running jobs that a cancel was requested for. */
  cancelRequested(): Promise<string[]>;
  /** Ends a queued or running job `failed` (refused at dispatch) or a running one `interrupted` (its log could not grow). */
  fail(id: string, error: ErrorInfo, state?: 'failed' | 'interrupted'): Promise<void>;
  /** Tombstones jobs whose retention ended; returns how many. */
  expire(): Promise<number>;
  /** Jobs waiting for a worker (queue depth, for metrics). */
  queued(): Promise<number>;
  /** A value that changes whenever a job is submitted, changes state or is erased. */
  changeMark(): Promise<string>;
  /** At a clean stop: this replica's running jobs become interrupted (never re-run); queued ones stay queued. */
  interruptOwn(): Promise<number>;
  /** Calls `listener` for each job change any replica commits, until the function returned is called. */
  onChange(listener: (change: JobChange) => void): () => void;
}

/** What a checkpointed background run waits for: an approval decision or an application tool's result. */
export interface CheckpointWait {
  kind: 'approval' | 'ticket';
  /** The approval id or the ticket's execution id. */
  id: string;
}

/** What a waiting run holds besides what it waits for: they wait with it, and go on with it on whichever replica claims it. */
export interface CheckpointHolds {
  /** The session whose turn it is. */
  session?: string | undefined;
  /** The run id of its idempotency record. */
  record?: string | undefined;
}

/** Checkpoints of background runs waiting for a person (`src/store/sql/tables/run-checkpoints.ts`). */
export interface CheckpointStore {
  /** Commits a checkpoint of a job this replica runs; it then waits holding nothing, or is queued at once when answered meanwhile. */
  park(id: string, wait: CheckpointWait, checkpoint: unknown, wakeAt: number | undefined, holds?: CheckpointHolds): Promise<void>;
  /** The checkpoint a claimed job goes on from. */
  read(id: string): Promise<{ wait: CheckpointWait; checkpoint: unknown } | undefined>;
  /** Queues again the waiting jobs whose deadline passed by `at` (epoch ms, the host's clock); returns how many. */
  due(at: number): Promise<number>;
  /** Jobs waiting for a person, across every replica. */
  waiting(): Promise<number>;
}

/** Any run's row of the one record of runs, as run records read it (`store.runs`). */
export interface RunRecordRow {
  /** The row's id: a job's id, or the run id of an attached run without a key. */
  id: string;
  runId: string;
  mode: 'attached' | 'background';
  /** An idempotent attached run: its events are its journal. */
  keyed: boolean;
  subject: string;
  tokenId: string | undefined;
  provider: string;
  model: string;
  /** As its writer keeps it: a job's state, an operation's (`uncertain`), or a recorded run's. */
  state: string;
  cursor: number;
  createdAt: number;
  updatedAt: number;
  expiresAt: number | undefined;
  /** A background run's request (undefined once its retention erased it). */
  request: RunRequest | undefined;
  /** A background run whose retention ended: a tombstone. */
  expired: boolean;
}

/** One event of an attached run without a key, as it was sent, to record. */
export interface RunRecordWrite {
  runId: string;
  subject: string;
  tokenId?: string;
  provider: string;
  model: string;
  event: RunEvent;
  /** How long the record is kept once the run is finished. */
  retentionMs: number;
}

/** A run some replica is serving, or that waits checkpointed for a person, as the operator lists it. */
export interface ActiveRunRow {
  /** The row's id: a background run's job id, else the run id. */
  id: string;
  runId: string;
  mode: 'attached' | 'background';
  subject: string;
  provider: string;
  model: string;
  state: 'running' | 'waiting';
  createdAt: number;
  /** A waiting run: the approval or tool result it waits for, and since when. */
  waiting?: { kind: 'approval' | 'tool'; id: string; tool: string; since: number };
}

/** Run records: any run read back by its run id, its events paged, commits announced. */
export interface RunRecordStore {
  read(runId: string): Promise<RunRecordRow | undefined>;
  /** Runs in flight on any replica and runs waiting checkpointed, oldest first, at most `limit`. */
  active(limit: number): Promise<ActiveRunRow[]>;
  /** Committed events after `after`, at most `limit`, stopping before `maxBytes` of JSON (at least one). */
  events(row: Pick<RunRecordRow, 'id' | 'runId'>, after: number, limit: number, maxBytes: number): Promise<RunEvent[]>;
  /** Records an attached run's event, batched with others; `done` is told when it is committed, or why not (fenced by ownership: OPERATION_STORE_ERROR). */
  record(write: RunRecordWrite, done?: (error?: unknown) => void): void;
  /** Erases attached runs' records whose retention ended; returns how many. */
  expire(): Promise<number>;
  /** Calls `listener` with the row id of each commit of a run's events any replica makes, until the function returned is called. */
  onChange(listener: (id: string) => void): () => void;
}

export interface SessionRow {
  info: SessionInfo;
  subject: string;
  /** The visible history: the turns a person saw. */
  history: HistoryMessage[];
  instructions?: string;
  /** Native mode: what the provider saved on the last turn (opaque; never in a snapshot or result). */
  providerState?: string;
}

export interface SessionStore {
  create(subject: string, create: SessionCreate, retentionMs: number, maxEntries: number): Promise<SessionRow>;
  read(id: string): Promise<SessionRow | undefined>;
  /** The subject's sessions of these providers that have not expired, most recently updated first. */
  list(subject: string, providers: readonly string[], limit: number): Promise<SessionRow[]>;
  /** Removes it; `runningOn` names the replica running its turn, to be told. */
  delete(id: string): Promise<{ deleted: boolean; runningOn: string | undefined }>;
  /** Claims the turn at `revision` for this replica, or throws the session conflict. */
  begin(id: string, subject: string, revision: number, provider: string, model: string, maxMessages: number): Promise<SessionRow>;
  /**
   * Appends the exchange and moves to the next revision, with the provider state the turn saved
   * (none: the next turn replays); undefined when the turn is no longer this replica's.
   */
  commit(id: string, exchange: HistoryMessage[], providerState?: string): Promise<SessionRow | undefined>;
  release(id: string, modelWorkStarted: boolean): Promise<void>;
}

/** Told to the replica that owns a run: something for it was decided elsewhere. */
export interface StoreSignal {
  /** `session`: the session whose turn runs here was deleted. `mcp-cancel` (broadcast): an MCP client cancelled the call with this key. */
  kind: 'approval' | 'ticket' | 'progress' | 'session' | 'mcp-cancel';
  id: string;
}

/**
 * One corpus's identity, frozen when it is first used: the lexical engine and, when the corpus has
 * an embedder, the embedder's identity and dimensions. A different descriptor → INDEX_INCOMPATIBLE.
 */
export interface CorpusIndex {
  corpus: string;
  /** Canonical JSON of the wire `RetrievalResult.index` object (compared byte for byte). */
  descriptor: string;
}

/** Which sources (at which exact revisions) one call may see: filtered before ranking. */
export interface RetrievalScope {
  corpus: string;
  /** The tenant partition inside the corpus (from the source authorizer). */
  namespace: string;
  /** sourceId → the revision the subject may see. */
  sources: Record<string, string>;
}

/** One indexed source revision. */
export interface IndexedDocument {
  sourceId: string;
  revision: string;
  /** documentSha256 of the receipt. */
  digest: string;
  /** The ContextSource as indexed (title, uri, location), JSON. */
  source: ContextSource;
  ingestion?: IngestionManifest;
  chunks: number;
  /** UTF-8 bytes of all chunk texts. */
  bytes: number;
}

export interface IndexedChunk {
  chunkId: string;
  sourceId: string;
  revision: string;
  ordinal: number;
  text: string;
  location: NonNullable<ContextSource['location']>;
  /** Unit-length embedding, when the corpus has an embedder. */
  vector?: Float32Array;
}

export interface ChunkMatch {
  chunk: IndexedChunk;
  document: IndexedDocument;
  /** 1-based position in this ranking. */
  rank: number;
  /** Lexical: the engine's relevance mapped into (0, 1]; vector: cosine in [-1, 1]. */
  score: number;
}

/** Indexed sources and their chunks, with the engine's own full-text search (FTS5 / tsvector). */
export interface RetrievalIndexStore {
  /** Records the descriptor the first time; INDEX_INCOMPATIBLE when it differs. */
  ensureIndex(index: CorpusIndex): Promise<void>;
  documents(corpus: string, namespace: string, sourceIds?: string[]): Promise<IndexedDocument[]>;
  /**
   * Replaces a source's document and chunks in one transaction (searches see the old or the new,
   * never a mix). SOURCE_CONFLICT when the stored digest is not `expectedDigest` (null: none stored);
   * CHUNK_CONFLICT when a chunk id is taken by another source; INDEX_FULL past the capacity (of
   * the index or the corpus's share); RESOURCE_LIMIT past the share of `subject`, who indexes it.
   */
  replace(corpus: string, namespace: string, document: IndexedDocument, chunks: IndexedChunk[], expectedDigest: string | null, subject?: string): Promise<void>;
  /** False when no document is stored; SOURCE_CONFLICT when it is stored at another revision. */
  delete(corpus: string, namespace: string, sourceId: string, revision: string): Promise<boolean>;
  /** BM25 with the namespace's statistics, score = BM25 / the query's maximum (in [0, 1]); best first (score desc, then chunkId asc); at most `limit`. */
  searchLexical(scope: RetrievalScope, query: string, limit: number, signal?: AbortSignal): Promise<ChunkMatch[]>;
  /** Exact cosine over the stored vectors; best first; at most `limit`. */
  searchVector(scope: RetrievalScope, vector: Float32Array, limit: number, signal?: AbortSignal): Promise<ChunkMatch[]>;
}

/** This process as one replica of the store: its id (the owner of the work it starts) and the signals between replicas. */
export interface ReplicaStore {
  /** This replica's id; it changes when the lease was lost and taken anew. */
  readonly id: string;
  /** Tells a replica something for a run it owns (e.g. that the session of its turn was deleted). */
  signal(owner: string, signal: StoreSignal): Promise<void>;
  /** Tells every replica (this one too), for what no row says the owner of. */
  broadcast(signal: StoreSignal): Promise<void>;
  /** Called for every signal addressed to this replica. */
  onSignal(handler: (signal: StoreSignal) => void): void;
}

/** Usage records, and the runs in flight that a crash leaves to be recorded as interrupted. */
export interface UsageStore {
  /** Marks a run in flight until its usage record arrives; resolves once durable. */
  runStarted(record: RunStartRecord): Promise<void>;
  record(record: UsageRecord): Promise<void>;
  summary(): Promise<UsageSummary>;
  /** Token, run and cost totals of the stored usage records, optionally since a time and grouped (`agenticdriver usage`). */
  totals(query: UsageTotalsQuery): Promise<UsageTotalsRow[]>;
  /** One page of finished runs' usage records (embedding calls left out), newest first, filtered. */
  finished(query: FinishedRunsQuery): Promise<FinishedRunsPage>;
  /** The newest usage record's finish time (embedding calls included). */
  lastFinishedAt(): Promise<string | undefined>;
}

/** The approval audit log. */
export interface AuditStore {
  /** Appends one record durably, or throws. */
  append(record: AuditRecord): Promise<void>;
  /** The newest records first. */
  read(limit: number): Promise<AuditRecord[]>;
  /** One page, newest first, older than the record `before` when given, with each record's id. */
  page(limit: number, before?: number): Promise<{ id: number; record: AuditRecord }[]>;
}

/** Operation records of idempotent runs. */
export interface OperationStore {
  find(subject: string, key: string): Promise<OperationRecord | undefined>;
  /** Claims the key for this replica, or returns the record of whoever owns it. */
  claim(claim: OperationClaim): Promise<{ claimed: true } | { claimed: false; existing: OperationRecord }>;
  /**
   * Appends to a record this replica owns and is still running; a terminal `state` closes it.
   * Throws OPERATION_RECORD_LIMIT past `maxBytes` (terminal events always fit) and
   * OPERATION_STORE_ERROR when the record is no longer this replica's to write.
   */
  append(subject: string, key: string, runId: string, entry: JournalEntry, options: { maxBytes: number; state?: Exclude<OperationState, 'running'> }): Promise<void>;
  /** Drops finished records last updated before `before` (epoch ms); returns how many. */
  expire(before: number): Promise<number>;
}

/** Pending interactive approvals. */
export interface ApprovalStore {
  open(row: Omit<ApprovalRow, 'state' | 'resolution' | 'ownerAlive'>, audit: AuditRecord): Promise<void>;
  read(approvalId: string): Promise<ApprovalRow | undefined>;
  /**
   * Resolves a pending approval whose run is alive, with its audit record, in one
   * transaction, and signals the owner. False when it is not pending or its run is gone.
   */
  resolve(resolution: ApprovalResolution, audit: AuditRecord): Promise<boolean>;
  /** Pending approvals of every subject, oldest first (the operator's list). */
  pending(limit: number): Promise<ApprovalRow[]>;
  /** How many approvals are pending (every subject, runs alive). */
  pendingCount(): Promise<number>;
}

/** Application-tool tickets. */
export interface TicketStore {
  open(row: Omit<TicketRow, 'state' | 'ownerAlive'>): Promise<void>;
  read(executionId: string): Promise<TicketRow | undefined>;
  /** Consumes a pending ticket whose run is alive with its one result and signals the owner. */
  settle(executionId: string, result: TicketResult): Promise<boolean>;
  /** The result a settled ticket holds (read by the owner when signalled). */
  result(executionId: string): Promise<TicketResult | undefined>;
  /** The run ended: the ticket can no longer be used. */
  close(executionId: string): Promise<void>;
  /** Tells the owner of a pending ticket that the application reported progress. */
  progress(executionId: string): Promise<void>;
}

/**
 * One charge of a run against one governance counter (`sql/tables/limits.ts`): it fits when
 * `used + reserved + need <= limit`; then `use` is added to what was used and `reserve` held
 * for the run until it is settled or released.
 */
export interface LimitCharge {
  /** Whose counter: `host`, `subject:<subject>` or `token:<token id>`. */
  scope: string;
  /** What it counts, e.g. `requests`, `tokens-minute`, `runs`, `usd:day`. */
  metric: string;
  /** The window's start (epoch ms; 0 when the counter has no window); for a rolling period, the current bucket's. */
  window: number;
  /** A rolling period: every bucket from this start on counts. */
  since?: number;
  limit: number;
  need: number;
  use: number;
  reserve: number;
}

export interface LimitCounter {
  used: number;
  reserved: number;
}

/** The first charge that did not fit, with its counter as it stood. */
export interface LimitRefusal extends LimitCounter {
  charge: LimitCharge;
}

/** Usage added to a counter when a step settles. */
export interface LimitUse {
  scope: string;
  metric: string;
  window: number;
  amount: number;
}

/** Governance counters, atomic across replicas; reservations are held per run (`holdId`) and released by the reaper when their replica died. */
export interface LimitStore {
  /** All of `charges` or none: undefined when every one fitted, else the first that did not. */
  take(holdId: string, charges: readonly LimitCharge[]): Promise<LimitRefusal | undefined>;
  /** Releases the run's holds of `release` metrics and adds `uses`, in one transaction. */
  settle(holdId: string, uses: readonly LimitUse[], release: readonly string[]): Promise<void>;
  /** Releases every hold the run still has. */
  release(holdId: string): Promise<void>;
  read(scope: string, metric: string, window: number, since?: number): Promise<LimitCounter>;
  /** Deletes the per-minute counters (requests, tokens) of windows that started before `before`. */
  prune(before: number): Promise<void>;
}

/** Where and how to notify an A2A client of its task (the A2A config, minus its ids). */
export interface PushTarget {
  url: string;
  /** Sent back in the notification-token header, for the client to check. */
  token: string;
  /** Sent as `Authorization: <scheme> <credentials>`. */
  authentication: { scheme: string; credentials: string } | undefined;
}

/** An A2A push-notification config of a task (a background run). */
export interface PushConfigRow {
  taskId: string;
  configId: string;
  subject: string;
  /** The A2A version the config was set with: notifications are sent in its form. */
  wire: string;
  config: PushTarget;
}

/** A delivery that is due: the config, and the point of the run to tell it of. */
export interface PushDue extends PushConfigRow {
  point: string;
  /** Failed attempts at this point so far. */
  attempts: number;
}

/** A2A push-notification configs and their deliveries, claimed by any replica (`sql/tables/push-configs.ts`). */
export interface PushConfigStore {
  put(row: PushConfigRow, max: number): Promise<boolean>;
  read(taskId: string, configId: string): Promise<PushConfigRow | undefined>;
  list(taskId: string): Promise<PushConfigRow[]>;
  delete(taskId: string, configId: string): Promise<boolean>;
  due(limit: number): Promise<PushDue[]>;
  claim(due: PushDue, leaseMs: number): Promise<boolean>;
  delivered(due: PushDue): Promise<void>;
  failed(due: PushDue, retryAt: number): Promise<void>;
  prune(): Promise<number>;
}

export interface StateStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Governance counters (config `limits`). */
  readonly limits: LimitStore;
  readonly replica: ReplicaStore;
  readonly usage: UsageStore;
  readonly audit: AuditStore;
  readonly operations: OperationStore;
  readonly approvals: ApprovalStore;
  readonly tickets: TicketStore;
  readonly jobs: JobStore;
  readonly checkpoints: CheckpointStore;
  readonly runs: RunRecordStore;
  readonly sessions: SessionStore;
  /** A2A push-notification configs. */
  readonly pushConfigs: PushConfigStore;
  /** Indexed sources and chunks for scoped retrieval, searched with the engine's own full-text search. */
  readonly retrieval: RetrievalIndexStore;
  /**
   * Registers this replica under a lease, reaps what dead replicas left open (on SQLite: all
   * of it, the file is this process's alone) and keeps renewing. `onLeaseLost` is called when
   * a renewal finds the lease gone: this replica's open work was reaped and can no longer commit.
   */
  start(options: { leaseMs: number; onLeaseLost(): void; onError?(error: unknown): void }): Promise<ReconcileReport>;
  /** Cheap reads that change whenever the operator's lists do (pending approvals, finished runs, jobs). */
  operatorMarks(): Promise<OperatorMarks>;
  close(): Promise<void>;
}
