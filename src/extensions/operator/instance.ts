/** The operator endpoints, started: the run monitor, the update feed and the `/v1/operator/...` routes. */
import { DriverError } from '../../protocol/errors.js';
import type {
  ApprovalDecision,
  ApprovalResolution,
  AuditEntry,
  OperatorApprovalList,
  OperatorAuditPage,
  OperatorAuditRequest,
  OperatorJobList,
  OperatorJobsRequest,
  OperatorLimits,
  OperatorLimitsRequest,
  OperatorListRequest,
  OperatorRunDetail,
  OperatorRunList,
  OperatorRunsRequest,
  OperatorUsage,
  OperatorUsageRequest,
} from '../../protocol/schemas.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import { limitsReport } from '../../http/limits/report.js';
import { frameUpdate } from '../../http/sse.js';
import { lastEventId, untilClosed } from '../../http/follow.js';
import { checkCursor, follow } from '../jobs/stream.js';
import { OperatorFeed } from './operator-feed.js';
import { decodeCursor, encodeCursor, finishedRun, matchesFilters } from './operator-runs.js';
import { follow as followRun } from '../run-records/follow.js';
import { REPLAY_LIMIT, RunMonitor } from './run-monitor.js';
import { activeRun, storedDetail } from './stored-runs.js';

const DEFAULT_FINISHED = 20;
const DEFAULT_LIMIT = 50;
const DEFAULT_AUDIT = 100;
/** Active runs of every replica listed at most (oldest first). */
export const MAX_ACTIVE = 1000;
/** Row states of a run in flight or waiting checkpointed (`store.runs`). */
const ACTIVE_STATES: ReadonlySet<string> = new Set(['running', 'waiting']);

export function create({ store, services, streams, options, clock, governor, logInternalError }: ExtensionDeps<undefined>): ExtensionInstance {
  const monitor = new RunMonitor();
  const feed = new OperatorFeed(store, monitor, {
    clock,
    ...(options.operatorMarksIntervalMs !== undefined ? { intervalMs: options.operatorMarksIntervalMs } : {}),
    ...(options.operatorSubscriptionMs !== undefined ? { maxSubscriptionMs: options.operatorSubscriptionMs } : {}),
    onError: (error) => logInternalError(error, 'operator update feed'),
  });
  const approvals = services.approvals;
  /** This replica's active runs (live steps and tokens), then every other replica's and the checkpointed ones from the store. */
  const activeRuns = async () => {
    const local = monitor.list();
    const known = new Set(local.map((run) => run.runId));
    const stored = (await store.runs.active(MAX_ACTIVE)).filter((row) => !known.has(row.runId)).map(activeRun);
    return [...local, ...stored].sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : 0)).slice(0, MAX_ACTIVE);
  };
  return {
    observe: {
      tap: (run) => monitor.tap({ subject: run.subject, ...(run.jobId ? { jobId: run.jobId } : {}) }),
      stored: (record) => feed.recorded(record),
    },
    routes: async (app) => {
      app.route<{ Body: OperatorRunsRequest }>({
        ...routeOf('operatorListRuns'),
        handler: async (request): Promise<OperatorRunList> => {
          const { finished: limit = DEFAULT_FINISHED, before, state, subject, provider, search } = request.body;
          const filters = { state, subject, provider, search };
          const active = state === undefined || state === 'running' ? (await activeRuns()).filter((run) => matchesFilters(run, filters)) : [];
          if (state === 'running' || limit === 0) return { active, finished: [] };
          const page = await store.usage.finished({
            limit,
            ...(before !== undefined ? { before: decodeCursor(before) } : {}),
            ...(state !== undefined ? { status: state } : {}),
            ...(subject !== undefined ? { subject } : {}),
            ...(provider !== undefined ? { provider } : {}),
            ...(search !== undefined ? { search } : {}),
          });
          return {
            active,
            finished: page.records.map((record) => finishedRun(record, monitor.summary(record.runId))),
            ...(page.next ? { nextBefore: encodeCursor(page.next) } : {}),
          };
        },
      });

      app.route<{ Params: { id: string } }>({
        ...routeOf('operatorReadRun'),
        handler: async (request): Promise<OperatorRunDetail> => {
          const { id } = request.params;
          const seen = monitor.detail(id);
          if (seen?.run.state === 'running') return seen;
          // Once it finished, its usage record (any replica's) is what the run was; this replica may still know its steps.
          const [record] = (await store.usage.finished({ limit: 1, runId: id })).records;
          if (seen) return record ? { ...seen, run: finishedRun(record, seen.run) } : seen;
          // Another replica's run, or one that waits checkpointed: its steps come from its committed events.
          const stored = await storedDetail(store, id, record);
          if (!stored) throw new DriverError('RUN_NOT_FOUND', 'No run with this id is active or recorded.');
          return stored;
        },
      });

      app.route({
        ...routeOf('operatorUpdates'),
        handler: async (_request, reply) => {
          const stopped = new AbortController();
          reply.raw.on('close', () => stopped.abort());
          return streams.writeFrames(reply, feed.subscribe(stopped.signal), frameUpdate, { headersFirst: true });
        },
      });

      app.route<{ Params: { id: string } }>({
        ...routeOf('operatorWatchRun'),
        handler: async (request, reply) => {
          const { id } = request.params;
          const signal = untilClosed(reply.raw);
          if (monitor.summary(id)?.state === 'running') return streams.write(reply, monitor.watch(id, signal), { headersFirst: true });
          // Served by another replica, or waiting checkpointed: its committed events, the recent ones first.
          const row = await store.runs.read(id);
          if (!row || !ACTIVE_STATES.has(row.state)) throw new DriverError('RUN_NOT_FOUND', 'No such active run.');
          return streams.write(reply, followRun(store, row, Math.max(0, row.cursor - REPLAY_LIMIT), signal), { headersFirst: true });
        },
      });

      app.route<{ Body: OperatorListRequest }>({
        ...routeOf('operatorListApprovals'),
        handler: async (request): Promise<OperatorApprovalList> => {
          const rows = approvals ? await store.approvals.pending(request.body.limit ?? DEFAULT_LIMIT) : [];
          return { approvals: rows.map((row) => ({ approval: row.approval, subject: row.subject, provider: row.provider })) };
        },
      });

      app.route<{ Body: ApprovalDecision }>({
        ...routeOf('operatorDecideApproval'),
        handler: async (request): Promise<ApprovalResolution> => {
          if (!approvals) throw new DriverError('APPROVAL_UNAVAILABLE', 'Interactive approvals are not enabled on this host.');
          return approvals.decide(request.body, request.principal, { operator: true });
        },
      });

      app.route<{ Body: OperatorJobsRequest }>({
        ...routeOf('operatorListJobs'),
        handler: async (request): Promise<OperatorJobList> => {
          const rows = await store.jobs.list(request.body.limit ?? DEFAULT_LIMIT, request.body.state ? { state: request.body.state } : {});
          return { jobs: rows.map((row) => ({ job: row.info, subject: row.subject })) };
        },
      });

      app.route<{ Params: { id: string } }>({
        ...routeOf('operatorStreamJob'),
        handler: async (request, reply) => {
          const { id } = request.params;
          const requested = lastEventId(request.headers['last-event-id'], 'INVALID_JOB_CURSOR');
          const job = await store.jobs.read(id);
          if (!job) throw new DriverError('JOB_NOT_FOUND', 'No such job.');
          if (job.expired) throw new DriverError('JOB_EXPIRED', 'The job\'s events were erased when its retention ended.');
          const after = checkCursor(requested, job.info.cursor);
          return streams.write(reply, follow(store.jobs, id, after, untilClosed(reply.raw)), { headersFirst: true });
        },
      });

      app.route<{ Body: OperatorUsageRequest }>({
        ...routeOf('operatorUsage'),
        handler: async (request): Promise<OperatorUsage> => ({
          totals: await store.usage.totals({ ...(request.body.by ? { by: request.body.by } : {}), ...(request.body.since ? { since: request.body.since } : {}) }),
        }),
      });

      app.route<{ Body: OperatorLimitsRequest }>({
        ...routeOf('operatorLimits'),
        handler: async (request): Promise<OperatorLimits> => ({ limits: await limitsReport(store, governor, request.body.subject) }),
      });

      app.route<{ Body: OperatorAuditRequest }>({
        ...routeOf('operatorAudit'),
        handler: async (request): Promise<OperatorAuditPage> => {
          const limit = request.body.limit ?? DEFAULT_AUDIT;
          // One more than asked for tells whether an older page exists.
          const rows = await store.audit.page(limit + 1, request.body.before);
          const page = rows.slice(0, limit);
          const records: AuditEntry[] = page.map(({ id, record }) => ({ ...record, id }));
          return { records, ...(rows.length > limit && page.length > 0 ? { nextBefore: page.at(-1)!.id } : {}) };
        },
      });
    },
    // The feed's subscriptions end before the calls being served are drained.
    stop: async () => feed.close(),
  };
}
