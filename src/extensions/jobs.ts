/**
 * Durable jobs (feature `durable-jobs`): a run that outlives its HTTP connection. Submitted
 * jobs are rows in the store; every replica runs a small worker pool that claims queued jobs
 * fairly and commits each event before pulling the next (so `tool.called` is durable before
 * the tool runs). A started job is never run again: a job whose replica dies is reported
 * `interrupted` with outcome uncertain. A client disconnect never cancels a job; `cancel` does,
 * on whichever replica it arrives.
 */
import { DriverError, toDriverError } from '../protocol/errors.js';
import type { JobEventPage, JobEventsRequest, JobInfo, JobList, JobListRequest, JobSubmit, RunEvent, RunRequest } from '../protocol/schemas.js';
import type { AgenticDriver } from '../runtime/driver.js';
import type { PreparedRun } from '../runtime/prepared-run.js';
import { isJournaled, type RunJournal } from '../runtime/services.js';
import type { EventPayload } from '../runtime/types.js';
import { canonicalJson } from '../shared/json-identity.js';
import type { JobRow, StateStore } from '../store/store.js';
import { createHash } from 'node:crypto';
import { corpusNotGranted, providerNotGranted, toolNotGranted } from '../shared/grants.js';

export interface JobsPolicy {
  /** How long a finished job's events are kept (its row stays as a tombstone). */
  retentionMs: number;
  /** Jobs this replica runs at once (default 4). */
  workers?: number;
  /** Jobs the store holds, tombstones included (default 1000), and per subject (default 100). */
  maxJobs?: number;
  maxJobsPerSubject?: number;
  /** Largest event log of one job, in bytes of JSON (default 8,000,000). */
  maxJobBytes?: number;
  /** How often a replica looks for queued jobs and cancel requests (default 250 ms). */
  pollIntervalMs?: number;
}

export const JOB_DEFAULTS = { workers: 4, maxJobs: 1000, maxJobsPerSubject: 100, maxJobBytes: 8_000_000, pollIntervalMs: 250 };
export const MAX_PAGE_EVENTS = 100;
export const MAX_PAGE_BYTES = 1_500_000;

/** Who is asking, with the grants jobs check (the host's principal). */
export interface JobCaller {
  subject: string;
  tokenId: string;
  jobs: ReadonlySet<string>;
  providers: ReadonlySet<string>;
  tools: ReadonlySet<string>;
  /** Retrieval corpora the caller may search (a job's run with `retrieval`). */
  retrieval?: { search: ReadonlySet<string> };
}

const UNSUPPORTED: (keyof RunRequest)[] = ['session', 'applicationTools', 'approvals', 'idempotencyKey'];

export class JobService {
  private readonly active = new Map<string, AbortController>();
  private readonly workers: number;
  private readonly maxJobBytes: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private pumping: Promise<void> | undefined;
  private closing = false;

  constructor(
    private readonly store: Pick<StateStore, 'jobs' | 'interruptOwnJobs'>,
    private readonly driver: AgenticDriver,
    /** The submitting token as configured now (undefined once it is gone): dispatch re-checks it. */
    private readonly callerOf: (tokenId: string) => JobCaller | undefined,
    readonly policy: JobsPolicy,
    private readonly onError: (error: unknown) => void,
    /** Watches a job's events on their way to the log (the host's tracing and run monitor); must pass them through unchanged. */
    private readonly observe: (events: AsyncGenerator<RunEvent>, prepared: PreparedRun, jobId: string) => AsyncGenerator<RunEvent> = (events) => events,
  ) {
    this.workers = policy.workers ?? JOB_DEFAULTS.workers;
    this.maxJobBytes = policy.maxJobBytes ?? JOB_DEFAULTS.maxJobBytes;
  }

  /** Starts this replica's worker pool. */
  start(): void {
    this.timer = setInterval(() => this.kick(), this.policy.pollIntervalMs ?? JOB_DEFAULTS.pollIntervalMs);
    this.timer.unref();
    this.kick();
  }

  async submit(body: JobSubmit, caller: JobCaller): Promise<JobInfo> {
    requireGrant(caller, 'submit');
    const unsupported = UNSUPPORTED.filter((field) => body.request[field] !== undefined);
    if (unsupported.length > 0) {
      throw new DriverError('JOB_REQUEST_UNSUPPORTED', `A job cannot use ${unsupported.join(', ')}: nobody is connected to answer for it.`);
    }
    const request = this.driver.parse(body.request);
    requireResources(caller, request);
    // Everything a run would refuse is refused now, before anything is queued.
    this.driver.prepareParsed(request, { subject: caller.subject });
    const { job } = await this.store.jobs.submit({
      subject: caller.subject,
      key: body.key,
      fingerprint: createHash('sha256').update(canonicalJson(request)).digest('hex'),
      tokenId: caller.tokenId,
      request,
      retentionMs: this.policy.retentionMs,
      maxJobs: this.policy.maxJobs ?? JOB_DEFAULTS.maxJobs,
      maxJobsPerSubject: this.policy.maxJobsPerSubject ?? JOB_DEFAULTS.maxJobsPerSubject,
    });
    if (job.expired) throw expired();
    this.kick();
    return job.info;
  }

  async read(id: string, caller: JobCaller): Promise<JobInfo> {
    return (await this.load(id, caller, 'read')).info;
  }

  /**
   * The caller's subject's jobs that this token could read (its providers, tools and corpora),
   * newest first; expired ones are left out. A page may hold fewer than `limit` when the
   * subject's other tokens submitted jobs this one may not see.
   */
  async list(request: JobListRequest, caller: JobCaller): Promise<JobList> {
    requireGrant(caller, 'read');
    const rows = await this.store.jobs.list(request.limit ?? DEFAULT_LIST_LIMIT, {
      subject: caller.subject,
      providers: [...caller.providers],
      ...(request.state ? { state: request.state } : {}),
    });
    const readable = rows.filter((row) => {
      if (row.expired || !row.request) return false;
      try {
        requireResources(caller, row.request);
        return true;
      } catch {
        return false;
      }
    });
    return { jobs: readable.map((row) => row.info) };
  }

  async cancel(id: string, caller: JobCaller): Promise<JobInfo> {
    await this.load(id, caller, 'cancel');
    const job = await this.store.jobs.cancel(id);
    if (!job) throw notFound();
    // A running job here stops at once; elsewhere its replica sees the flag at its next poll.
    this.active.get(id)?.abort(new DriverError('CANCELLED', 'The job was cancelled.'));
    return job.info;
  }

  async events(request: JobEventsRequest, caller: JobCaller): Promise<JobEventPage> {
    const before = await this.load(request.id, caller, 'read');
    if (request.after > before.info.cursor) {
      throw new DriverError('INVALID_JOB_CURSOR', `The cursor ${request.after} is past the job's last event (${before.info.cursor}).`);
    }
    const events = await this.store.jobs.events(request.id, request.after, request.limit ?? MAX_PAGE_EVENTS, MAX_PAGE_BYTES);
    // Read after the events, so the page never holds an event beyond the job's cursor.
    const job = (await this.store.jobs.read(request.id)) ?? before.row;
    const nextCursor = events.at(-1)?.sequence ?? request.after;
    return { job: job.info, events, nextCursor, hasMore: nextCursor < job.info.cursor };
  }

  /** Loads a job for its subject with the grant `operation`, refusing others without telling whether it exists. */
  async load(id: string, caller: JobCaller, operation: 'read' | 'cancel'): Promise<{ info: JobInfo; row: JobRow }> {
    requireGrant(caller, operation);
    const job = await this.store.jobs.read(id);
    if (!job || job.subject !== caller.subject) throw notFound();
    if (job.expired) throw expired();
    requireResources(caller, job.request!);
    return { info: job.info, row: job };
  }

  /** Committed events after `after` (the live stream follows these). */
  committed(id: string, after: number, limit: number, maxBytes: number): Promise<RunEvent[]> {
    return this.store.jobs.events(id, after, limit, maxBytes);
  }

  /** Tombstones jobs whose retention ended. */
  expire(): Promise<number> {
    return this.store.jobs.expire();
  }

  /**
   * Stops taking jobs; this replica's running jobs become interrupted (never re-run, never
   * recorded as cancelled by the shutdown), queued ones stay for the next worker.
   */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    await this.pumping;
    await this.store.interruptOwnJobs().catch((error: unknown) => this.onError(error));
    for (const controller of this.active.values()) controller.abort(new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true }));
  }

  private kick(): void {
    if (this.closing || this.pumping) return;
    this.pumping = this.pump()
      .catch((error: unknown) => this.onError(error))
      .finally(() => (this.pumping = undefined));
  }

  private async pump(): Promise<void> {
    for (const id of await this.store.jobs.cancelRequested()) {
      this.active.get(id)?.abort(new DriverError('CANCELLED', 'The job was cancelled.'));
    }
    while (!this.closing && this.active.size < this.workers) {
      const job = await this.store.jobs.claim();
      if (!job) return;
      const controller = new AbortController();
      this.active.set(job.info.id, controller);
      void this.execute(job, controller).finally(() => {
        this.active.delete(job.info.id);
        this.kick();
      });
    }
  }

  private async execute(job: JobRow, controller: AbortController): Promise<void> {
    const id = job.info.id;
    let prepared;
    try {
      // The submitting token must still be configured, for the same subject, with its grants.
      const caller = this.callerOf(job.tokenId);
      if (!caller || caller.subject !== job.subject) throw new DriverError('FORBIDDEN', 'The token that submitted this job is no longer configured for its subject.');
      requireGrant(caller, 'submit');
      requireResources(caller, job.request!);
      prepared = this.driver.prepareParsed(job.request!, { subject: job.subject, tokenId: job.tokenId });
    } catch (error) {
      const failure = toDriverError(error);
      await this.store.jobs.fail(id, { code: failure.code.slice(0, 80), message: 'The job was refused when it was about to start.', retryable: false });
      return;
    }
    const barrier = new CommitBarrier();
    let failure: DriverError | undefined;
    // The barrier is released before leaving the loop: leaving waits for the run to end, and
    // the run may be waiting at a commit point.
    for await (const event of this.observe(this.driver.execute(prepared, controller.signal, { runId: job.info.runId, journal: barrier }), prepared, id)) {
      if (this.closing) {
        barrier.fail(new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true }));
        break;
      }
      try {
        await this.store.jobs.append(id, event, this.maxJobBytes);
      } catch (error) {
        failure = toDriverError(error);
        barrier.fail(failure);
        controller.abort(failure);
        break;
      }
      barrier.committed(event);
    }
    if (failure?.code === 'JOB_RECORD_LIMIT') {
      await this.store.jobs.fail(id, failure.toJSON(), 'interrupted').catch((error: unknown) => this.onError(error));
    } else if (failure && failure.code !== 'JOB_LEASE_LOST') {
      // The store failed: the job stays running until its lease lapses and is then reported interrupted.
      this.onError(failure);
    }
  }
}

/**
 * The job's journal: a run that reaches a commit point (`tool.called` before its tool runs,
 * a tool's output before the model sees it) waits until the worker has committed that event
 * to the job's log. Terminal events are committed by the worker after the run hands them over.
 */
class CommitBarrier implements RunJournal {
  private recorded = 0;
  private appended = 0;
  private failure: DriverError | undefined;
  private readonly waiting: { upTo: number; resolve(): void; reject(error: DriverError): void }[] = [];

  record(_runId: string, event: EventPayload): Promise<void> {
    if (isTerminal(event.type)) return Promise.resolve();
    const upTo = ++this.recorded;
    if (this.failure) return Promise.reject(this.failure);
    if (this.appended >= upTo) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiting.push({ upTo, resolve, reject }));
  }

  committed(event: RunEvent): void {
    if (!isJournaled(event) || isTerminal(event.type)) return;
    this.appended += 1;
    for (const waiter of this.waiting.filter((item) => item.upTo <= this.appended)) {
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  fail(error: DriverError): void {
    this.failure ??= error;
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }
}

function isTerminal(type: string): boolean {
  return type === 'run.completed' || type === 'run.failed' || type === 'run.cancelled';
}

function requireGrant(caller: JobCaller, operation: 'submit' | 'read' | 'cancel'): void {
  if (!caller.jobs.has(operation)) throw new DriverError('FORBIDDEN', `This token may not ${operation} jobs.`);
}

/** Provider and tool grants, checked on every call and again at dispatch. */
function requireResources(caller: JobCaller, request: RunRequest): void {
  if (!caller.providers.has(request.provider)) throw providerNotGranted(request.provider);
  for (const tool of request.tools ?? []) {
    if (!caller.tools.has(tool)) throw toolNotGranted(tool);
  }
  if (request.retrieval && !caller.retrieval?.search.has(request.retrieval.corpus)) {
    throw corpusNotGranted(request.retrieval.corpus, 'search');
  }
}

const DEFAULT_LIST_LIMIT = 20;
const notFound = () => new DriverError('JOB_NOT_FOUND', 'No such job.');
const expired = () => new DriverError('JOB_EXPIRED', 'This job finished and its retention ended; its events are gone, and it is not run again.');
