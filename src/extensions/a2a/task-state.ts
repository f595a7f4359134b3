/** An A2A task as it stands, read from its job and the job's last committed event (the request handler and push notifications share it). */
import { Role, TaskState, type Artifact, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { JobInfo, RunEvent } from '../../protocol/schemas.js';
import type { JobRow } from '../../store/store.js';

/** The events after which a task waits for input: an approval, or an application tool's result (one call at a time). */
export const ASKS_FOR_INPUT: ReadonlySet<string> = new Set(['approval.requested', 'tool.execution.requested']);

/** A task's context: the session its job is a turn of, else the task itself. */
export function contextOf(row: Pick<JobRow, 'info' | 'request'>): string {
  return row.request?.session?.id.toLowerCase() ?? row.info.id;
}

export function taskOf(info: JobInfo, last: RunEvent | undefined, contextId: string): Task {
  const task: Task = { id: info.id, contextId, status: undefined, artifacts: [], history: [], metadata: { job: info } };
  if (last?.type === 'run.completed') {
    task.status = { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: last.timestamp };
    task.artifacts = [textArtifact(last.result.text)];
  } else if (last?.type === 'run.failed' || last?.type === 'run.cancelled') {
    const state = last.type === 'run.cancelled' ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED;
    task.status = { state, message: agentMessage(info.id, contextId, `${last.error.code}: ${last.error.message}`, { error: last.error }), timestamp: last.timestamp };
  } else if (last?.type === 'approval.requested') {
    const { approval } = last;
    const asked = `The run asks to call ${approval.call.name} with ${JSON.stringify(approval.call.arguments)}. Answer "approve" (or a data part {"approved": true}) to allow it; anything else denies it.`;
    task.status = { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: agentMessage(info.id, contextId, asked, { approval }), timestamp: last.timestamp };
  } else if (last?.type === 'tool.execution.requested') {
    const { execution } = last;
    const asked = `The run asks your application to run ${execution.call.name} with ${JSON.stringify(execution.call.arguments)}. Answer with a data part {"output": <its result>}, or {"error": "<why>"} when it failed.`;
    task.status = { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: agentMessage(info.id, contextId, asked, { execution }), timestamp: last.timestamp };
  } else if (info.state === 'interrupted') {
    // Reaped when the replica running it died: it ended with no event of its own.
    task.status = { state: TaskState.TASK_STATE_FAILED, message: agentMessage(info.id, contextId, 'INTERRUPTED: The host replica running the task stopped.', {}), timestamp: info.updatedAt };
  } else {
    task.status = { state: info.state === 'queued' ? TaskState.TASK_STATE_SUBMITTED : TaskState.TASK_STATE_WORKING, message: undefined, timestamp: info.updatedAt };
  }
  return task;
}

export function status(taskId: string, contextId: string, state: TaskState, timestamp: string): StreamResponse {
  return { payload: { $case: 'statusUpdate', value: { taskId, contextId, status: { state, message: undefined, timestamp }, metadata: undefined } } };
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

export function textArtifact(text: string): Artifact {
  return { artifactId: 'text', name: 'text', description: 'The run\'s text.', parts: [textPart(text)], metadata: undefined, extensions: [] };
}

function agentMessage(taskId: string, contextId: string, text: string, metadata: Record<string, unknown>): Message {
  return { messageId: `${taskId}:status`, contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata, extensions: [], referenceTaskIds: [] };
}
