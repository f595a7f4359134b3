/** Durable jobs, started: the job service, its endpoints and live stream, its workers and retention. */
import type { JobEventsRequest, JobIdentity, JobListRequest, JobSubmit } from '../../protocol/schemas.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import { retentionTimer } from '../../store/retention.js';
import type { JobsConfig } from './config.js';
import { JobService } from './service.js';
import { lastEventId, untilClosed } from '../../http/follow.js';
import { checkCursor, follow } from './stream.js';

export function create({ config, store, runs, principalOf, streams, services, clock, logInternalError }: ExtensionDeps<JobsConfig>): ExtensionInstance {
  const jobs = new JobService(store, runs(), principalOf, config, (error) => logInternalError(error, 'durable jobs'), clock);
  services.metrics?.gauge('agenticdriver_jobs_queued', 'Durable jobs waiting for a worker, across every replica of the store.', () => store.jobs.queued());
  if (config.interactive) {
    services.metrics?.gauge('agenticdriver_jobs_waiting', 'Durable jobs checkpointed while they wait for a person, across every replica of the store.', () => store.checkpoints.waiting());
  }
  let expiry: { stop(): void } | undefined;
  return {
    services: { jobs },
    features: config.interactive ? ['durable-jobs', 'job-event-stream', 'interactive-jobs'] : ['durable-jobs', 'job-event-stream'],
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
          const requested = lastEventId(request.headers['last-event-id'], 'INVALID_JOB_CURSOR');
          const { info } = await jobs.load(id, request.principal);
          const after = checkCursor(requested, info.cursor);
          return streams.write(reply, follow(store.jobs, id, after, untilClosed(reply.raw)), { headersFirst: true });
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
}
