/**
 * The operator endpoints (`/v1/operator/...`, feature `operator-endpoints`): every subject's
 * runs (filtered and paged, one by one with their steps), the live update feed, pending
 * approvals, jobs, usage totals and the approval audit log, for tokens with the `operator`
 * grant only. Any other token is refused with FORBIDDEN before its body is read. None of
 * these takes a run slot.
 */
import type { FastifyPluginAsync } from 'fastify';
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
  OperatorListRequest,
  OperatorRunDetail,
  OperatorRunList,
  OperatorRunsRequest,
  OperatorUsage,
  OperatorUsageRequest,
} from '../../protocol/schemas.js';
import type { HostContext } from '../context.js';
import { decodeCursor, encodeCursor, finishedRun, matchesFilters } from '../operator-runs.js';
import { frameUpdate, writeEventStream, writeFrames } from '../sse.js';
import { checkCursor, follow, lastEventId } from './jobs.js';
import { routeOf } from './table.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DEFAULT_FINISHED = 20;
const DEFAULT_LIMIT = 50;
const DEFAULT_AUDIT = 100;
const MAX_PAGE_EVENTS = 100;
const MAX_PAGE_BYTES = 1_500_000;

export const operatorRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const operator = context.operator;
  if (!operator) return;
  const { store, monitor, feed } = operator;

  // Encapsulated: applies to this plugin's routes only, after authentication, before the body.
  app.addHook('onRequest', async (request) => {
    if (!request.principal?.operator) throw new DriverError('FORBIDDEN', 'This token does not have the operator grant.');
  });

  app.route<{ Body: OperatorRunsRequest }>({
    ...routeOf('operatorListRuns'),
    handler: async (request): Promise<OperatorRunList> => {
      const { finished: limit = DEFAULT_FINISHED, before, state, subject, provider, search } = request.body;
      const filters = { state, subject, provider, search };
      const active = state === undefined || state === 'running' ? monitor.list().filter((run) => matchesFilters(run, filters)) : [];
      if (state === 'running' || limit === 0) return { active, finished: [] };
      const page = await store.finishedRuns({
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
      if (!UUID.test(id)) throw new DriverError('INVALID_OPERATOR_REQUEST', 'The run id must be a lowercase UUID.');
      const seen = monitor.detail(id);
      if (seen?.run.state === 'running') return seen;
      // Once it finished, its usage record (any replica's) is what the run was; this replica may still know its steps.
      const [record] = (await store.finishedRuns({ limit: 1, runId: id })).records;
      if (seen) return record ? { ...seen, run: finishedRun(record, seen.run) } : seen;
      if (!record) throw new DriverError('RUN_NOT_FOUND', 'No run with this id is active on this host replica or recorded.');
      return { run: finishedRun(record) };
    },
  });

  app.route({
    ...routeOf('operatorUpdates'),
    handler: async (request, reply) => {
      const stopped = new AbortController();
      reply.raw.on('close', () => stopped.abort());
      return writeFrames(reply, feed.subscribe(stopped.signal), frameUpdate, { ...streamOptions(context), headersFirst: true });
    },
  });

  app.route<{ Params: { id: string } }>({
    ...routeOf('operatorWatchRun'),
    handler: async (request, reply) => {
      const { id } = request.params;
      if (!UUID.test(id)) throw new DriverError('INVALID_OPERATOR_REQUEST', 'The run id must be a lowercase UUID.');
      const stopped = new AbortController();
      const events = monitor.watch(id, stopped.signal);
      reply.raw.on('close', () => stopped.abort());
      return writeEventStream(reply, events, { ...streamOptions(context), headersFirst: true });
    },
  });

  app.route<{ Body: OperatorListRequest }>({
    ...routeOf('operatorListApprovals'),
    handler: async (request): Promise<OperatorApprovalList> => {
      const rows = context.approvals ? await store.pendingApprovals(request.body.limit ?? DEFAULT_LIMIT) : [];
      return { approvals: rows.map((row) => ({ approval: row.approval, subject: row.subject, provider: row.provider })) };
    },
  });

  app.route<{ Body: ApprovalDecision }>({
    ...routeOf('operatorDecideApproval'),
    handler: async (request): Promise<ApprovalResolution> => {
      if (!context.approvals) throw new DriverError('APPROVAL_UNAVAILABLE', 'Interactive approvals are not enabled on this host.');
      const { principal } = request;
      return context.approvals.decide(request.body, {
        subject: principal.subject,
        tokenId: principal.tokenId,
        providers: principal.providers,
        approveTools: principal.approveTools,
        operator: true,
      });
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
      if (!UUID.test(id)) throw new DriverError('INVALID_JOB', 'The job id must be a lowercase UUID.');
      const requested = lastEventId(request.headers['last-event-id']);
      const job = await store.jobs.read(id);
      if (!job) throw new DriverError('JOB_NOT_FOUND', 'No such job.');
      if (job.expired) throw new DriverError('JOB_EXPIRED', 'The job\'s events were erased when its retention ended.');
      const after = checkCursor(requested, job.info.cursor);
      const stopped = new AbortController();
      reply.raw.on('close', () => stopped.abort());
      const committed = { committed: (jobId: string, cursor: number) => store.jobs.events(jobId, cursor, MAX_PAGE_EVENTS, MAX_PAGE_BYTES) };
      return writeEventStream(reply, follow(committed, id, after, stopped.signal), { ...streamOptions(context), headersFirst: true });
    },
  });

  app.route<{ Body: OperatorUsageRequest }>({
    ...routeOf('operatorUsage'),
    handler: async (request): Promise<OperatorUsage> => ({
      totals: await store.usageTotals({ ...(request.body.by ? { by: request.body.by } : {}), ...(request.body.since ? { since: request.body.since } : {}) }),
    }),
  });

  app.route<{ Body: OperatorAuditRequest }>({
    ...routeOf('operatorAudit'),
    handler: async (request): Promise<OperatorAuditPage> => {
      const limit = request.body.limit ?? DEFAULT_AUDIT;
      // One more than asked for tells whether an older page exists.
      const rows = await store.auditPage(limit + 1, request.body.before);
      const page = rows.slice(0, limit);
      const records: AuditEntry[] = page.map(({ id, record }) => ({ ...record, id }));
      return { records, ...(rows.length > limit && page.length > 0 ? { nextBefore: page.at(-1)!.id } : {}) };
    },
  });
};

function streamOptions(context: HostContext) {
  return {
    heartbeatMs: context.heartbeatMs,
    writeStallMs: context.writeStallMs,
    ...(context.closing ? { headers: { connection: 'close' } } : {}),
  };
}
