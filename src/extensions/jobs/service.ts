/**
 * Durable jobs (feature `durable-jobs`): a run that outlives its HTTP connection. Submitted
 * jobs are rows in the store; every replica runs a small worker pool that claims queued jobs
 * fairly and commits each event before pulling the next (so `tool.called` is durable before
 * the tool runs). A job runs under the host's admission caps like a connected run: one whose
 * subject (or the host) has no slot left stays queued, holding no worker, until a slot frees.
 * A started job is never run again: a job whose replica dies is reported
 * `interrupted` with outcome uncertain. A client disconnect never cancels a job; `cancel` does,
 * on whichever replica it arrives.
 *
 * With `interactive` (feature `interactive-jobs`), a job may use interactive approvals and
 * application tools, be a session turn and carry an idempotency key (claimed by the run service
 * as for an attached run; they wait with the run's checkpoint). While it waits for a decision or a result between model steps it is
 * checkpointed in the store (`store.checkpoints`) and holds no worker and no admission slot;
 * the answer, posted to any replica, queues it again, and a worker on any replica goes on from
 * the checkpoint.
 */
import { DriverError, toDriverError } from '../../protocol/errors.js';
import type { JobEventPage, JobEventsRequest, JobInfo, JobList, JobListRequest, JobSubmit, RunEvent, RunRequest } from '../../protocol/schemas.js';
import { isJournaled, type RunCheckpoint, type RunJournal } from '../../runtime/services.js';
import type { EventPayload } from '../../runtime/types.js';
import { canonicalJson } from '../../shared/json-identity.js';
import type { JobRow, StateStore } from '../../store/store.js';
import { requireGrant, requireResources, type Principal } from '../../http/access.js';
import type { BackgroundParking, RunCaller, RunService } from '../../http/run-service.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../shared/clock.js';

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
  /** How often a replica looks for queued jobs and cancel requests it was not told of (default 250 ms). */
  pollIntervalMs?: number;
  /** Jobs may wait for people: interactive approvals and application tools (feature `interactive-jobs`). */
  interactive?: boolean;
}

export const JOB_DEFAULTS = { workers: 4, maxJobs: 1000, maxJobsPerSubject: 100, maxJobBytes: 8_000_000, pollIntervalMs: 250 };
export const MAX_PAGE_EVENTS = 100;
export const MAX_PAGE_BYTES = 1_500_000;

/** What a job refuses unless `interactive-jobs` is on: what needs someone to answer for it, a session turn, an idempotency key. */
const UNSUPPORTED: (keyof RunRequest)[] = ['session', 'applicationTools', 'approvals', 'idempotencyKey'];

export class JobService {
  private readonly active = new Map<string, AbortController>();
  private readonly workers: number;
  private readonly maxJobBytes: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private unwatch: (() => void)[] = [];
  private pumping: Promise<void> | undefined;
  private again = false;
  private closing = false;

  constructor(
    private readonly store: Pick<StateStore, 'jobs' | 'checkpoints'>,
    /** The one run path; its admission caps are shared with attached runs. */
    private readonly runs: RunService,
    /** The submitting token as configured now (undefined once it is gone): dispatch re-checks it. */
    private readonly callerOf: (tokenId: string) => Principal | undefined,
    readonly policy: JobsPolicy,
    private readonly onError: (error: unknown) => void,
    /** The host's clock: the one a waiting run's deadlines were set by. */
    private readonly clock: Pick<Clock, 'now'> = systemClock,
  ) {
    this.workers = policy.workers ?? JOB_DEFAULTS.workers;
    this.maxJobBytes = policy.maxJobBytes ?? JOB_DEFAULTS.maxJobBytes;
  }

  /** Starts this replica's worker pool. */
  start(): void {
    this.timer = setInterval(() => this.kick(), this.policy.pollIntervalMs ?? JOB_DEFAULTS.pollIntervalMs);
    this.timer.unref();
    // A job queued or a cancel asked on any replica, or a slot freed here, is acted on at once;
    // the interval is the fallback for a lost announcement.
    this.unwatch = [
      this.runs.admission.onFreed(() => this.kick()),
      this.store.jobs.onChange((change) => {
        if (change.kind === 'queued') this.kick();
        if (change.kind === 'cancel') this.active.get(change.id)?.abort(new DriverError('CANCELLED', 'The job was cancelled.'));
      }),
    ];
    this.kick();
  }

  async submit(body: JobSubmit, caller: RunCaller): Promise<JobInfo> {
    const unsupported = this.policy.interactive ? [] : UNSUPPORTED.filter((field) => body.request[field] !== undefined);
    if (unsupported.length > 0) {
      throw new DriverError('JOB_REQUEST_UNSUPPORTED', `A job cannot use ${unsupported.join(', ')}: nobody is connected to answer for it.`);
    }
    const request = await this.runs.checkBackground(body.request, caller);
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

  async read(id: string, caller: RunCaller): Promise<JobInfo> {
    return (await this.load(id, caller)).info;
  }

  /**
   * The caller's subject's jobs that this token could read (its providers, tools and corpora),
   * newest first; expired ones are left out. A page may hold fewer than `limit` when the
   * subject's other tokens submitted jobs this one may not see.
   */
  async list(request: JobListRequest, caller: RunCaller): Promise<JobList> {
    const rows = await this.store.jobs.list(request.limit ?? DEFAULT_LIST_LIMIT, {
      subject: caller.subject,
      providers: [...caller.providers],
      ...(request.state ? { state: request.state } : {}),
    });
    const readable = rows.filter((row) => {
      if (row.expired || !row.request) return false;
      try {
        requireResources(row.request, caller);
        return true;
      } catch {
        return false;
      }
    });
    return { jobs: readable.map((row) => row.info) };
  }

  async cancel(id: string, caller: RunCaller): Promise<JobInfo> {
    await this.load(id, caller);
    const job = await this.store.jobs.cancel(id);
    if (!job) throw notFound();
    // A running job here stops at once; elsewhere its replica sees the flag at its next poll.
    this.active.get(id)?.abort(new DriverError('CANCELLED', 'The job was cancelled.'));
    return job.info;
  }

  async events(request: JobEventsRequest, caller: RunCaller): Promise<JobEventPage> {
    const before = await this.load(request.id, caller);
    if (request.after > before.info.cursor) {
      throw new DriverError('INVALID_JOB_CURSOR', `The cursor ${request.after} is past the job's last event (${before.info.cursor}).`);
    }
    const events = await this.store.jobs.events(request.id, request.after, request.limit ?? MAX_PAGE_EVENTS, MAX_PAGE_BYTES);
    // Read after the events, so the page never holds an event beyond the job's cursor.
    const job = (await this.store.jobs.read(request.id)) ?? before.row;
    const nextCursor = events.at(-1)?.sequence ?? request.after;
    return { job: job.info, events, nextCursor, hasMore: nextCursor < job.info.cursor };
  }

  /** Loads a job for its subject, refusing others without telling whether it exists. */
  async load(id: string, caller: RunCaller): Promise<{ info: JobInfo; row: JobRow }> {
    const job = await this.store.jobs.read(id);
    if (!job || job.subject !== caller.subject) throw notFound();
    if (job.expired) throw expired();
    requireResources(job.request!, caller);
    return { info: job.info, row: job };
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
    for (const stop of this.unwatch.splice(0)) stop();
    await this.pumping;
    await this.store.jobs.interruptOwn().catch((error: unknown) => this.onError(error));
    for (const controller of this.active.values()) controller.abort(new DriverError('HOST_SHUTTING_DOWN', 'The host is shutting down.', { retryable: true }));
  }

  /** Looks for work now; a kick during a look makes it look once more after (a freed slot is never missed). */
  private kick(): void {
    if (this.closing) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump()
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.pumping = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pump(): Promise<void> {
    for (const id of await this.store.jobs.cancelRequested()) {
      this.active.get(id)?.abort(new DriverError('CANCELLED', 'The job was cancelled.'));
    }
    // Waiting jobs whose approval expired or whose idle deadline passed go on, to end as a connected run would.
    if (this.policy.interactive) await this.store.checkpoints.due(this.clock.now());
    while (!this.closing && this.active.size < this.workers) {
      const waiting = this.runs.admission.waiting();
      if (waiting.full) return;
      const job = await this.store.jobs.claim(waiting.subjects);
      if (!job) return;
      // A connected run may have taken the last slot while the claim was on its way.
      const release = this.runs.admission.tryAcquire(job.subject);
      if (!release) {
        await this.store.jobs.requeue(job.info.id);
        return;
      }
      const controller = new AbortController();
      // A checkpointed job cancelled while it waited goes on only to end: what it waits for is cancelled first.
      if (job.info.cancelRequested) controller.abort(new DriverError('CANCELLED', 'The job was cancelled.'));
      this.active.set(job.info.id, controller);
      void this.execute(job, controller, release).finally(() => {
        release();
        this.active.delete(job.info.id);
        this.kick();
      });
    }
  }

  /** Where a job's run hands its checkpoint when it waits for a person (with what waits with it). */
  private parking(id: string): BackgroundParking {
    return {
      park: (checkpoint, holds) => {
        const { waiting } = checkpoint;
        const wait = waiting.kind === 'approval' ? { kind: 'approval' as const, id: waiting.approvalId } : { kind: 'ticket' as const, id: waiting.executionId };
        return this.store.checkpoints.park(id, wait, checkpoint, checkpoint.wakeAt, holds);
      },
    };
  }

  private async execute(job: JobRow, controller: AbortController, release: () => void): Promise<void> {
    const id = job.info.id;
    const barrier = new CommitBarrier();
    let events: AsyncGenerator<RunEvent>;
    try {
      // The submitting token must still be configured, for the same subject, with its grants.
      const caller = this.callerOf(job.tokenId);
      if (!caller || caller.subject !== job.subject) throw new DriverError('FORBIDDEN', 'The token that submitted this job is no longer configured for its subject.');
      requireGrant(caller, { name: 'jobs', operation: 'submit' });
      const saved = await this.store.checkpoints.read(id);
      events = await this.runs.background(job.request!, caller, {
        runId: job.info.runId,
        jobId: id,
        journal: barrier,
        controller,
        release,
        ...(this.policy.interactive ? { parking: this.parking(id) } : {}),
        ...(saved ? { resume: { checkpoint: saved.checkpoint as RunCheckpoint, sequence: job.info.cursor } } : {}),
      });
    } catch (error) {
      const failure = toDriverError(error);
      // As an attached run is refused before its first event (a grant gone, the session busy, the key in progress).
      await this.store.jobs.fail(id, { code: failure.code.slice(0, 80), message: failure.message, retryable: failure.retryable });
      return;
    }
    let failure: DriverError | undefined;
    // The barrier is released before leaving the loop: leaving waits for the run to end, and
    // the run may be waiting at a commit point.
    for await (const event of events) {
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
    if (TERMINAL_EVENT_TYPES.has(event.type)) return Promise.resolve();
    const upTo = ++this.recorded;
    if (this.failure) return Promise.reject(this.failure);
    if (this.appended >= upTo) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiting.push({ upTo, resolve, reject }));
  }

  committed(event: RunEvent): void {
    if (!isJournaled(event) || TERMINAL_EVENT_TYPES.has(event.type)) return;
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

const DEFAULT_LIST_LIMIT = 20;
const notFound = () => new DriverError('JOB_NOT_FOUND', 'No such job.');
const expired = () => new DriverError('JOB_EXPIRED', 'This job finished and its retention ended; its events are gone, and it is not run again.');
