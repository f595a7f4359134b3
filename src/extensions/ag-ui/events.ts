/**
 * Our run events as AG-UI events (docs/agent-protocols.md has the table). One AG-UI run is a
 * stretch of one job's events: it ends at the job's terminal event, or where the job pauses
 * for the AG-UI client — a frontend tool's call (its id names the pause, input.ts) or an
 * approval (an interrupt). Text and steps are closed before the run finishes, as AG-UI requires.
 */
import type { RunEvent } from '../../protocol/schemas.js';
import { pauseId } from './input.js';

export type AgUiEvent = { type: string } & Record<string, unknown>;

export interface AgUiRun {
  threadId: string;
  runId: string;
  jobId: string;
  /** The frontend tools' names: their calls pause the run. */
  frontendTools: ReadonlySet<string>;
  /** The frontend calls this run's input answered: the page has their results already. */
  answeredCalls: ReadonlySet<string>;
}

/** Maps one job's events to one AG-UI run's, until it ends or pauses. */
export async function* agUiEvents(events: AsyncIterable<RunEvent>, run: AgUiRun): AsyncGenerator<AgUiEvent> {
  const { threadId, runId, jobId } = run;
  let message: string | undefined;
  let step: string | undefined;
  const frontendCalls = new Set(run.answeredCalls);
  const closeMessage = function* (): Generator<AgUiEvent> {
    if (message !== undefined) yield { type: 'TEXT_MESSAGE_END', messageId: message };
    message = undefined;
  };
  const closeAll = function* (): Generator<AgUiEvent> {
    yield* closeMessage();
    if (step !== undefined) yield { type: 'STEP_FINISHED', stepName: step };
    step = undefined;
  };
  const toolCall = function* (toolCallId: string, name: string, args: unknown): Generator<AgUiEvent> {
    yield { type: 'TOOL_CALL_START', toolCallId, toolCallName: name };
    yield { type: 'TOOL_CALL_ARGS', toolCallId, delta: JSON.stringify(args) };
    yield { type: 'TOOL_CALL_END', toolCallId };
  };

  yield { type: 'RUN_STARTED', threadId, runId };
  for await (const event of events) {
    switch (event.type) {
      case 'step.started':
        yield* closeAll();
        step = `step ${event.step}`;
        yield { type: 'STEP_STARTED', stepName: step };
        break;
      case 'text.delta':
        if (event.text === '') break;
        if (message === undefined) {
          message = `${jobId}:${event.sequence}`;
          yield { type: 'TEXT_MESSAGE_START', messageId: message, role: 'assistant' };
        }
        yield { type: 'TEXT_MESSAGE_CONTENT', messageId: message, delta: event.text };
        break;
      case 'tool.called':
        yield* closeMessage();
        // A frontend tool's call is shown when it is handed to the client (below), with the id that answers it.
        if (run.frontendTools.has(event.call.name)) {
          frontendCalls.add(event.call.id);
          break;
        }
        yield* toolCall(event.call.id, event.call.name, event.call.arguments);
        break;
      case 'tool.completed':
        if (!frontendCalls.has(event.callId)) yield { type: 'TOOL_CALL_RESULT', messageId: `${event.callId}:result`, toolCallId: event.callId, content: JSON.stringify(event.output ?? null), role: 'tool' };
        break;
      case 'tool.execution.requested':
        yield* closeMessage();
        yield* toolCall(pauseId({ jobId, sequence: event.sequence }), event.execution.call.name, event.execution.call.arguments);
        yield* closeAll();
        yield { type: 'RUN_FINISHED', threadId, runId, outcome: { type: 'success' } };
        return;
      case 'approval.requested': {
        const { approval } = event;
        yield* closeAll();
        const interrupt = {
          id: pauseId({ jobId, sequence: event.sequence }),
          reason: 'approval',
          message: `The run asks to call ${approval.call.name} with ${JSON.stringify(approval.call.arguments)}. Resume with payload {"approved": true} to allow it.`,
          toolCallId: approval.call.id,
          responseSchema: { type: 'object', properties: { approved: { type: 'boolean' } }, required: ['approved'] },
          ...(approval.expiresAt ? { expiresAt: approval.expiresAt } : {}),
        };
        yield { type: 'RUN_FINISHED', threadId, runId, outcome: { type: 'interrupt', interrupts: [interrupt] } };
        return;
      }
      case 'run.completed':
        yield* closeAll();
        yield { type: 'RUN_FINISHED', threadId, runId, result: event.result, outcome: { type: 'success' } };
        return;
      case 'run.cancelled':
        yield* closeAll();
        yield { type: 'RUN_FINISHED', threadId, runId, outcome: { type: 'cancelled' } };
        return;
      case 'run.failed':
        yield* closeAll();
        yield { type: 'RUN_ERROR', message: event.error.message, code: event.error.code };
        return;
      default:
        // run.started, run.progress, usage.reported and approval.resolved have no AG-UI event.
        break;
    }
  }
}
