/**
 * A run's steps, tools and waits, folded from its events as they pass: what the operator's
 * run page shows (steps with their timing and tokens, each tool call with its approval) and
 * what an active run is waiting for. Bounded: a step keeps at most MAX_TOOLS_PER_STEP calls.
 */
import type { OperatorStep, OperatorToolCall, OperatorWaiting, RunEvent, Usage } from '../../protocol/schemas.js';

const MAX_TOOLS_PER_STEP = 1000;
const TOKEN_FIELDS = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'reasoningTokens'] as const;

export class RunTimeline {
  readonly steps: OperatorStep[] = [];
  /** Tokens reported by every step so far. */
  readonly usage: Usage = {};
  private readonly calls = new Map<string, OperatorToolCall>();
  /** Open waits, oldest first, with the call each is for. */
  private waits: { callId: string; wait: OperatorWaiting }[] = [];

  /** What the run waits for now (the oldest open wait), if anything. */
  get waiting(): OperatorWaiting | undefined {
    return this.waits[0]?.wait;
  }

  /** Folds one event in; true when the run's summary (steps, tokens, wait) changed. */
  apply(event: RunEvent): boolean {
    switch (event.type) {
      case 'step.started':
        this.endStep(event.timestamp);
        this.steps.push({ step: event.step, startedAt: event.timestamp, usage: {}, tools: [] });
        return true;
      case 'usage.reported': {
        const step = this.steps.find((entry) => entry.step === event.step) ?? this.steps.at(-1);
        if (step) addTokens(step.usage, event.usage);
        addTokens(this.usage, event.usage);
        return true;
      }
      case 'tool.called': {
        const step = this.steps.at(-1);
        if (!step || step.tools.length >= MAX_TOOLS_PER_STEP) return false;
        const call: OperatorToolCall = { callId: event.call.id, name: event.call.name, calledAt: event.timestamp };
        step.tools.push(call);
        this.calls.set(call.callId, call);
        return false;
      }
      case 'approval.requested': {
        const { approval } = event;
        const call = this.calls.get(approval.call.id);
        if (call) call.approval = { requestedAt: event.timestamp };
        this.waits.push({ callId: approval.call.id, wait: { kind: 'approval', since: event.timestamp, tool: approval.call.name, id: approval.approvalId } });
        return true;
      }
      case 'approval.resolved': {
        const { resolution } = event;
        const call = this.calls.get(resolution.callId);
        if (call?.approval) Object.assign(call.approval, { resolvedAt: event.timestamp, outcome: resolution.outcome });
        return this.endWait('approval', resolution.callId);
      }
      case 'tool.execution.requested': {
        const { execution } = event;
        const call = this.calls.get(execution.call.id);
        if (call) call.executionRequestedAt = event.timestamp;
        this.waits.push({ callId: execution.call.id, wait: { kind: 'tool', since: event.timestamp, tool: execution.call.name, id: execution.executionId } });
        return true;
      }
      case 'tool.completed': {
        const call = this.calls.get(event.callId);
        if (call) call.durationMs = elapsed(call.calledAt, event.timestamp);
        return this.endWait('tool', event.callId);
      }
      case 'run.completed':
      case 'run.failed':
      case 'run.cancelled':
        this.endStep(event.timestamp);
        this.waits = [];
        return true;
      default:
        return false;
    }
  }

  /** A copy safe to hand out. */
  snapshot(): OperatorStep[] {
    return structuredClone(this.steps);
  }

  private endStep(at: string): void {
    const step = this.steps.at(-1);
    if (step && step.durationMs === undefined) step.durationMs = elapsed(step.startedAt, at);
  }

  private endWait(kind: OperatorWaiting['kind'], callId: string): boolean {
    const index = this.waits.findIndex((open) => open.wait.kind === kind && open.callId === callId);
    if (index < 0) return false;
    this.waits.splice(index, 1);
    return true;
  }
}

export function elapsed(from: string, to: string): number {
  return Math.max(0, Date.parse(to) - Date.parse(from));
}

export function addTokens(total: Usage, step: Usage): void {
  for (const field of TOKEN_FIELDS) {
    const value = step[field];
    if (value !== undefined) total[field] = (total[field] ?? 0) + value;
  }
}
