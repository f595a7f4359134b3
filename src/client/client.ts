/**
 * AgenticClient: the TypeScript consumer of wire protocol 1.0. Works in Node (20+) and
 * browsers; every answer is validated before it reaches the caller.
 */
import { DriverError } from '../protocol/errors.js';
import type {
  ApprovalDecision,
  ApprovalRequest,
  ApprovalResolution,
  ErrorInfo,
  IngestRequest,
  IngestResult,
  JobEventPage,
  JobEventsRequest,
  JobIdentity,
  JobInfo,
  JobList,
  JobListRequest,
  JobSubmit,
  ProtocolInfo,
  Provider,
  RetrievalDeleteRequest,
  RetrievalDeleteResult,
  RetrievalIndexReceipt,
  RetrievalIndexRequest,
  RetrievalResult,
  RetrievalSearch,
  RunEvent,
  RunEventOf,
  RunEventPage,
  RunEventsRequest,
  RunInfo,
  RunReadRequest,
  RunRequest,
  RunResult,
  SessionCreate,
  SessionDeleteResult,
  SessionIdentity,
  SessionInfo,
  SessionList,
  SessionListRequest,
  SessionSnapshot,
  ToolExecution,
  ToolExecutionIdentity,
  ToolExecutionReceipt,
  ToolExecutionResult,
} from '../protocol/schemas.js';
import { hasUnsafeKeys } from '../protocol/plain-json.js';
import type { Validator } from '../protocol/validate.js';
import { parseBaseUrl } from './base-url.js';
import { exchange, readJson, toClientError } from './http.js';
import { openTransport, type Transport, type TransportOptions } from './transport.js';
import { operation, pathOf, type Operation } from './operations.js';
import { PendingApproval, PendingExecution, runApplicationTools, type InteractiveCalls, type ToolFunctions } from './interactive.js';
import { JobStreamChecker, RunEventChecker, RunRecordChecker, type LogStreamChecker } from './run-events.js';
import { SseFrameReader } from './sse.js';


export interface ClientOptions extends TransportOptions {
  /** Host base URL; https, or http on loopback. A path prefix is kept. */
  url: string;
  /** Bearer token issued by the host operator. */
  token: string;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

/** How tailJob() and followRun() reconnect after a dropped stream. */
export interface TailOptions extends RequestOptions {
  /** The last sequence the caller already has; events after it are delivered (default 0: the whole log). */
  after?: number;
  /** Consecutive failed connection attempts after which tailJob() gives up with JOB_STREAM_LOST, followRun() with RUN_STREAM_LOST (default 5). */
  maxAttempts?: number;
  /** Wait before the first reconnection, doubled per further failure (default 250 ms). */
  initialDelayMs?: number;
  /** Longest wait between reconnections (default 5000 ms). */
  maxDelayMs?: number;
}

/** Discovery calls (protocol, providers) are bounded; runs never are. */
export const DISCOVERY_TIMEOUT_MS = 10_000;

const ops = {
  protocol: operation<never, ProtocolInfo>('getProtocol'),
  providers: operation<never, { providers: Provider[] }>('listProviders'),
  run: operation<RunRequest, RunResult>('run'),
  decideApproval: operation<ApprovalDecision, ApprovalResolution>('decideApproval'),
  reportToolProgress: operation<ToolExecutionIdentity, ToolExecutionReceipt>('reportToolProgress'),
  completeTool: operation<ToolExecutionResult, ToolExecutionReceipt>('completeTool'),
  createSession: operation<SessionCreate, SessionSnapshot>('createSession'),
  readSession: operation<SessionIdentity, SessionSnapshot>('readSession'),
  listSessions: operation<SessionListRequest, SessionList>('listSessions'),
  deleteSession: operation<SessionIdentity, SessionDeleteResult>('deleteSession'),
  submitJob: operation<JobSubmit, JobInfo>('submitJob'),
  readJob: operation<JobIdentity, JobInfo>('readJob'),
  listJobs: operation<JobListRequest, JobList>('listJobs'),
  cancelJob: operation<JobIdentity, JobInfo>('cancelJob'),
  jobEvents: operation<JobEventsRequest, JobEventPage>('jobEvents'),
  streamJob: operation('streamJob'),
  readRun: operation<RunReadRequest, RunInfo>('readRun'),
  runEvents: operation<RunEventsRequest, RunEventPage>('runEvents'),
  streamRun: operation('streamRun'),
  searchRetrieval: operation<RetrievalSearch, RetrievalResult>('searchRetrieval'),
  indexSource: operation<RetrievalIndexRequest, RetrievalIndexReceipt>('indexSource'),
  deleteSource: operation<RetrievalDeleteRequest, RetrievalDeleteResult>('deleteSource'),
  ingestDocument: operation<IngestRequest, IngestResult>('ingestDocument'),
};
const FINISHED_STATES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);
/** Errors after which a dropped job stream is worth reconnecting: the connection, not the content, failed. */
const RESUMABLE = new Set(['HOST_UNREACHABLE', 'INCOMPLETE_STREAM']);

/** The cursor a tail starts after, and the reconnection bound, checked before anything is sent. */
function checkTail(options: TailOptions, cursorCode: 'INVALID_JOB_CURSOR' | 'INVALID_RUN_CURSOR'): number {
  const after = options.after ?? 0;
  if (!Number.isSafeInteger(after) || after < 0) throw new DriverError(cursorCode, 'after must be a non-negative integer.');
  const maxAttempts = options.maxAttempts ?? 5;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) throw new DriverError('INVALID_ARGUMENT', 'maxAttempts must be a positive integer.');
  return after;
}

export class AgenticClient implements InteractiveCalls {
  private readonly baseUrl: URL;
  private readonly token: string;
  private readonly transport: Promise<Transport>;

  constructor(options: ClientOptions) {
    this.baseUrl = parseBaseUrl(options.url);
    if (typeof options.token !== 'string' || options.token.length === 0 || options.token.length > 4096 || /[\s\0]/.test(options.token)) {
      throw new DriverError('AUTH_REQUIRED', 'A bearer token (1-4096 characters, no whitespace) is required.');
    }
    this.token = options.token;
    this.transport = openTransport(options);
    this.transport.catch(() => undefined);
  }

  /**
   * Closes the connections the client opened itself (the `ca` option's pool); with a caller's
   * or the global fetch there is nothing to close. Streams still open fail once it is closed.
   */
  async close(): Promise<void> {
    await (await this.transport).close();
  }

  /** GET v1/protocol: the host's protocol description. */
  async protocol(options: RequestOptions = {}): Promise<ProtocolInfo> {
    return this.discover(ops.protocol.path, ops.protocol.answer, options);
  }

  /** GET v1/providers: the providers this token may use. */
  async providers(options: RequestOptions & { refresh?: boolean } = {}): Promise<Provider[]> {
    const list = await this.discover(ops.providers.path + (options.refresh ? '?refresh=true' : ''), ops.providers.answer, options);
    return list.providers;
  }

  /** Runs to completion; resolves the validated result or throws the run's DriverError. */
  async run(request: RunRequest, options: RequestOptions = {}): Promise<RunResult> {
    if (request.applicationTools?.length) throw new DriverError('TOOL_STREAM_REQUIRED', 'Application tools need stream(), which can deliver execution requests.');
    if (request.approvals) throw new DriverError('APPROVAL_STREAM_REQUIRED', 'Interactive approvals need stream(), which can deliver approval requests.');
    for await (const event of this.stream(request, options)) {
      if (event.type === 'run.completed') return event.result;
      if (event.type === 'run.failed' || event.type === 'run.cancelled') {
        throw errorOf(event.error);
      }
    }
    throw new DriverError('INCOMPLETE_STREAM', 'The event stream ended without a terminal event.');
  }

  /**
   * Streams the run's validated events, ending with its terminal event. Leaving the loop
   * early or aborting the signal closes the connection, which cancels the run on the host.
   */
  async *stream(request: RunRequest, options: RequestOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
    ops.run.check(request);
    const closer = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, closer.signal]) : closer.signal;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      const response = await exchange({ fetch: (await this.transport).fetch, url: this.endpoint(ops.run.path), token: this.token, body: request, accept: 'text/event-stream', signal });
      if (!response.headers.get('content-type')?.toLowerCase().includes('text/event-stream') || !response.body) {
        throw new DriverError('INVALID_RESPONSE', 'The host did not answer the run with an event stream.');
      }
      reader = response.body.getReader();
      const frames = new SseFrameReader();
      const checker = new RunEventChecker(request);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const data of frames.push(value)) {
          const event = checker.accept(data);
          if (event) yield event;
          if (checker.finished) return;
        }
      }
      frames.end();
      throw new DriverError('INCOMPLETE_STREAM', 'The event stream ended without a terminal event.');
    } catch (error) {
      throw toClientError(error, options.signal);
    } finally {
      closer.abort();
      reader?.cancel().catch(() => undefined);
    }
  }

  /**
   * Streams like stream() and, after yielding each `tool.execution.requested` whose tool
   * has a function in `functions`, runs it and delivers its output (a throw delivers a
   * failure). Executions of tools without a function are left to the caller.
   */
  streamWithTools(request: RunRequest, functions: ToolFunctions, options: RequestOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
    return runApplicationTools(this, request, functions, (signal) => this.stream(request, { signal }), options);
  }

  /** The one-call answers to an `approval.requested` event: approve(), deny(), cancel(). */
  approval(source: RunEventOf<'approval.requested'> | ApprovalRequest): PendingApproval {
    return new PendingApproval(this, source);
  }

  /** The one-call answers to a `tool.execution.requested` event: progress(), complete(output), fail(). */
  execution(source: RunEventOf<'tool.execution.requested'> | ToolExecution): PendingExecution {
    return new PendingExecution(this, source);
  }

  /** POST v1/approvals/decisions: the receipt must name the decided approval, run and call, with the decided outcome. */
  async decideApproval(decision: ApprovalDecision, options: RequestOptions = {}): Promise<ApprovalResolution> {
    ops.decideApproval.check(decision);
    if (hasUnsafeKeys(decision.call.arguments)) throw new DriverError('INVALID_APPROVAL', 'The approval decision carries arguments that are not plain JSON.');
    return this.post(ops.decideApproval, decision, options);
  }

  /** POST v1/tool-executions/progress: real progress on a dispatched application tool. */
  async reportToolProgress(identity: ToolExecutionIdentity, options: RequestOptions = {}): Promise<ToolExecutionReceipt> {
    return this.post(ops.reportToolProgress, identity, options);
  }

  /** POST v1/tool-executions/results: the one result (`output`) or failure (`error`) of a dispatched application tool. */
  async completeTool(result: ToolExecutionResult, options: RequestOptions = {}): Promise<ToolExecutionReceipt> {
    ops.completeTool.check(result);
    if ('output' in result && hasUnsafeKeys(result.output)) throw new DriverError('INVALID_TOOL_EXECUTION', 'The tool output is not plain JSON.');
    return this.post(ops.completeTool, result, options);
  }

  /** POST v1/sessions/create: the receipt must echo the provider, model, mode, history and instructions, at revision 0. */
  async createSession(request: SessionCreate, options: RequestOptions = {}): Promise<SessionSnapshot> {
    return this.post(ops.createSession, request, options);
  }

  /** POST v1/sessions/read: the session's description and visible history. */
  async readSession(id: string, options: RequestOptions = {}): Promise<SessionSnapshot> {
    return this.post(ops.readSession, { id }, options);
  }

  /** POST v1/sessions/list: this token's subject's sessions (on providers it may use), most recently used first. */
  async listSessions(request: SessionListRequest = {}, options: RequestOptions = {}): Promise<SessionInfo[]> {
    return (await this.post(ops.listSessions, request, options)).sessions;
  }

  /** POST v1/sessions/delete: the receipt must name the session and say it was deleted. */
  async deleteSession(id: string, options: RequestOptions = {}): Promise<SessionDeleteResult> {
    return this.post(ops.deleteSession, { id }, options);
  }

  /** POST v1/jobs/submit: the same key and request return the same job; the job must run the requested provider and model. */
  async submitJob(submission: JobSubmit, options: RequestOptions = {}): Promise<JobInfo> {
    return this.post(ops.submitJob, submission, options);
  }

  /** POST v1/jobs/read: the job's current state and cursor. */
  async readJob(id: string, options: RequestOptions = {}): Promise<JobInfo> {
    return this.post(ops.readJob, { id }, options);
  }

  /** POST v1/jobs/list: this token's subject's jobs it may read (optionally in one state), most recently updated first. */
  async listJobs(request: JobListRequest = {}, options: RequestOptions = {}): Promise<JobInfo[]> {
    return (await this.post(ops.listJobs, request, options)).jobs;
  }

  /** POST v1/jobs/cancel: asks a queued or running job to stop; a finished job is returned unchanged. */
  async cancelJob(id: string, options: RequestOptions = {}): Promise<JobInfo> {
    return this.post(ops.cancelJob, { id }, options);
  }

  /** POST v1/jobs/events: one validated page of the job's committed events after `after`. */
  async jobEvents(request: JobEventsRequest, options: RequestOptions = {}): Promise<JobEventPage> {
    return this.post(ops.jobEvents, request, options);
  }

  /**
   * POST v1/retrieval/search: the validated hits of one corpus. The answer must be the
   * requested corpus, at most `limit` (default 8) unique chunks, each from a selected source
   * and at or above minScore, with at most maxContextBytes (default 65,536) of text.
   */
  async searchRetrieval(request: RetrievalSearch, options: RequestOptions = {}): Promise<RetrievalResult> {
    return this.post(ops.searchRetrieval, request, options);
  }

  /** POST v1/retrieval/index: the receipt must name the corpus, source and revision indexed. */
  async indexSource(request: RetrievalIndexRequest, options: RequestOptions = {}): Promise<RetrievalIndexReceipt> {
    return this.post(ops.indexSource, request, options);
  }

  /** POST v1/retrieval/delete: removes one source revision; the receipt must name it. */
  async deleteSource(request: RetrievalDeleteRequest, options: RequestOptions = {}): Promise<RetrievalDeleteResult> {
    return this.post(ops.deleteSource, request, options);
  }

  /**
   * POST v1/retrieval/ingest: extracts, chunks and indexes one document. The receipt must name
   * the corpus, the document's source and revision, and carry an ingestion manifest counting
   * the receipt's chunks.
   */
  async ingestDocument(request: IngestRequest, options: RequestOptions = {}): Promise<IngestResult> {
    return this.post(ops.ingestDocument, request, options);
  }

  /** POST v1/runs/read: any run of this token's subject, attached or background — its state, cursor, and once finished its result or error and usage. */
  async readRun(runId: string, options: RequestOptions = {}): Promise<RunInfo> {
    return this.post(ops.readRun, { runId }, options);
  }

  /** POST v1/runs/events: one validated page of the run's committed events after `after`. */
  async runEvents(request: RunEventsRequest, options: RequestOptions = {}): Promise<RunEventPage> {
    return this.post(ops.runEvents, request, options);
  }

  /**
   * Follows a job's events live (GET v1/jobs/{id}/stream) from `after`, ending with its
   * terminal event. The job is read first (readJob): its run, provider and model are what
   * every event must match, and a finished job already read to its cursor needs no stream. A dropped connection is resumed from the last delivered sequence
   * (`Last-Event-ID`) after a bounded backoff, never repeating or skipping an event; after
   * `maxAttempts` consecutive failed attempts it throws JOB_STREAM_LOST (its
   * cause is the last failure). Leaving the loop closes the stream; the job keeps running.
   */
  async *tailJob(id: string, options: TailOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
    const after = checkTail(options, 'INVALID_JOB_CURSOR');
    const job = await this.readJob(id, options);
    if (after > job.cursor) throw new DriverError('INVALID_JOB_CURSOR', `after ${after} is beyond the job's cursor ${job.cursor}.`);
    if (FINISHED_STATES.has(job.state) && after === job.cursor) return;
    yield* this.resumed(pathOf(ops.streamJob, job.id), new JobStreamChecker(job, after), options, { lost: 'JOB_STREAM_LOST', what: 'job' });
  }

  /**
   * Follows any run's committed events live (GET v1/runs/{runId}/stream) from `after`, on any
   * replica, ending with its terminal event; like tailJob(): the run is read first (readRun),
   * every event must be the run's next one, a dropped connection is resumed with
   * `Last-Event-ID`, and after `maxAttempts` consecutive failed attempts it throws
   * RUN_STREAM_LOST. Leaving the loop closes the stream; the run goes on (an attached run
   * lives as long as the connection that started it).
   */
  async *followRun(runId: string, options: TailOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
    const after = checkTail(options, 'INVALID_RUN_CURSOR');
    const run = await this.readRun(runId, options);
    if (after > run.cursor) throw new DriverError('INVALID_RUN_CURSOR', `after ${after} is beyond the run's cursor ${run.cursor}.`);
    if (FINISHED_STATES.has(run.state) && after === run.cursor) return;
    const interactiveJobs = run.mode === 'background' && (await this.protocol(options)).features.includes('interactive-jobs');
    yield* this.resumed(pathOf(ops.streamRun, run.runId), new RunRecordChecker(run, after, interactiveJobs), options, { lost: 'RUN_STREAM_LOST', what: 'run' });
  }

  /**
   * Waits for any run of this token's subject to end (a background run's `result()`): follows
   * it (followRun, from its current cursor) until its terminal event, and resolves its result
   * or throws its DriverError, as run() does. A run already finished is answered from its
   * record without a stream. It answers nothing itself: a run that waits for a person goes on
   * waiting until someone decides (a handle from followRun, another client, the console).
   */
  async waitRun(runId: string, options: Omit<TailOptions, 'after'> = {}): Promise<RunResult> {
    const read = await this.readRun(runId, options);
    if (!FINISHED_STATES.has(read.state)) {
      for await (const event of this.followRun(runId, { ...options, after: read.cursor })) {
        if (event.type === 'run.completed') return event.result;
        if (event.type === 'run.failed' || event.type === 'run.cancelled') throw errorOf(event.error);
      }
    }
    // Finished when read, or a journal cut off without a terminal event: the record says how it ended.
    const run = FINISHED_STATES.has(read.state) ? read : await this.readRun(runId, options);
    if (run.result) return run.result;
    throw run.error ? errorOf(run.error) : new DriverError('INCOMPLETE_STREAM', `The run ended ${run.state} without a result or an error.`);
  }

  /** A committed-event stream resumed across dropped connections with a bounded backoff (tailJob, followRun). */
  private async *resumed(path: string, checker: LogStreamChecker, options: TailOptions, names: { lost: string; what: string }): AsyncGenerator<RunEvent, void, undefined> {
    const maxAttempts = options.maxAttempts ?? 5;
    const initialDelay = options.initialDelayMs ?? 250;
    const maxDelay = options.maxDelayMs ?? 5000;
    let failures = 0;
    for (;;) {
      const before = checker.cursor;
      let failure: DriverError;
      try {
        yield* this.streamOnce(path, checker, names.what, options.signal);
        if (checker.finished) return;
        failure = new DriverError('INCOMPLETE_STREAM', `The ${names.what} stream ended before the ${names.what} did.`);
      } catch (error) {
        failure = toClientError(error, options.signal);
        if (options.signal?.aborted || !(RESUMABLE.has(failure.code) || failure.retryable)) throw failure;
      }
      failures = checker.cursor > before ? 1 : failures + 1;
      if (failures >= maxAttempts) {
        throw new DriverError(names.lost, `The ${names.what} stream could not be resumed after ${failures} attempts: ${failure.message}`, { retryable: true, cause: failure });
      }
      await pause(Math.min(maxDelay, initialDelay * 2 ** (failures - 1)), options.signal);
    }
  }

  /** One connection of a resumed stream: resumes after the checker's cursor and delivers what it accepts. */
  private async *streamOnce(path: string, checker: LogStreamChecker, what: string, callerSignal: AbortSignal | undefined): AsyncGenerator<RunEvent, void, undefined> {
    const closer = new AbortController();
    const signal = callerSignal ? AbortSignal.any([callerSignal, closer.signal]) : closer.signal;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      const response = await exchange({
        fetch: (await this.transport).fetch,
        url: this.endpoint(path),
        token: this.token,
        accept: 'text/event-stream',
        headers: { 'Last-Event-ID': String(checker.cursor) },
        signal,
      });
      if (!response.headers.get('content-type')?.toLowerCase().includes('text/event-stream') || !response.body) {
        throw new DriverError('INVALID_RESPONSE', `The host did not answer the ${what} stream with an event stream.`);
      }
      reader = response.body.getReader();
      const frames = new SseFrameReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const data of frames.push(value)) {
          yield checker.accept(data);
          if (checker.finished) return;
        }
      }
      frames.end();
    } finally {
      closer.abort();
      reader?.cancel().catch(() => undefined);
    }
  }

  /**
   * A JSON POST without a client deadline (decisions and results wait on nobody but the host):
   * the body is checked first and refused with the operation's code when malformed; the answer
   * must pass its schema and the operation's rules against the body.
   */
  private async post<Q, T>(op: Operation<Q, T>, body: Q, options: RequestOptions): Promise<T> {
    op.check(body);
    try {
      const answer = await this.exchangeJson(op.path, body, op.answer, options.signal);
      op.checkAnswer(answer, body);
      return answer;
    } catch (error) {
      throw toClientError(error, options.signal);
    }
  }

  /** A discovery GET, bounded by DISCOVERY_TIMEOUT_MS. */
  private async discover<T>(path: string, validate: Validator<T>, options: RequestOptions): Promise<T> {
    const timeout = AbortSignal.timeout(DISCOVERY_TIMEOUT_MS);
    try {
      return await this.exchangeJson(path, undefined, validate, options.signal ? AbortSignal.any([options.signal, timeout]) : timeout);
    } catch (error) {
      throw toClientError(error, options.signal, timeout);
    }
  }

  private async exchangeJson<T>(path: string, body: unknown, validate: Validator<T>, signal: AbortSignal | undefined): Promise<T> {
    const response = await exchange({ fetch: (await this.transport).fetch, url: this.endpoint(path), token: this.token, body, accept: 'application/json', signal });
    const answer = await readJson(response);
    if (!validate(answer)) throw new DriverError('INVALID_RESPONSE', `The host's ${path} answer is invalid: ${validate.explain(answer)}.`);
    return answer;
  }

  private endpoint(path: string): URL {
    return new URL(path, this.baseUrl);
  }
}

/** A run's wire error as the DriverError run() and waitRun() throw. */
function errorOf({ code, message, retryable, outcome }: ErrorInfo): DriverError {
  return new DriverError(code, message, { retryable, ...(outcome ? { outcome } : {}) });
}

/** Waits `ms`, or rejects as soon as the caller aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(toClientError(signal.reason, signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(toClientError(signal!.reason, signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
