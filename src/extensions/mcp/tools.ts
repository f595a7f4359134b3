/**
 * The MCP server's tools, each a call of the one run path or the job service: `run` (an attached
 * run, answered when it ends), `submit_job`, `read_job`, `cancel_job` and `follow_job` (a
 * background run), and `run` as an MCP task (a background run too: `tasks/get|result|cancel|list`).
 * Every run event a tool carries becomes a progress notification, an approval an elicitation
 * where the client declared it. Failures are tool results with `isError` and our
 * `{code, message, retryable}`; an unknown tool or task is a JSON-RPC error.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { ErrorCode, McpError, type CallToolResult, type CreateTaskResult, type JSONRPCRequest, type Task as McpTask, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { DriverError, toDriverError } from '../../protocol/errors.js';
import { RunRequest, type JobIdentity, type JobInfo, type JobSubmit, type RunEvent } from '../../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { validatorFor } from '../../protocol/validate.js';
import { requireGrant, type Principal } from '../../http/access.js';
import { endpoint } from '../../http/endpoints.js';
import type { HostServices } from '../../http/extension.js';
import type { RunService } from '../../http/run-service.js';
import type { StateStore } from '../../store/store.js';
import { follow } from '../jobs/stream.js';
import { elicitationOf } from './elicitation.js';

/** One tool call: who makes it and how to reach its client while it runs. */
export interface ToolCall {
  principal: Principal;
  /** The HTTP call carrying it: an attached run is cancelled when it closes. */
  reply: FastifyReply;
  signal: AbortSignal;
  /** Whether the client declared elicitation (session.ts). */
  elicits: boolean;
  /** A progress notification, when the client asked for them (a progress token). */
  progress(message: string): Promise<void>;
  /** Sends a request to the client on this call's stream. */
  request(message: JSONRPCRequest): Promise<void>;
}

/** The run request fields a tool takes: what needs no one to answer for it but the person at the MCP client. */
const RUN_FIELDS = ['provider', 'model', 'input', 'instructions', 'tools', 'approvals', 'maxSteps', 'maxOutputTokens', 'idleTimeoutMs', 'outputSchema', 'metadata'] as const;
const runProperties: Record<string, unknown> = JSON.parse(JSON.stringify(Object.fromEntries(RUN_FIELDS.map((field) => [field, RunRequest.properties[field]]))));
const checkJobId = validatorFor<JobIdentity>('JobIdentity');
const checkJobSubmit = validatorFor<JobSubmit>('JobSubmit');

export interface ToolDeps {
  runs: RunService;
  jobs: HostServices['jobs'] | undefined;
  store: Pick<StateStore, 'jobs'>;
  /** Where an unexpected failure is reported (the client gets INTERNAL_ERROR). */
  logInternalError(error: unknown, where: string): void;
}

export class McpTools {
  constructor(private readonly deps: ToolDeps) {}

  /** The tools this token may use. */
  list(principal: Principal): Tool[] {
    const run = runSchema(principal);
    const jobId = { type: 'object' as const, properties: { id: { type: 'string', description: 'The job id submit_job returned.' } }, required: ['id'], additionalProperties: false };
    const may = (operation: string) => this.deps.jobs !== undefined && principal.grants.get('jobs')?.has(operation) === true;
    const tools: Tool[] = [
      {
        name: 'run',
        title: 'Run an agent',
        description: 'Runs an agent on a provider and model this token may use, and answers with its final text (structured: the run result). Sends a progress notification per run event. As an MCP task, it runs as a background job.',
        inputSchema: run,
        ...(may('submit') && may('read') ? { execution: { taskSupport: 'optional' as const } } : {}),
      },
    ];
    if (!this.deps.jobs) return tools;
    if (may('submit')) {
      tools.push({
        name: 'submit_job',
        title: 'Submit a background run',
        description: 'Submits the run as a durable background job and answers at once with the job (its id, state and cursor). A repeated key returns the same job.',
        inputSchema: { ...run, properties: { ...run.properties, key: { type: 'string', pattern: '^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$', description: 'Idempotency key of the submission (default: a new one).' } } },
      });
    }
    if (may('read')) {
      tools.push({ name: 'read_job', title: 'Read a background run', description: 'The job, and its result or error once it has ended.', inputSchema: jobId });
      tools.push({
        name: 'follow_job',
        title: 'Follow a background run',
        description: 'Waits for the job to end, sending a progress notification per committed event, and answers with its result or error.',
        inputSchema: { ...jobId, properties: { ...jobId.properties, after: { type: 'integer', minimum: 0, description: 'The last event sequence already seen (default 0).' } } },
      });
    }
    if (may('cancel')) tools.push({ name: 'cancel_job', title: 'Cancel a background run', description: 'Asks the job to stop; answers with the job.', inputSchema: jobId });
    return tools;
  }

  async call(name: string, args: Record<string, unknown>, call: ToolCall): Promise<CallToolResult> {
    const tool = this.handlers[name];
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `No tool ${name}.`);
    try {
      return await tool(args, call);
    } catch (error) {
      if (!(error instanceof DriverError)) this.deps.logInternalError(error, `MCP tool ${name}`);
      return failed(toDriverError(error));
    }
  }

  private readonly handlers: Record<string, (args: Record<string, unknown>, call: ToolCall) => Promise<CallToolResult>> = {
    run: async (args, call) => {
      const run = await this.deps.runs.attached(runBody(args), call.principal, { streaming: true, acceptOptionalEvents: false, reply: call.reply });
      try {
        return outcome(await carry(run.events, call));
      } finally {
        run.done();
      }
    },
    submit_job: async (args, call) => {
      const jobs = this.jobsFor(call.principal, 'submitJob');
      const { key = randomUUID(), ...request } = args;
      const submission = { key, request: runBody(request) };
      if (!checkJobSubmit(submission)) throw new DriverError('INVALID_JOB', `The job request is invalid: ${checkJobSubmit.explain(submission) ?? 'it has the wrong shape'}.`);
      return jobResult(await jobs.submit(submission, call.principal));
    },
    read_job: async (args, call) => {
      const [info, last] = await this.jobWithLast(jobIdOf(args), call.principal);
      return last && TERMINAL_EVENT_TYPES.has(last.type) ? { ...outcome(last), structuredContent: { job: info, ...outcomeFields(last) } } : jobResult(info);
    },
    cancel_job: async (args, call) => jobResult(await this.jobsFor(call.principal, 'cancelJob').cancel(jobIdOf(args), call.principal)),
    follow_job: async (args, call) => {
      const jobs = this.jobsFor(call.principal, 'readJob');
      const id = jobIdOf(args);
      const after = args.after ?? 0;
      if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0) throw new DriverError('INVALID_JOB_CURSOR', 'after must be a whole number from 0.');
      const { info } = await jobs.load(id, call.principal);
      if (after > info.cursor) throw new DriverError('INVALID_JOB_CURSOR', `The cursor ${after} is past the job's last event (${info.cursor}).`);
      return outcome(await carry(follow(this.deps.store.jobs, id, after, call.signal), call));
    },
  };

  /** `run` as an MCP task: submitted as a job, whose id is the task's. */
  async createTask(name: string, args: Record<string, unknown>, principal: Principal): Promise<CreateTaskResult> {
    if (name !== 'run') throw new McpError(ErrorCode.InvalidParams, `Tool ${name} does not run as a task.`);
    const jobs = this.jobsFor(principal, 'submitJob');
    this.jobsFor(principal, 'readJob');
    const submission = { key: randomUUID(), request: runBody(args) };
    if (!checkJobSubmit(submission)) throw new McpError(ErrorCode.InvalidParams, `INVALID_REQUEST: ${checkJobSubmit.explain(submission) ?? 'the run request has the wrong shape'}.`);
    const info = await asMcpError(() => jobs.submit(submission, principal));
    return { task: this.taskOf(info, undefined) };
  }

  /** `tasks/get`. */
  async getTask(taskId: string, principal: Principal): Promise<McpTask> {
    return this.taskOf(...(await asMcpError(() => this.jobWithLast(taskId, principal))));
  }

  /** `tasks/result`: waits for the job's end, carrying its events (an approval as an elicitation) as `run` does. */
  async taskResult(taskId: string, call: ToolCall): Promise<CallToolResult> {
    const [info] = await asMcpError(() => this.jobWithLast(taskId, call.principal));
    try {
      return outcome(await carry(follow(this.deps.store.jobs, info.id, 0, call.signal), { ...call, progress: async () => undefined }));
    } catch (error) {
      return failed(toDriverError(error));
    }
  }

  /** `tasks/cancel`. */
  async cancelTask(taskId: string, principal: Principal): Promise<McpTask> {
    const jobs = this.jobsFor(principal, 'cancelJob');
    const info = await asMcpError(() => jobs.cancel(taskId, principal));
    return this.taskOf(info, undefined);
  }

  /** `tasks/list`: the caller's jobs, newest first, one page. */
  async listTasks(principal: Principal): Promise<McpTask[]> {
    const jobs = this.jobsFor(principal, 'listJobs');
    const list = await asMcpError(() => jobs.list({ limit: 100 }, principal));
    return list.jobs.map((info) => this.taskOf(info, undefined));
  }

  /** A job of the caller's, and its last committed event. */
  private async jobWithLast(id: string, principal: Principal): Promise<[JobInfo, RunEvent | undefined]> {
    const jobs = this.jobsFor(principal, 'readJob');
    const info = await jobs.read(id, principal);
    const last = info.cursor === 0 ? undefined : (await jobs.events({ id: info.id, after: info.cursor - 1, limit: 1 }, principal)).events[0];
    return [info, last];
  }

  private taskOf(info: JobInfo, last: RunEvent | undefined): McpTask {
    const status: McpTask['status'] =
      info.state === 'completed' ? 'completed' : info.state === 'cancelled' || (info.cancelRequested && info.state !== 'failed') ? 'cancelled' : info.state === 'failed' || info.state === 'interrupted' ? 'failed' : last?.type === 'approval.requested' ? 'input_required' : 'working';
    const statusMessage = last?.type === 'approval.requested' ? `approval ${last.approval.approvalId} of ${last.approval.call.name} is pending` : last?.type === 'run.failed' || last?.type === 'run.cancelled' ? `${last.error.code}: ${last.error.message}` : undefined;
    return { taskId: info.id, status, ttl: this.deps.jobs!.policy.retentionMs, createdAt: info.createdAt, lastUpdatedAt: info.updatedAt, pollInterval: TASK_POLL_MS, ...(statusMessage ? { statusMessage } : {}) };
  }

  private jobsFor(principal: Principal, operationId: string): HostServices['jobs'] {
    if (!this.deps.jobs) throw new DriverError('JOBS_UNAVAILABLE', 'This host runs no background jobs.');
    requireGrant(principal, endpoint(operationId).grant!);
    return this.deps.jobs;
  }
}

/** How often a client should poll a task (`tasks/get`). */
const TASK_POLL_MS = 250;

/** A job the caller may not see is an invalid task id to MCP, as a missing one is. */
async function asMcpError<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DriverError) throw new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`);
    throw error;
  }
}

/** Carries a run's events to the MCP client until the terminal one, which it returns. */
async function carry(events: AsyncIterable<RunEvent>, call: ToolCall): Promise<RunEvent> {
  for await (const event of events) {
    if (TERMINAL_EVENT_TYPES.has(event.type)) return event;
    if (event.type === 'approval.requested') {
      const { approval } = event;
      if (call.elicits) await call.request(elicitationOf(approval));
      await call.progress(`approval ${approval.approvalId} of ${approval.call.name} is pending${call.elicits ? '' : ': decide it in the console or through the API'}`);
      continue;
    }
    await call.progress(event.type === 'text.delta' ? `text: ${event.text}` : event.type);
  }
  if (call.signal.aborted) throw new DriverError('CANCELLED', 'The client went away.');
  throw new DriverError('INTERNAL_ERROR', 'The run ended without a terminal event.');
}

function runSchema(principal: Principal): Tool['inputSchema'] & { properties: Record<string, object> } {
  const providers = [...principal.providers];
  const properties = { ...runProperties } as Record<string, object>;
  if (providers.length > 0) properties.provider = { ...properties.provider, enum: providers };
  return { type: 'object', properties, required: ['provider', 'model', 'input'], additionalProperties: false };
}

/** The tool's arguments as a run request: only the fields a tool takes (the rest of the request is checked by the run path). */
function runBody(args: Record<string, unknown>): Record<string, unknown> {
  const unknown = Object.keys(args).filter((field) => !(RUN_FIELDS as readonly string[]).includes(field));
  if (unknown.length > 0) throw new DriverError('INVALID_REQUEST', `The run tools do not take ${unknown.join(', ')}.`);
  return args;
}

function jobIdOf(args: Record<string, unknown>): string {
  const { after: _after, ...identity } = args;
  if (!checkJobId(identity)) throw new DriverError('INVALID_JOB', 'The job identity is invalid: it takes exactly an id, a UUID.');
  return identity.id;
}

function jobResult(info: JobInfo): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(info) }], structuredContent: { job: info } };
}

function outcomeFields(event: RunEvent): Record<string, unknown> {
  if (event.type === 'run.completed') return { result: event.result };
  if (event.type === 'run.failed' || event.type === 'run.cancelled') return { error: event.error };
  return {};
}

function outcome(event: RunEvent): CallToolResult {
  if (event.type === 'run.completed') return { content: [{ type: 'text', text: event.result.text }], structuredContent: { result: event.result } };
  if (event.type === 'run.failed' || event.type === 'run.cancelled') return failed(DriverError.from(event.error));
  throw new DriverError('INTERNAL_ERROR', `The run ended with ${event.type}.`);
}

function failed(error: DriverError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }], structuredContent: { error: error.toJSON() } };
}
