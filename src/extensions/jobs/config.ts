/** The `jobs` section of the host config. */
import { Type, type Static } from '@sinclair/typebox';

export const JobsConfig = Type.Object(
  {
    /** How long a finished job's events are kept; its row stays as a tombstone (JOB_EXPIRED). */
    retentionMs: Type.Integer({ minimum: 1000, maximum: 31_536_000_000 }),
    /** Jobs one replica runs at once (default 4). */
    workers: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    maxJobs: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxJobsPerSubject: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxJobBytes: Type.Optional(Type.Integer({ minimum: 16_384, maximum: 64_000_000 })),
    pollIntervalMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000 })),
    /**
     * Jobs may wait for people (feature `interactive-jobs`): interactive approvals and application
     * tools, checkpointed in the store while they wait, resumed on any replica (default false).
     */
    interactive: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type JobsConfig = Static<typeof JobsConfig>;
