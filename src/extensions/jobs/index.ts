/**
 * Durable jobs (features `durable-jobs`, `job-event-stream`): a run that outlives its connection.
 * Submit, read, list, cancel, pages of committed events, and the live job stream. None of these calls
 * takes an admission slot; a job's own worker runs it. Config section `jobs`; a token's `jobs`
 * grant lists the operations it may use (`submit`, `read`, `cancel`).
 */
import { Type } from '@sinclair/typebox';
import type { JobEventsRequest, JobIdentity, JobListRequest, JobSubmit } from '../../protocol/schemas.js';
import { defineExtension } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import { retentionTimer } from '../../store/retention.js';
import { JobService } from './service.js';
import { checkCursor, followUntilClosed, lastEventId } from './stream.js';

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
  },
  { additionalProperties: false },
);

export const jobsExtension = defineExtension({
  id: 'jobs',
  features: ['durable-jobs', 'job-event-stream'],
  configSchema: JobsConfig,
  grants: {
    jobs: { schema: Type.Array(Type.Union([Type.Literal('submit'), Type.Literal('read'), Type.Literal('cancel')]), { maxItems: 3, uniqueItems: true }) },
  },
  create({ config, store, driver, principalOf, observers, streams, services, logInternalError }) {
    const jobs = new JobService(store, driver(), principalOf, config, (error) => logInternalError(error, 'durable jobs'), (events, prepared, jobId) =>
      observers.run(events, { request: prepared.request, vendor: prepared.adapter.info.vendor, subject: prepared.subject, jobId }),
    );
    services.metrics?.gauge('agenticdriver_jobs_queued', 'Durable jobs waiting for a worker, across every replica of the store.', () => store.jobs.queued());
    let expiry: { stop(): void } | undefined;
    return {
      routes: async (app) => {
        app.route<{ Body: JobSubmit }>({ ...routeOf('submitJob'), handler: async (request) => jobs.submit(request.body, request.principal) });
        app.route<{ Body: JobIdentity }>({ ...routeOf('readJob'), handler: async (request) => jobs.read(request.body.id, request.principal) });
        app.route<{ Body: JobListRequest }>({ ...routeOf('listJobs'), handler: async (request) => jobs.list(request.body, request.principal) });
        app.route<{ Body: JobIdentity }>({ ...routeOf('cancelJob'), handler: async (request) => jobs.cancel(request.body.id, request.principal) });
        app.route<{ Body: JobEventsRequest }>({ ...routeOf('jobEvents'), handler: async (request) => jobs.events(request.body, request.principal) });
        app.route<{ Params: { id: string } }>({
          ...routeOf('streamJob'),
          handler: async (request, reply) => {
            const { id } = request.params;
            const requested = lastEventId(request.headers['last-event-id']);
            const { info } = await jobs.load(id, request.principal);
            const after = checkCursor(requested, info.cursor);
            return streams.write(reply, followUntilClosed(store.jobs, id, after, reply.raw), { headersFirst: true });
          },
        });
      },
      // Queued jobs are taken, and finished ones expire, only once the host listens and has
      // reaped what dead replicas left (a failed bind claims nothing).
      start: () => {
        expiry = retentionTimer(config.retentionMs, () => jobs.expire(), (error) => logInternalError(error, 'job retention'));
        jobs.start();
      },
      stop: () => jobs.close(),
      close: async () => expiry?.stop(),
    };
  },
});
