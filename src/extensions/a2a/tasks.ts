/**
 * A2A tasks as background runs: the SDK's `A2ARequestHandler` over the job service, for one
 * caller. A task is a job (task id = job id), its context a session (where the token may keep
 * sessions; else the job too), so its state and events are in the store and every replica
 * answers for it. Its state comes from the job and its last committed event: a pending approval
 * or application tool call is `input-required`, answered by the next message to the task (an
 * approval: a data part `{ "approved": true }` or the text `approve`, anything else denies; a
 * tool call: a data part `{ "output": … }` or `{ "error": … }`). Push-notification configs are
 * rows in the store (push.ts delivers them).
 */
import { createHash, randomUUID } from 'node:crypto';
import { TaskState, type AgentCard, type Message, type StreamResponse, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { ExtendedAgentCardNotConfiguredError, PushNotificationNotSupportedError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DriverError } from '../../protocol/errors.js';
import type { JobInfo, RunEvent, RunRequest } from '../../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { allows, type Principal } from '../../http/access.js';
import type { HostServices } from '../../http/extension.js';
import type { PushConfigRow, StateStore } from '../../store/store.js';
import { follow } from '../jobs/stream.js';
import type { A2aConfig } from './config.js';
import { checkPushUrl } from './push.js';
import { ASKS_FOR_INPUT, contextOf, status, taskOf, textArtifact } from './task-state.js';

/** Push-notification configs one task may have. */
export const MAX_PUSH_CONFIGS = 10;

export interface TaskDeps {
  jobs: HostServices['jobs'];
  approvals: HostServices['approvals'] | undefined;
  /** Present, a message may declare application tools (metadata `applicationTools`), whose calls the peer answers. */
  toolExecutions: HostServices['toolExecutions'] | undefined;
  /** Present, a task's context is a session of ours (for a token with the sessions grants `create` and `continue`). */
  sessions: HostServices['sessions'] | undefined;
  store: Pick<StateStore, 'jobs' | 'pushConfigs'>;
  config: A2aConfig;
  /** The A2A version of the request (push notifications are sent in the form of the version that set them). */
  wire: string;
  /** The agent card (the 0.3 handler reads it). */
  card: AgentCard;
}

type Handler = Omit<A2ARequestHandler, 'getAgentCard' | 'getAuthenticatedExtendedAgentCard'>;

/** A task as loaded: its job, and its context (the session the job is a turn of, else the job itself). */
interface Loaded {
  info: JobInfo;
  contextId: string;
}

/** The request handler of one caller; `signal` ends its streams when the connection closes. */
export function taskHandler(deps: TaskDeps, principal: Principal, signal: AbortSignal): A2ARequestHandler {
  const { jobs } = deps;
  const contexts = deps.sessions !== undefined && allows(principal, 'sessions', 'create') && allows(principal, 'sessions', 'continue');

  /** The job a message starts, or the paused job it answers; the event to go on after. */
  async function start(message: Message | undefined, metadata: Record<string, unknown> | undefined, push: TaskPushNotificationConfig | undefined): Promise<{ task: Loaded; after: number }> {
    if (!message) throw new RequestMalformedError('A message is required.');
    if (push) checkPush(push);
    const started = message.taskId !== '' ? await answer(message) : await submit(message, { ...metadata, ...message.metadata });
    if (push) await setPush(started.task.info.id, push);
    return started;
  }

  async function submit(message: Message, metadata: Record<string, unknown>): Promise<{ task: Loaded; after: number }> {
    const request = runRequestOf(message, metadata, deps.config, deps.approvals !== undefined, deps.toolExecutions !== undefined);
    const session = await sessionOf(message.contextId, request, metadata);
    const key = `a2a:${createHash('sha256').update(`${message.messageId}`).digest('hex').slice(0, 48)}`;
    try {
      const info = await guarded(() => jobs.submit({ key, request: session ? { ...request, session: { id: session.id, revision: session.revision } } : request }, principal));
      return { task: { info, contextId: session?.id ?? info.id }, after: 0 };
    } catch (error) {
      // A context made for a task that was refused is no one's conversation.
      if (session?.created) await deps.sessions!.delete(session.id, principal).catch(() => undefined);
      throw error;
    }
  }

  /**
   * The session a new task is a turn of: the context's (its provider and model unless the
   * metadata names others), or a new one. Undefined where contexts are not sessions.
   */
  async function sessionOf(contextId: string, request: RunRequest, metadata: Record<string, unknown>): Promise<{ id: string; revision: number; created: boolean } | undefined> {
    if (!contexts) {
      if (contextId !== '') throw new RequestMalformedError('INVALID_REQUEST: This host keeps no A2A contexts for this token (a context is a session: it needs the sessions extension and the sessions grants create and continue); send the message without a contextId.');
      return undefined;
    }
    const sessions = deps.sessions!;
    if (contextId === '') {
      const { session } = await guarded(() => sessions.create({ provider: request.provider, model: request.model, mode: 'history' }, principal));
      return { id: session.id, revision: session.revision, created: true };
    }
    if (!UUID.test(contextId)) throw new RequestMalformedError('SESSION_NOT_FOUND: No such context.');
    const { session } = await guarded(() => sessions.read(contextId, principal));
    if (typeof metadata.provider !== 'string') request.provider = session.provider;
    if (typeof metadata.model !== 'string') request.model = session.model;
    return { id: session.id, revision: session.revision, created: false };
  }

  /** A message to a task waiting for input: decides its approval, or gives its application tool's result; the task goes on after it. */
  async function answer(message: Message): Promise<{ task: Loaded; after: number }> {
    const task = await load(message.taskId);
    const last = await lastEvent(task.info);
    if (last?.type === 'approval.requested' && deps.approvals) {
      const { approvalId, runId, call } = last.approval;
      const approve = message.parts.some((part) => (part.content?.$case === 'data' && part.content.value?.approved === true) || (part.content?.$case === 'text' && part.content.value.trim().toLowerCase() === 'approve'));
      await guarded(() => deps.approvals!.decide({ approvalId, runId, call, decision: approve ? 'approve' : 'deny' }, principal));
    } else if (last?.type === 'tool.execution.requested' && deps.toolExecutions) {
      const { executionId, runId, call } = last.execution;
      const data = message.parts.flatMap((part) => (part.content?.$case === 'data' && part.content.value ? [part.content.value] : []));
      const answered = data.find((value) => 'output' in value || 'error' in value);
      if (!answered) throw new RequestMalformedError(`INVALID_REQUEST: Task ${message.taskId} waits for the result of ${call.name}: answer with a data part {"output": ...} or {"error": "..."}.`);
      const identity = { executionId, runId, callId: call.id };
      const result = 'output' in answered ? { ...identity, output: answered.output as unknown } : { ...identity, error: 'APPLICATION_TOOL_FAILED' as const };
      await guarded(() => deps.toolExecutions!.complete(result, principal));
    } else {
      throw new UnsupportedOperationError(`Task ${message.taskId} is not waiting for input.`);
    }
    return { task, after: last.sequence };
  }

  async function load(id: string): Promise<Loaded> {
    const { info, row } = await guarded(() => jobs.load(id, principal));
    return { info, contextId: contextOf(row) };
  }

  async function lastEvent(info: JobInfo): Promise<RunEvent | undefined> {
    if (info.cursor === 0) return undefined;
    return (await jobs.events({ id: info.id, after: info.cursor - 1, limit: 1 }, principal)).events[0];
  }

  /** The task as it stands: the job's state, and its outcome once it ended. */
  async function snapshot(id: string): Promise<Task> {
    const { info, contextId } = await load(id);
    return taskOf(info, await lastEvent(info), contextId);
  }

  /** Follows the job until it ends or waits for input; the events as A2A stream responses. */
  async function* stream({ info, contextId }: Loaded, after: number): AsyncGenerator<StreamResponse> {
    const text: string[] = [];
    for await (const event of follow(deps.store.jobs, info.id, after, signal)) {
      if (event.type === 'text.delta' && event.text !== '') {
        yield { payload: { $case: 'artifactUpdate', value: { taskId: info.id, contextId, artifact: textArtifact(event.text), append: text.length > 0, lastChunk: false, metadata: undefined } } };
        text.push(event.text);
      } else if (event.type === 'step.started') {
        yield status(info.id, contextId, TaskState.TASK_STATE_WORKING, event.timestamp);
      } else if (ASKS_FOR_INPUT.has(event.type) || TERMINAL_EVENT_TYPES.has(event.type)) {
        const task = taskOf(info, event, contextId);
        yield { payload: { $case: 'statusUpdate', value: { taskId: info.id, contextId, status: task.status, metadata: undefined } } };
        return;
      }
    }
  }

  /** Waits (without streaming) until the job ends or waits for input. */
  async function settled(task: Loaded, after: number): Promise<Task> {
    for await (const response of stream(task, after)) if (response.payload?.$case === 'statusUpdate' && isFinal(response.payload.value.status?.state)) break;
    return snapshot(task.info.id);
  }

  function checkPush(config: TaskPushNotificationConfig): void {
    if (!deps.config.pushNotifications) throw new PushNotificationNotSupportedError('Push notifications are not turned on on this host.');
    guardedSync(() => checkPushUrl(config.url, deps.config.pushNotifications?.allowedUrls));
    const authentication = authenticationOf(config);
    if (config.id.length > 200 || config.token.length > 1000 || config.url.length > 2048 || (authentication && (authentication.scheme.length > 100 || authentication.credentials.length > 4096))) {
      throw new RequestMalformedError('INVALID_REQUEST: A push notification config field is too long (id 200, token 1000, url 2048, scheme 100, credentials 4096 characters).');
    }
    // Both go into request headers of the notification.
    if (authentication && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(authentication.scheme)) throw new RequestMalformedError('INVALID_REQUEST: The authentication scheme is not an HTTP token.');
    if (!/^[\t\x20-\x7e]*$/.test(config.token + (authentication?.credentials ?? ''))) throw new RequestMalformedError('INVALID_REQUEST: A push notification token or credential holds a character a header cannot carry.');
  }

  async function setPush(taskId: string, config: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    const row: PushConfigRow = {
      taskId,
      configId: config.id === '' ? randomUUID() : config.id,
      subject: principal.subject,
      wire: deps.wire,
      config: { url: config.url, token: config.token, authentication: authenticationOf(config) },
    };
    if (!(await deps.store.pushConfigs.put(row, MAX_PUSH_CONFIGS))) throw new RequestMalformedError(`INVALID_REQUEST: A task has at most ${MAX_PUSH_CONFIGS} push notification configs.`);
    return pushConfigOf(row);
  }

  /** The caller's task's configs (a task of another subject is not found); refused when push notifications are off. */
  async function pushConfigsOf(taskId: string): Promise<PushConfigRow[]> {
    if (!deps.config.pushNotifications) throw new PushNotificationNotSupportedError('Push notifications are not turned on on this host.');
    await load(taskId);
    return deps.store.pushConfigs.list(taskId);
  }

  const handler: Handler = {
    async sendMessage(params) {
      const { task, after } = await start(params.message, params.metadata, params.configuration?.taskPushNotificationConfig);
      return params.configuration?.returnImmediately ? snapshot(task.info.id) : settled(task, after);
    },
    async *sendMessageStream(params) {
      const { task, after } = await start(params.message, params.metadata, params.configuration?.taskPushNotificationConfig);
      yield { payload: { $case: 'task', value: taskOf(task.info, undefined, task.contextId) } };
      yield* stream(task, after);
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
      const loaded = await load(params.id);
      yield* stream(loaded, loaded.info.cursor);
    },
    async listTasks(params) {
      const list = await guarded(() => jobs.list({ limit: Math.min(Math.max(params.pageSize ?? 50, 1), 100) }, principal));
      const rows = await Promise.all(list.jobs.map((info) => deps.store.jobs.read(info.id)));
      const tasks = list.jobs.map((info, i) => taskOf(info, undefined, rows[i] ? contextOf(rows[i]) : info.id));
      return { tasks, nextPageToken: '', pageSize: tasks.length, totalSize: tasks.length };
    },
    async createTaskPushNotificationConfig(params) {
      checkPush(params);
      await load(params.taskId);
      return setPush(params.taskId, params);
    },
    async getTaskPushNotificationConfig(params) {
      const found = (await pushConfigsOf(params.taskId)).find((row) => row.configId === params.id);
      if (!found) throw new RequestMalformedError(`NOT_FOUND: Task ${params.taskId} has no push notification config ${params.id}.`);
      return pushConfigOf(found);
    },
    async listTaskPushNotificationConfigs(params) {
      return { configs: (await pushConfigsOf(params.taskId)).map(pushConfigOf), nextPageToken: '' };
    },
    async deleteTaskPushNotificationConfig(params) {
      await pushConfigsOf(params.taskId);
      await deps.store.pushConfigs.delete(params.taskId, params.id);
    },
  };
  return {
    ...handler,
    getAgentCard: () => Promise.resolve(deps.card),
    getAuthenticatedExtendedAgentCard: () => Promise.reject(new ExtendedAgentCardNotConfiguredError('This agent has no extended card.')),
  };
}

/** The config's authentication, when it names a scheme. */
function authenticationOf(config: TaskPushNotificationConfig): { scheme: string; credentials: string } | undefined {
  return config.authentication?.scheme ? { scheme: config.authentication.scheme, credentials: config.authentication.credentials } : undefined;
}

const UUID = /^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/;

/** A stored config as A2A shows it. */
function pushConfigOf(row: PushConfigRow): TaskPushNotificationConfig {
  return { tenant: '', id: row.configId, taskId: row.taskId, url: row.config.url, token: row.config.token, authentication: row.config.authentication };
}

function guardedSync(call: () => void): void {
  try {
    call();
  } catch (error) {
    if (error instanceof DriverError) throw new RequestMalformedError(`${error.code}: ${error.message}`);
    throw error;
  }
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

function runRequestOf(message: Message, metadata: Record<string, unknown>, config: A2aConfig, approvals: boolean, applicationToolsOn: boolean): RunRequest {
  const input = message.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
  if (input === '') throw new RequestMalformedError('The message needs a text part.');
  const provider = typeof metadata.provider === 'string' ? metadata.provider : config.provider;
  const model = typeof metadata.model === 'string' ? metadata.model : config.model;
  if (provider === undefined || model === undefined) throw new RequestMalformedError('Name the provider and model in the message metadata (or configure a2a.provider and a2a.model).');
  const hostTools = Array.isArray(metadata.tools) ? (metadata.tools as string[]) : [];
  const applicationTools = applicationToolsOf(metadata.applicationTools, applicationToolsOn);
  const tools = [...hostTools, ...applicationTools.map((tool) => tool.name)];
  return {
    provider,
    model,
    input,
    ...(tools.length > 0 ? { tools } : {}),
    ...(applicationTools.length > 0 ? { applicationTools } : {}),
    ...(tools.length > 0 && approvals ? { approvals: { mode: 'interactive', idlePolicy: 'pause' } } : {}),
  } as RunRequest;
}

/**
 * The tools the peer's application runs (metadata `applicationTools`: `name`, and optionally
 * `description`, `inputSchema`, `outputSchema`); the run path checks them against the token's
 * `applicationTools` grant. Anything else in an entry is passed on for the run path to refuse.
 */
function applicationToolsOf(declared: unknown, on: boolean): Record<string, unknown>[] {
  if (declared === undefined) return [];
  if (!on) throw new RequestMalformedError('INVALID_REQUEST: This host runs no application tools.');
  if (!Array.isArray(declared)) throw new RequestMalformedError('INVALID_REQUEST: metadata.applicationTools must be a list of tools.');
  return declared.map((tool: unknown) => {
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) throw new RequestMalformedError('INVALID_REQUEST: Each application tool is an object with a name.');
    const entry = tool as Record<string, unknown>;
    return { description: typeof entry.name === 'string' ? entry.name : 'tool', inputSchema: { type: 'object', properties: {} }, ...entry };
  });
}

function isFinal(state: TaskState | undefined): boolean {
  return state === TaskState.TASK_STATE_COMPLETED || state === TaskState.TASK_STATE_FAILED || state === TaskState.TASK_STATE_CANCELED || state === TaskState.TASK_STATE_INPUT_REQUIRED;
}
