/**
 * AG-UI runs, started: `POST /ag-ui` takes a `RunAgentInput` and answers AG-UI events as
 * server-sent events. A new run is submitted as a job (keyed by thread and run id, so a retried
 * input is the same job) and followed; a run that answers a pause — its frontend tools'
 * results, its interrupts' decisions — settles them through the application-tools and approvals
 * services and follows the same job from where it paused. Everything is in the store, so each
 * AG-UI run may reach another replica. A client that goes away before its run ended or paused
 * cancels the job, as a disconnect cancels an attached run.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DriverError } from '../../protocol/errors.js';
import type { ToolExecutionResult } from '../../protocol/schemas.js';
import { requireGrant, type Principal } from '../../http/access.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { follow } from '../jobs/stream.js';
import type { AgUiConfig } from './config.js';
import { agUiEvents, type AgUiEvent } from './events.js';
import { answersOf, jobKeyOf, parseInput, runRequestOf, type Answers, type PausePoint } from './input.js';

export function create({ config, store, services, streams }: ExtensionDeps<AgUiConfig>): ExtensionInstance {
  const { jobs, toolExecutions, approvals } = services;
  if (!jobs?.policy.interactive) throw new DriverError('INVALID_CONFIG', 'agUi needs background runs that wait for people: jobs with interactive: true.');

  /** Settles what the input answers; the job, the event to follow it from, and the frontend calls answered. */
  async function settle(answers: Answers, principal: Principal): Promise<PausePoint & { answered: Set<string> }> {
    const points = [...answers.tools, ...answers.interrupts].map(({ point }) => point);
    const jobId = points[0]!.jobId;
    await jobs!.load(jobId, principal);
    const answered = new Set<string>();
    for (const answer of answers.tools) {
      const event = await pausedAt(answer.point, principal);
      if (event?.type !== 'tool.execution.requested' || !toolExecutions) throw new DriverError('TOOL_EXECUTION_NOT_FOUND', 'No such pending tool call.');
      const identity = { executionId: event.execution.executionId, runId: event.execution.runId, callId: event.execution.call.id };
      const result: ToolExecutionResult = answer.failed ? { ...identity, error: 'APPLICATION_TOOL_FAILED' } : { ...identity, output: answer.output };
      await toolExecutions.complete(result, principal);
      answered.add(identity.callId);
    }
    for (const answer of answers.interrupts) {
      const event = await pausedAt(answer.point, principal);
      if (event?.type !== 'approval.requested' || !approvals) throw new DriverError('APPROVAL_NOT_FOUND', 'No such pending approval.');
      const { approvalId, runId, call } = event.approval;
      await approvals.decide({ approvalId, runId, call, decision: answer.approve ? 'approve' : 'deny' }, principal);
    }
    return { jobId, sequence: Math.max(...points.map((point) => point.sequence)), answered };
  }

  async function pausedAt(point: PausePoint, principal: Principal) {
    const page = await jobs!.events({ id: point.jobId, after: point.sequence - 1, limit: 1 }, principal);
    const event = page.events[0];
    return event?.sequence === point.sequence ? event : undefined;
  }

  async function serve(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { principal } = request;
    const input = parseInput(request.body);
    const answers = answersOf(input);
    const from = answers
      ? await settle(answers, principal)
      : { jobId: (await jobs!.submit({ key: jobKeyOf(input), request: runRequestOf(input, config, { approvals: approvals !== undefined }) }, principal)).id, sequence: 0, answered: new Set<string>() };
    const stopped = new AbortController();
    let ended = false;
    reply.raw.once('close', () => {
      stopped.abort();
      if (!ended) void jobs!.cancel(from.jobId, principal).catch(() => undefined);
    });
    const events = agUiEvents(follow(store.jobs, from.jobId, from.sequence, stopped.signal), {
      threadId: input.threadId,
      runId: input.runId,
      jobId: from.jobId,
      frontendTools: new Set(input.tools.map((tool) => tool.name)),
      answeredCalls: from.answered,
    });
    await streams.writeFrames(reply, endsWith(events, () => (ended = true)), frame);
  }

  return {
    routes: async (app) => {
      // An AG-UI run is a background run of the token's: it needs the jobs grants a job's worker checks too.
      app.addHook('onRequest', async (request) => {
        requireGrant(request.principal, { name: 'agUi' });
        requireGrant(request.principal, { name: 'jobs', operation: 'submit' });
        requireGrant(request.principal, { name: 'jobs', operation: 'read' });
      });
      app.post('/ag-ui', serve);
    },
  };
}

function frame(event: AgUiEvent): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

/** Calls `ended` once the last event (a finish, a pause, an error) was produced. */
async function* endsWith(events: AsyncGenerator<AgUiEvent>, ended: () => void): AsyncGenerator<AgUiEvent> {
  for await (const event of events) {
    if (event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') ended();
    yield event;
  }
}
