/**
 * A2A tasks as background runs: the SDK's `A2ARequestHandler` over the job service, for one
 * caller. A task is a job (task id = job id, its context id too), so its state and events are
 * in the store and every replica answers for it. Its state comes from the job and its last
 * committed event: a pending approval is `input-required`, answered by the next message to the
 * task (a data part `{ "approved": true }` or the text `approve`, anything else denies).
 */
import { createHash } from 'node:crypto';
import { Role, TaskState, type AgentCard, type Artifact, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { ExtendedAgentCardNotConfiguredError, PushNotificationNotSupportedError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DriverError } from '../../protocol/errors.js';
import type { JobInfo, RunEvent, RunRequest } from '../../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import type { Principal } from '../../http/access.js';
import type { HostServices } from '../../http/extension.js';
import type { StateStore } from '../../store/store.js';
import { follow } from '../jobs/stream.js';
import type { A2aConfig } from './config.js';

export interface TaskDeps {
  jobs: HostServices['jobs'];
  approvals: HostServices['approvals'] | undefined;
  store: Pick<StateStore, 'jobs'>;
  config: A2aConfig;
  /** The agent card (the 0.3 handler reads it). */
  card: AgentCard;
}

type Handler = Pick<A2ARequestHandler, 'sendMessage' | 'sendMessageStream' | 'getTask' | 'cancelTask' | 'resubscribe' | 'listTasks'>;

/** The request handler of one caller; `signal` ends its streams when the connection closes. */
export function taskHandler(deps: TaskDeps, principal: Principal, signal: AbortSignal): A2ARequestHandler {
  const { jobs } = deps;

  /** The job a message starts, or the paused job it answers; the event to go on after. */
  async function start(message: Message | undefined, metadata: Record<string, unknown> | undefined): Promise<{ info: JobInfo; after: number }> {
    if (!message) throw new RequestMalformedError('A message is required.');
    if (message.taskId !== '') return answer(message);
    const request = runRequestOf(message, { ...metadata, ...message.metadata }, deps.config, deps.approvals !== undefined);
    const key = `a2a:${createHash('sha256').update(`${message.messageId}`).digest('hex').slice(0, 48)}`;
    return { info: await guarded(() => jobs.submit({ key, request }, principal)), after: 0 };
  }

  /** A message to a task waiting for input: decides its approval; the task goes on after it. */
  async function answer(message: Message): Promise<{ info: JobInfo; after: number }> {
    const { info } = await load(message.taskId);
    const last = await lastEvent(info);
    if (last?.type !== 'approval.requested' || !deps.approvals) throw new UnsupportedOperationError(`Task ${message.taskId} is not waiting for input.`);
    const { approvalId, runId, call } = last.approval;
    const approve = message.parts.some((part) => (part.content?.$case === 'data' && part.content.value?.approved === true) || (part.content?.$case === 'text' && part.content.value.trim().toLowerCase() === 'approve'));
    await guarded(() => deps.approvals!.decide({ approvalId, runId, call, decision: approve ? 'approve' : 'deny' }, principal));
    return { info, after: last.sequence };
  }

  async function load(id: string): Promise<{ info: JobInfo }> {
    return guarded(() => jobs.load(id, principal));
  }

  async function lastEvent(info: JobInfo): Promise<RunEvent | undefined> {
    if (info.cursor === 0) return undefined;
    return (await jobs.events({ id: info.id, after: info.cursor - 1, limit: 1 }, principal)).events[0];
  }

  /** The task as it stands: the job's state, and its outcome once it ended. */
  async function snapshot(id: string): Promise<Task> {
    const { info } = await load(id);
    return taskOf(info, await lastEvent(info));
  }

  /** Follows the job until it ends or waits for input; the events as A2A stream responses. */
  async function* stream(info: JobInfo, after: number): AsyncGenerator<StreamResponse> {
    const text: string[] = [];
    for await (const event of follow(deps.store.jobs, info.id, after, signal)) {
      if (event.type === 'text.delta' && event.text !== '') {
        yield { payload: { $case: 'artifactUpdate', value: { taskId: info.id, contextId: info.id, artifact: textArtifact(event.text), append: text.length > 0, lastChunk: false, metadata: undefined } } };
        text.push(event.text);
      } else if (event.type === 'step.started') {
        yield status(info.id, TaskState.TASK_STATE_WORKING, event.timestamp);
      } else if (event.type === 'approval.requested' || TERMINAL_EVENT_TYPES.has(event.type)) {
        const task = taskOf(info, event);
        yield { payload: { $case: 'statusUpdate', value: { taskId: info.id, contextId: info.id, status: task.status, metadata: undefined } } };
        return;
      }
    }
  }

  /** Waits (without streaming) until the job ends or waits for input. */
  async function settled(info: JobInfo, after: number): Promise<Task> {
    for await (const response of stream(info, after)) if (response.payload?.$case === 'statusUpdate' && isFinal(response.payload.value.status?.state)) break;
    return snapshot(info.id);
  }

  const handler: Handler = {
    async sendMessage(params) {
      const { info, after } = await start(params.message, params.metadata);
      return params.configuration?.returnImmediately ? snapshot(info.id) : settled(info, after);
    },
    async *sendMessageStream(params) {
      const { info, after } = await start(params.message, params.metadata);
      yield { payload: { $case: 'task', value: taskOf(info, undefined) } };
      yield* stream(info, after);
    },
    async getTask(params) {
      return snapshot(params.id);
    },
    async cancelTask(params) {
      const info = await guarded(() => jobs.cancel(params.id, principal));
      // The job stops on its replica: the task is answered once it did.
      for await (const event of follow(deps.store.jobs, info.id, info.cursor, signal)) if (TERMINAL_EVENT_TYPES.has(event.type)) break;
      return snapshot(info.id);
    },
    async *resubscribe(params) {
      const task = await snapshot(params.id);
      if (isFinal(task.status?.state) && task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) throw new UnsupportedOperationError(`Task ${params.id} has ended.`);
      yield { payload: { $case: 'task', value: task } };
      const { info } = await load(params.id);
      yield* stream(info, info.cursor);
    },
    async listTasks(params) {
      const list = await guarded(() => jobs.list({ limit: Math.min(Math.max(params.pageSize ?? 50, 1), 100) }, principal));
      const tasks = list.jobs.map((info) => taskOf(info, undefined));
      return { tasks, nextPageToken: '', pageSize: tasks.length, totalSize: tasks.length };
    },
  };
  return {
    ...handler,
    getAgentCard: () => Promise.resolve(deps.card),
    getAuthenticatedExtendedAgentCard: () => Promise.reject(new ExtendedAgentCardNotConfiguredError('This agent has no extended card.')),
    createTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError('Push notifications are not supported.')),
    getTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError('Push notifications are not supported.')),
    listTaskPushNotificationConfigs: () => Promise.reject(new PushNotificationNotSupportedError('Push notifications are not supported.')),
    deleteTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError('Push notifications are not supported.')),
  };
}

/** Our typed errors in A2A's: a job that is not the caller's is a task not found; others keep their code in the message. */
async function guarded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DriverError) {
      if (error.code === 'JOB_NOT_FOUND' || error.code === 'JOB_EXPIRED') throw new TaskNotFoundError(error.message);
      throw new RequestMalformedError(`${error.code}: ${error.message}`);
    }
    throw error;
  }
}

function runRequestOf(message: Message, metadata: Record<string, unknown>, config: A2aConfig, approvals: boolean): RunRequest {
  const input = message.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
  if (input === '') throw new RequestMalformedError('The message needs a text part.');
  const provider = typeof metadata.provider === 'string' ? metadata.provider : config.provider;
  const model = typeof metadata.model === 'string' ? metadata.model : config.model;
  if (provider === undefined || model === undefined) throw new RequestMalformedError('Name the provider and model in the message metadata (or configure a2a.provider and a2a.model).');
  const tools = Array.isArray(metadata.tools) ? (metadata.tools as string[]) : [];
  return {
    provider,
    model,
    input,
    ...(tools.length > 0 ? { tools } : {}),
    ...(tools.length > 0 && approvals ? { approvals: { mode: 'interactive', idlePolicy: 'pause' } } : {}),
  } as RunRequest;
}

function isFinal(state: TaskState | undefined): boolean {
  return state === TaskState.TASK_STATE_COMPLETED || state === TaskState.TASK_STATE_FAILED || state === TaskState.TASK_STATE_CANCELED || state === TaskState.TASK_STATE_INPUT_REQUIRED;
}

function taskOf(info: JobInfo, last: RunEvent | undefined): Task {
  const task: Task = { id: info.id, contextId: info.id, status: undefined, artifacts: [], history: [], metadata: { job: info } };
  if (last?.type === 'run.completed') {
    task.status = { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: last.timestamp };
    task.artifacts = [textArtifact(last.result.text)];
  } else if (last?.type === 'run.failed' || last?.type === 'run.cancelled') {
    const state = last.type === 'run.cancelled' ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED;
    task.status = { state, message: agentMessage(info.id, `${last.error.code}: ${last.error.message}`, { error: last.error }), timestamp: last.timestamp };
  } else if (last?.type === 'approval.requested') {
    const { approval } = last;
    const asked = `The run asks to call ${approval.call.name} with ${JSON.stringify(approval.call.arguments)}. Answer "approve" (or a data part {"approved": true}) to allow it; anything else denies it.`;
    task.status = { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: agentMessage(info.id, asked, { approval }), timestamp: last.timestamp };
  } else {
    task.status = { state: info.state === 'queued' ? TaskState.TASK_STATE_SUBMITTED : TaskState.TASK_STATE_WORKING, message: undefined, timestamp: info.updatedAt };
  }
  return task;
}

function status(taskId: string, state: TaskState, timestamp: string): StreamResponse {
  return { payload: { $case: 'statusUpdate', value: { taskId, contextId: taskId, status: { state, message: undefined, timestamp }, metadata: undefined } } };
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function textArtifact(text: string): Artifact {
  return { artifactId: 'text', name: 'text', description: 'The run\'s text.', parts: [textPart(text)], metadata: undefined, extensions: [] };
}

function agentMessage(taskId: string, text: string, metadata: Record<string, unknown>): Message {
  return { messageId: `${taskId}:status`, contextId: taskId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata, extensions: [], referenceTaskIds: [] };
}
