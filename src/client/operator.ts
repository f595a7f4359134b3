/**
 * OperatorClient: the operator endpoints (`/v1/operator/...`) for a token with the operator
 * grant — every subject's runs (filtered and paged, one by one with their steps), the live
 * update feed, pending approvals, jobs, usage totals, limits and the audit log, a live tap of an
 * active run and any job's stream. Answers are validated like AgenticClient's.
 */
import { DriverError } from '../protocol/errors.js';
import type {
  ApprovalDecision,
  ApprovalResolution,
  OperatorApprovalList,
  OperatorAuditPage,
  OperatorAuditRequest,
  OperatorJobList,
  OperatorJobsRequest,
  OperatorLimits,
  OperatorLimitsRequest,
  OperatorListRequest,
  OperatorRunDetail,
  OperatorRunList,
  OperatorRunsRequest,
  OperatorUpdate,
  OperatorUsage,
  OperatorUsageRequest,
  RunEvent,
} from '../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../protocol/terminal-events.js';
import { hasUnsafeKeys } from '../protocol/plain-json.js';
import { validatorFor } from '../protocol/validate.js';
import { parseBaseUrl } from './base-url.js';
import { exchange, readJson, toClientError } from './http.js';
import { operation, pathOf, type Operation } from './operations.js';
import { SseFrameReader } from './sse.js';
import { openTransport, type Transport, type TransportOptions } from './transport.js';


const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ops = {
  runs: operation<OperatorRunsRequest, OperatorRunList>('operatorListRuns'),
  run: operation<never, OperatorRunDetail>('operatorReadRun'),
  updates: operation<never, OperatorUpdate>('operatorUpdates'),
  watchRun: operation('operatorWatchRun'),
  approvals: operation<OperatorListRequest, OperatorApprovalList>('operatorListApprovals'),
  decideApproval: operation<ApprovalDecision, ApprovalResolution>('operatorDecideApproval'),
  jobs: operation<OperatorJobsRequest, OperatorJobList>('operatorListJobs'),
  tailJob: operation('operatorStreamJob'),
  usage: operation<OperatorUsageRequest, OperatorUsage>('operatorUsage'),
  limits: operation<OperatorLimitsRequest, OperatorLimits>('operatorLimits'),
  audit: operation<OperatorAuditRequest, OperatorAuditPage>('operatorAudit'),
};
const validEvent = validatorFor<RunEvent>('RunEvent');

export interface OperatorClientOptions extends TransportOptions {
  url: string;
  /** A token with the operator grant. */
  token: string;
}

export class OperatorClient {
  private readonly baseUrl: URL;
  private readonly token: string;
  private readonly transport: Promise<Transport>;

  constructor(options: OperatorClientOptions) {
    this.baseUrl = parseBaseUrl(options.url);
    if (typeof options.token !== 'string' || options.token.length === 0 || options.token.length > 4096 || /[\s\0]/.test(options.token)) {
      throw new DriverError('AUTH_REQUIRED', 'A bearer token (1-4096 characters, no whitespace) is required.');
    }
    this.token = options.token;
    this.transport = openTransport(options);
    this.transport.catch(() => undefined);
  }

  /** Closes the connections the client opened itself (the `ca` option's pool), like AgenticClient.close(). */
  async close(): Promise<void> {
    await (await this.transport).close();
  }

  /**
   * POST v1/operator/runs: active runs on this replica and one page of finished runs, newest
   * first, filtered by `state`, `subject`, `provider` and `search`; pass `nextBefore` as `before`
   * for the next page.
   */
  runs(request: OperatorRunsRequest = {}, signal?: AbortSignal): Promise<OperatorRunList> {
    return this.post(ops.runs, request, signal);
  }

  /** GET v1/operator/runs/{id}: one run, with its steps, tools, tokens and timing when this replica served it. */
  async run(runId: string, signal?: AbortSignal): Promise<OperatorRunDetail> {
    if (!UUID.test(runId)) throw new DriverError('INVALID_OPERATOR_REQUEST', 'The run id must be a lowercase UUID.');
    const path = pathOf(ops.run, runId);
    try {
      const response = await exchange({ fetch: (await this.transport).fetch, url: new URL(path, this.baseUrl), token: this.token, accept: 'application/json', signal });
      const answer = await readJson(response);
      if (!ops.run.answer(answer)) throw new DriverError('INVALID_RESPONSE', `The host's ${path} answer is invalid: ${ops.run.answer.explain(answer)}.`);
      if (answer.run.runId !== runId) throw new DriverError('INVALID_RESPONSE', `The host answered with run ${answer.run.runId} for run ${runId}.`);
      return answer;
    } catch (error) {
      throw toClientError(error, signal);
    }
  }

  /**
   * GET v1/operator/updates: a `snapshot` (active runs, pending approvals), then each change
   * as it happens, until `signal` aborts or the host ends the stream (it drops a reader that
   * falls behind: subscribe again for a new snapshot).
   */
  async *updates(signal?: AbortSignal): AsyncGenerator<OperatorUpdate, void, undefined> {
    for await (const data of this.frames(ops.updates.path, 0, signal)) {
      const update = parseJson(data, 'An update');
      if (!ops.updates.answer(update)) throw new DriverError('INVALID_RESPONSE', `An update is invalid: ${ops.updates.answer.explain(update)}.`);
      yield update;
    }
  }

  /** POST v1/operator/approvals: pending approvals of every subject. */
  approvals(request: OperatorListRequest = {}, signal?: AbortSignal): Promise<OperatorApprovalList> {
    return this.post(ops.approvals, request, signal);
  }

  /** POST v1/operator/approvals/decisions: the receipt must name the decided approval, run and call, with the decided outcome. */
  async decideApproval(decision: ApprovalDecision, signal?: AbortSignal): Promise<ApprovalResolution> {
    ops.decideApproval.check(decision);
    if (hasUnsafeKeys(decision.call.arguments)) throw new DriverError('INVALID_APPROVAL', 'The decision carries arguments that are not plain JSON.');
    return this.post(ops.decideApproval, decision, signal);
  }

  /** POST v1/operator/jobs: jobs of every subject, most recently updated first. */
  jobs(request: OperatorJobsRequest = {}, signal?: AbortSignal): Promise<OperatorJobList> {
    return this.post(ops.jobs, request, signal);
  }

  /** POST v1/operator/usage: usage totals, optionally grouped. */
  usage(request: OperatorUsageRequest = {}, signal?: AbortSignal): Promise<OperatorUsage> {
    return this.post(ops.usage, request, signal);
  }

  /** POST v1/operator/limits: every configured scope's rate limits and budgets (limit, used, reserved, remaining, reset time), or one subject's. */
  limits(request: OperatorLimitsRequest = {}, signal?: AbortSignal): Promise<OperatorLimits> {
    return this.post(ops.limits, request, signal);
  }

  /** POST v1/operator/audit: one page of the approval audit log, newest first. */
  audit(request: OperatorAuditRequest = {}, signal?: AbortSignal): Promise<OperatorAuditPage> {
    return this.post(ops.audit, request, signal);
  }

  /**
   * GET v1/operator/runs/{id}/events: an active run's recent and live events, ending with its
   * terminal event — or early, without one, when the host dropped this watcher for falling behind.
   */
  watchRun(runId: string, signal?: AbortSignal): AsyncGenerator<RunEvent, void, undefined> {
    if (!UUID.test(runId)) throw new DriverError('INVALID_OPERATOR_REQUEST', 'The run id must be a lowercase UUID.');
    return this.stream(pathOf(ops.watchRun, runId), runId, 0, signal);
  }

  /** GET v1/operator/jobs/{id}/stream: a job's committed events after `after`, until its terminal event. */
  tailJob(jobId: string, options: { after?: number; signal?: AbortSignal } = {}): AsyncGenerator<RunEvent, void, undefined> {
    if (!UUID.test(jobId)) throw new DriverError('INVALID_JOB', 'The job id must be a lowercase UUID.');
    const after = options.after ?? 0;
    if (!Number.isSafeInteger(after) || after < 0) throw new DriverError('INVALID_JOB_CURSOR', 'after must be a non-negative integer.');
    return this.stream(pathOf(ops.tailJob, jobId), undefined, after, options.signal);
  }

  private async *stream(path: string, runId: string | undefined, after: number, signal: AbortSignal | undefined): AsyncGenerator<RunEvent, void, undefined> {
    let last = after;
    let expectedRun = runId;
    for await (const data of this.frames(path, after, signal)) {
      const event = parseEvent(data);
      expectedRun ??= event.runId;
      if (event.runId !== expectedRun) throw new DriverError('INVALID_RESPONSE', `An event of run ${event.runId} arrived on the stream of run ${expectedRun}.`);
      if (event.sequence <= last) throw new DriverError('INVALID_RESPONSE', `Event sequence ${event.sequence} does not follow ${last}.`);
      last = event.sequence;
      yield event;
      if (TERMINAL_EVENT_TYPES.has(event.type)) return;
    }
  }

  /** The `data` of each server-sent event of `path`; the connection closes when the caller stops reading. */
  private async *frames(path: string, after: number, callerSignal: AbortSignal | undefined): AsyncGenerator<string, void, undefined> {
    const closer = new AbortController();
    const signal = callerSignal ? AbortSignal.any([callerSignal, closer.signal]) : closer.signal;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      const response = await exchange({
        fetch: (await this.transport).fetch,
        url: new URL(path, this.baseUrl),
        token: this.token,
        accept: 'text/event-stream',
        ...(after > 0 ? { headers: { 'Last-Event-ID': String(after) } } : {}),
        signal,
      });
      if (!response.headers.get('content-type')?.toLowerCase().includes('text/event-stream') || !response.body) {
        throw new DriverError('INVALID_RESPONSE', 'The host did not answer with an event stream.');
      }
      reader = response.body.getReader();
      const frames = new SseFrameReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const frame of frames.push(value)) {
          // Frames already read are not handed out once the caller has aborted.
          callerSignal?.throwIfAborted();
          yield frame;
        }
      }
    } catch (error) {
      throw toClientError(error, callerSignal);
    } finally {
      closer.abort();
      reader?.cancel().catch(() => undefined);
    }
  }

  private async post<Q, T>(op: Operation<Q, T>, body: Q, signal: AbortSignal | undefined): Promise<T> {
    op.check(body);
    try {
      const response = await exchange({ fetch: (await this.transport).fetch, url: new URL(op.path, this.baseUrl), token: this.token, body, accept: 'application/json', signal });
      const answer = await readJson(response);
      if (!op.answer(answer)) throw new DriverError('INVALID_RESPONSE', `The host's ${op.path} answer is invalid: ${op.answer.explain(answer)}.`);
      op.checkAnswer(answer, body);
      return answer;
    } catch (error) {
      throw toClientError(error, signal);
    }
  }
}

function parseJson(data: string, what: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new DriverError('INVALID_RESPONSE', `${what} is not JSON.`);
  }
}

function parseEvent(data: string): RunEvent {
  const value = parseJson(data, 'An event');
  if (!validEvent(value)) throw new DriverError('INVALID_RESPONSE', `An event is invalid: ${validEvent.explain(value)}.`);
  return value;
}
