/**
 * The operator endpoints (`/v1/operator/...`, feature `operator-endpoints`): every subject's
 * runs, pending approvals, jobs, usage totals and the approval audit log, for tokens with the
 * `operator` grant only. Any other token is refused with FORBIDDEN before its body is read.
 * None of these takes a run slot.
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
  OperatorRun,
  OperatorRunList,
  OperatorRunsRequest,
  OperatorUsage,
  OperatorUsageRequest,
} from '../../protocol/schemas.js';
import type { UsageRecord } from '../../runtime/usage-record.js';
import type { HostContext } from '../context.js';
import { writeEventStream } from '../sse.js';
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
  const { store, monitor } = operator;

  // Encapsulated: applies to this plugin's routes only, after authentication, before the body.
  app.addHook('onRequest', async (request) => {
    if (!request.principal?.operator) throw new DriverError('FORBIDDEN', 'This token does not have the operator grant.');
  });

  app.route<{ Body: OperatorRunsRequest }>({
    ...routeOf('operatorListRuns'),
    handler: async (request): Promise<OperatorRunList> => {
      const finished = await store.recentUsage(request.body.finished ?? DEFAULT_FINISHED);
      return { active: monitor.list(), finished: finished.map(finishedRun) };
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

function finishedRun(record: UsageRecord): OperatorRun {
  const usage: OperatorRun['usage'] = {};
  for (const field of ['inputTokens', 'outputTokens', 'cachedInputTokens', 'reasoningTokens'] as const) {
    const value = record.observedUsage?.[field];
    if (value !== undefined) usage[field] = value;
  }
  return {
    runId: record.runId,
    subject: record.subject,
    provider: record.provider,
    model: record.model,
    state: record.status,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    steps: record.steps,
    usage,
    ...(record.errorCode ? { errorCode: record.errorCode } : {}),
  };
}
