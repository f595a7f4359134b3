/** Run records: any run — attached or background — read back, and its committed events paged by cursor. */
import { Type, type Static } from '@sinclair/typebox';
import { ErrorInfo, HostTimestamp, ModelId, ProviderId, Usage, Uuid } from './common.js';
import { RunEvent } from './events.js';
import { RunResult } from './runs.js';
import { open, strict } from './shape.js';

const Cursor = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const RunReadRequest = Type.Object({ runId: Uuid }, { ...strict, $id: 'RunReadRequest' });

export const RunEventsRequest = Type.Object(
  {
    runId: Uuid,
    /** The last sequence the caller has; the page starts after it. */
    after: Cursor,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { ...strict, $id: 'RunEventsRequest' },
);

/** `attached`: answered on the connection that started it (`POST /v1/runs`); `background`: a durable job's run. */
export const RunMode = Type.Union([Type.Literal('attached'), Type.Literal('background')]);

/** `waiting`: a background run checkpointed while it waits for a person (a decision or a tool result). */
export const RunState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('waiting'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('interrupted'),
]);

export const RunInfo = Type.Object(
  {
    runId: Uuid,
    mode: RunMode,
    /** The job of a background run. */
    jobId: Type.Optional(Uuid),
    provider: ProviderId,
    model: ModelId,
    state: RunState,
    /** How many events are committed (the last sequence). */
    cursor: Cursor,
    createdAt: HostTimestamp,
    updatedAt: HostTimestamp,
    /** Present when the run is finished: when its record is erased. */
    expiresAt: Type.Optional(HostTimestamp),
    /** The result of a completed run (its `run.completed` event's). */
    result: Type.Optional(Type.Ref(RunResult)),
    /** Why a failed, cancelled or interrupted run ended. */
    error: Type.Optional(Type.Ref(ErrorInfo)),
    /** The run's usage, once it is known. */
    usage: Type.Optional(Type.Ref(Usage)),
  },
  { ...open, $id: 'RunInfo' },
);

export const RunEventPage = Type.Object(
  {
    run: Type.Ref(RunInfo),
    events: Type.Array(Type.Ref(RunEvent), { maxItems: 100 }),
    nextCursor: Cursor,
    hasMore: Type.Boolean(),
  },
  { ...open, $id: 'RunEventPage' },
);

export type RunReadRequest = Static<typeof RunReadRequest>;
export type RunEventsRequest = Static<typeof RunEventsRequest>;
export type RunMode = Static<typeof RunMode>;
export type RunState = Static<typeof RunState>;
export type RunInfo = Static<typeof RunInfo>;
export type RunEventPage = Static<typeof RunEventPage>;
