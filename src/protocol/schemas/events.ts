/** Run events: the envelope and the known types, payload fields at the top level. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorInfo, Timestamp, ToolCall, Usage } from './common.js';
import { ApprovalRequest, ApprovalResolution, ToolExecution } from './interactive.js';
import { RunResult } from './runs.js';
import { open } from './shape.js';

const envelope = {
  runId: Type.String({ minLength: 1 }),
  sequence: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  timestamp: Timestamp,
  optional: Type.Optional(Type.Boolean()),
};

export const EventEnvelope = Type.Object({ type: Type.String({ minLength: 1 }), ...envelope }, { ...open, $id: 'EventEnvelope' });

const event = <T extends string, P extends Record<string, TSchema>>(type: T, payload: P) =>
  Type.Object({ type: Type.Literal(type), ...envelope, ...payload }, { ...open, $id: eventSchemaId(type) });

/** The schema id of an event type's payload schema (`run.started` → `RunStartedEvent`). */
export function eventSchemaId(type: string): string {
  return type
    .split('.')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('') + 'Event';
}

export const RunProgressPhase = Type.Union([Type.Literal('model'), Type.Literal('tool'), Type.Literal('context')]);

export const EVENT_SCHEMAS = {
  'run.started': event('run.started', { provider: Type.String({ minLength: 1 }), model: Type.String({ minLength: 1 }) }),
  'step.started': event('step.started', { step: Type.Integer({ minimum: 1 }) }),
  'text.delta': event('text.delta', { text: Type.String() }),
  'run.progress': event('run.progress', { phase: RunProgressPhase }),
  'approval.requested': event('approval.requested', { approval: Type.Ref(ApprovalRequest) }),
  'approval.resolved': event('approval.resolved', { resolution: Type.Ref(ApprovalResolution) }),
  'tool.execution.requested': event('tool.execution.requested', { execution: Type.Ref(ToolExecution) }),
  'tool.called': event('tool.called', { call: Type.Ref(ToolCall) }),
  'tool.completed': event('tool.completed', { callId: Type.String({ minLength: 1 }), output: Type.Unknown() }),
  'usage.reported': event('usage.reported', { step: Type.Integer({ minimum: 1 }), usage: Type.Ref(Usage) }),
  'run.completed': event('run.completed', { result: Type.Ref(RunResult) }),
  'run.failed': event('run.failed', { error: Type.Ref(ErrorInfo) }),
  'run.cancelled': event('run.cancelled', { error: Type.Ref(ErrorInfo) }),
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];
export { TERMINAL_EVENT_TYPES } from '../terminal-events.js';

export const RunEvent = Type.Union(
  EVENT_TYPES.map((type) => Type.Ref(EVENT_SCHEMAS[type])),
  { $id: 'RunEvent' },
);

export type RunProgressPhase = Static<typeof RunProgressPhase>;
type EnvelopeFields = { runId: string; sequence: number; timestamp: string; optional?: boolean };
type PayloadOf<T extends EventType> = Omit<Static<(typeof EVENT_SCHEMAS)[T]>, 'type' | keyof EnvelopeFields>;
export type RunEventOf<T extends EventType> = { type: T } & EnvelopeFields & PayloadOf<T>;
export type RunEvent = { [T in EventType]: RunEventOf<T> }[EventType];
/** An event before the envelope (runId, sequence, timestamp) is stamped on it. */
export type EventPayload = { [T in EventType]: { type: T } & PayloadOf<T> }[EventType];
