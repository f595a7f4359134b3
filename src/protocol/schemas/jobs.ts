/** Durable jobs: submit, read, cancel, event pages. */
import { Type, type Static } from '@sinclair/typebox';
import { HostTimestamp, ModelId, OpaqueKey, ProviderId, Uuid } from './common.js';
import { RunEvent } from './events.js';
import { RunRequest } from './runs.js';
import { open, strict } from './shape.js';

export const JobSubmit = Type.Object({ key: OpaqueKey, request: Type.Ref(RunRequest) }, { ...strict, $id: 'JobSubmit' });

export const JobIdentity = Type.Object({ id: Uuid }, { ...strict, $id: 'JobIdentity' });

export const JobEventsRequest = Type.Object(
  {
    id: Uuid,
    /** The last sequence the caller has; the page starts after it. */
    after: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { ...strict, $id: 'JobEventsRequest' },
);

export const JobState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('interrupted'),
]);

export const JobInfo = Type.Object(
  {
    id: Uuid,
    runId: Uuid,
    provider: ProviderId,
    model: ModelId,
    state: JobState,
    /** How many events are committed (the last sequence). */
    cursor: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    cancelRequested: Type.Boolean(),
    createdAt: HostTimestamp,
    updatedAt: HostTimestamp,
    /** Present exactly when the job is finished: when its events are erased. */
    expiresAt: Type.Optional(HostTimestamp),
  },
  { ...open, $id: 'JobInfo' },
);

/** The caller's subject's jobs (optionally in one state), most recently updated first. */
export const JobListRequest = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })), state: Type.Optional(JobState) },
  { ...strict, $id: 'JobListRequest' },
);

export const JobList = Type.Object({ jobs: Type.Array(Type.Ref(JobInfo), { maxItems: 100 }) }, { ...open, $id: 'JobList' });

export const JobEventPage = Type.Object(
  {
    job: Type.Ref(JobInfo),
    events: Type.Array(Type.Ref(RunEvent), { maxItems: 100 }),
    nextCursor: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    hasMore: Type.Boolean(),
  },
  { ...open, $id: 'JobEventPage' },
);

export type JobSubmit = Static<typeof JobSubmit>;
export type JobIdentity = Static<typeof JobIdentity>;
export type JobEventsRequest = Static<typeof JobEventsRequest>;
export type JobState = Static<typeof JobState>;
export type JobInfo = Static<typeof JobInfo>;
export type JobEventPage = Static<typeof JobEventPage>;
export type JobListRequest = Static<typeof JobListRequest>;
export type JobList = Static<typeof JobList>;
