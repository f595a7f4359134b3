/**
 * Durable jobs (features `durable-jobs`, `job-event-stream`, and `interactive-jobs` with
 * `jobs.interactive`): a run that outlives its connection.
 * Submit, read, list, cancel, pages of committed events, and the live job stream. None of these calls
 * takes an admission slot; a job's own worker runs it. Config section `jobs`; a token's `jobs`
 * grant lists the operations it may use (`submit`, `read`, `cancel`).
 */
import { Type } from '@sinclair/typebox';
import { defineExtension } from '../../http/extension.js';
import { JobsConfig } from './config.js';
import type { JobService } from './service.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Durable jobs: submit, read, cancel and page a background run (the agent-protocol adapters call it). */
    jobs: JobService;
  }
}

export const jobsExtension = defineExtension({
  id: 'jobs',
  features: ['durable-jobs', 'job-event-stream', 'interactive-jobs'],
  configSchema: JobsConfig,
  grants: {
    jobs: { schema: Type.Array(Type.Union([Type.Literal('submit'), Type.Literal('read'), Type.Literal('cancel')]), { maxItems: 3, uniqueItems: true }) },
  },
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
