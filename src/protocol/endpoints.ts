/**
 * The HTTP surface of wire protocol 1.0. The OpenAPI document is generated from this
 * list, and the host registers its routes from it (path, method, body and path-parameter
 * schemas with the code of an invalid one, public access, exact query targets, the grant a
 * token needs and whether the call takes an admission slot) and derives its advertised
 * features from it; extension issues add their endpoints here next to their schemas.
 */
import type { TSchema } from '@sinclair/typebox';
import type { ErrorCode } from './errors.js';
import {
  ApprovalDecision,
  ApprovalResolution,
  Health,
  ProtocolInfo,
  ProviderList,
  RunEvent,
  RunRequest,
  RunResult,
  ToolExecutionIdentity,
  ToolExecutionReceipt,
  ToolExecutionResult,
  SessionCreate,
  SessionIdentity,
  SessionSnapshot,
  SessionDeleteResult,
  SessionListRequest,
  SessionList,
  JobSubmit,
  JobIdentity,
  JobEventsRequest,
  JobInfo,
  JobEventPage,
  JobListRequest,
  JobList,
  RunReadRequest,
  RunEventsRequest,
  RunInfo,
  RunEventPage,
  RetrievalSearch,
  RetrievalResult,
  RetrievalIndexRequest,
  RetrievalIndexReceipt,
  RetrievalDeleteRequest,
  RetrievalDeleteResult,
  IngestRequest,
  IngestResult,
  OperatorRunsRequest,
  OperatorRunList,
  OperatorRunDetail,
  OperatorUpdate,
  OperatorListRequest,
  OperatorApprovalList,
  OperatorJobsRequest,
  OperatorJobList,
  OperatorUsageRequest,
  OperatorUsage,
  OperatorLimitsRequest,
  OperatorLimits,
  OperatorAuditRequest,
  OperatorAuditPage,
} from './schemas.js';

export interface Endpoint {
  method: 'GET' | 'POST';
  path: string;
  operationId: string;
  summary: string;
  /** Feature string in `/v1/protocol` that advertises the endpoint, if any. */
  feature?: Feature;
  /** Unauthenticated endpoints (only `/health`). */
  public?: boolean;
  query?: { name: string; description: string; schema: Record<string, unknown> }[];
  /** `{name}` segments of `path` (a string with a pattern), and how a value that fails `schema` is answered. */
  pathParams?: { name: string; description: string; schema: { type: 'string'; pattern: string }; invalid: { code: ErrorCode; message: string } }[];
  request?: TSchema;
  /**
   * How a body that fails `request` is answered: `code`, with the message
   * `<message>: <reason, or what the schema check found>.` Absent on `/v1/runs`, whose
   * request the runtime validates itself (in-process callers get the same check).
   */
  invalidBody?: { code: ErrorCode; message: string; reason?: string };
  response: TSchema;
  /** Also answers `text/event-stream` of this event schema when the client accepts it. */
  events?: TSchema;
  /** Answers only `text/event-stream` (`response` is then the schema of one event). */
  streamOnly?: boolean;
  /**
   * The token grant the call needs, checked before the handler (403 FORBIDDEN): `operation`
   * among the grant's operations (`jobs`: `submit`), or, with `resource`, the body field naming
   * the resource, among those the grant lists for `operation` (`retrieval`: `search` corpora);
   * without either, the grant itself (`operator`). A grant the body does not name is checked
   * before the body is read. Runs check theirs on the parsed request (providers, tools, corpus).
   */
  grant?: { name: string; operation?: string; resource?: string };
  /**
   * The call takes an admission slot (429 BUSY when none is free) and is cancelled when its
   * client disconnects or the host shuts down. `call`: for the whole call, before the handler;
   * `run`: the run path takes it itself, after an idempotent replay, which takes none.
   */
  admission?: 'call' | 'run';
  /**
   * The clients' method for this operation, in camelCase (Go capitalizes it, Python and Rust
   * write it in snake_case). Default: the operationId, less the `operator` prefix of an
   * operator endpoint. `null`: no client method (`/health` is for load balancers).
   */
  clientMethod?: string | null;
  /** An endpoint that answers JSON or events (`events` without `streamOnly`) has a second client method for the events. */
  clientStreamMethod?: string;
  /** Takes `Last-Event-ID`: the last sequence the client has, a safe integer (else 400 INVALID_JOB_CURSOR, or INVALID_RUN_CURSOR for a run). */
  resumable?: boolean;
}

/** The largest `Last-Event-ID` (and any cursor): the largest integer every client language reads exactly. */
export const MAX_CURSOR = Number.MAX_SAFE_INTEGER;

/**
 * Every feature string `/v1/protocol` may list, in the order it lists them. A feature that
 * endpoints advertise (`Endpoint.feature`) is listed only when the host serves all of them.
 */
export const FEATURES = [
  'json-results',
  'application-tools',
  'interactive-approvals',
  'event-stream',
  'cancel-on-disconnect',
  'optional-idle-timeout',
  'required-capabilities',
  'optional-events',
  'provider-discovery',
  'context-inputs',
  'draft-artifacts',
  'idempotency',
  'conversation-sessions',
  'durable-jobs',
  'job-event-stream',
  'interactive-jobs',
  'run-records',
  'scoped-retrieval',
  'retrieval-indexing',
  'document-ingestion',
  'pdf-ingestion',
  'operator-endpoints',
  'mcp-server',
  'ag-ui',
  'a2a',
  'limits',
] as const;
export type Feature = (typeof FEATURES)[number];

const UUID_PARAM = { type: 'string' as const, pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' };
const INVALID_OPERATOR = { code: 'INVALID_OPERATOR_REQUEST', message: 'The operator request is invalid' } as const;

export const ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: '/health', operationId: 'health', summary: 'Liveness; no authentication.', public: true, response: Health, clientMethod: null },
  { method: 'GET', path: '/v1/protocol', operationId: 'getProtocol', summary: 'Selected version, supported versions and host features.', response: ProtocolInfo, clientMethod: 'protocol' },
  {
    method: 'GET',
    path: '/v1/providers',
    operationId: 'listProviders',
    summary: 'Provider instances this token may use, with capabilities and advisory discovery data.',
    feature: 'provider-discovery',
    query: [{ name: 'refresh', description: 'Exactly `true` forces a new discovery probe (rate-limited). No other query is accepted.', schema: { const: 'true' } }],
    response: ProviderList,
    clientMethod: 'providers',
  },
  {
    method: 'POST',
    path: '/v1/runs',
    operationId: 'run',
    summary: 'Execute one agent run: a JSON result, or server-sent events when Accept includes text/event-stream.',
    feature: 'json-results',
    request: RunRequest,
    admission: 'run',
    response: RunResult,
    events: RunEvent,
    clientStreamMethod: 'stream',
  },
  {
    method: 'POST',
    path: '/v1/approvals/decisions',
    operationId: 'decideApproval',
    summary: 'Decide one pending interactive approval of the caller\'s subject (approve, deny or cancel).',
    feature: 'interactive-approvals',
    request: ApprovalDecision,
    invalidBody: { code: 'INVALID_APPROVAL', message: 'The decision is invalid' },
    response: ApprovalResolution,
  },
  {
    method: 'POST',
    path: '/v1/tool-executions/progress',
    operationId: 'reportToolProgress',
    summary: 'Report real progress on a dispatched application tool; resets the run\'s idle timer.',
    feature: 'application-tools',
    request: ToolExecutionIdentity,
    invalidBody: { code: 'INVALID_TOOL_EXECUTION', message: 'The tool execution request is invalid' },
    response: ToolExecutionReceipt,
  },
  {
    method: 'POST',
    path: '/v1/tool-executions/results',
    operationId: 'completeTool',
    summary: 'Deliver the one result (or failure) of a dispatched application tool; consumes the ticket.',
    feature: 'application-tools',
    request: ToolExecutionResult,
    invalidBody: {
      code: 'INVALID_TOOL_EXECUTION',
      message: 'The tool execution request is invalid',
      reason: 'it must carry executionId, runId, callId and exactly one of output or error',
    },
    response: ToolExecutionReceipt,
  },
  {
    method: 'POST',
    path: '/v1/sessions/create',
    operationId: 'createSession',
    summary: 'Create a conversation session (history mode): later runs continue it with `session: {id, revision}`.',
    feature: 'conversation-sessions',
    request: SessionCreate,
    invalidBody: { code: 'INVALID_SESSION', message: 'The session request is invalid' },
    grant: { name: 'sessions', operation: 'create' },
    response: SessionSnapshot,
  },
  {
    method: 'POST',
    path: '/v1/sessions/read',
    operationId: 'readSession',
    summary: 'Read a session of the caller\'s subject: its state, revision and visible history.',
    feature: 'conversation-sessions',
    request: SessionIdentity,
    invalidBody: { code: 'INVALID_SESSION', message: 'The session request is invalid' },
    grant: { name: 'sessions', operation: 'read' },
    response: SessionSnapshot,
  },
  {
    method: 'POST',
    path: '/v1/sessions/delete',
    operationId: 'deleteSession',
    summary: 'Delete a session; an active turn ends `run.cancelled` with SESSION_DELETED.',
    feature: 'conversation-sessions',
    request: SessionIdentity,
    invalidBody: { code: 'INVALID_SESSION', message: 'The session request is invalid' },
    grant: { name: 'sessions', operation: 'delete' },
    response: SessionDeleteResult,
  },
  {
    method: 'POST',
    path: '/v1/sessions/list',
    operationId: 'listSessions',
    summary: 'The caller\'s subject\'s sessions (needs the `read` session grant), most recently used first; expired ones are gone.',
    feature: 'conversation-sessions',
    request: SessionListRequest,
    invalidBody: { code: 'INVALID_SESSION', message: 'The session list request is invalid' },
    grant: { name: 'sessions', operation: 'read' },
    response: SessionList,
  },
  {
    method: 'POST',
    path: '/v1/jobs/submit',
    operationId: 'submitJob',
    summary: 'Submit a durable job (one run that outlives the connection), deduplicated by `key` per subject.',
    feature: 'durable-jobs',
    request: JobSubmit,
    invalidBody: { code: 'INVALID_JOB', message: 'The job request is invalid' },
    grant: { name: 'jobs', operation: 'submit' },
    response: JobInfo,
  },
  {
    method: 'POST',
    path: '/v1/jobs/read',
    operationId: 'readJob',
    summary: 'Read a job of the caller\'s subject.',
    feature: 'durable-jobs',
    request: JobIdentity,
    invalidBody: { code: 'INVALID_JOB', message: 'The job request is invalid' },
    grant: { name: 'jobs', operation: 'read' },
    response: JobInfo,
  },
  {
    method: 'POST',
    path: '/v1/jobs/list',
    operationId: 'listJobs',
    summary: 'The caller\'s subject\'s jobs (needs the `read` job grant), optionally in one state, most recently updated first.',
    feature: 'durable-jobs',
    request: JobListRequest,
    invalidBody: { code: 'INVALID_JOB', message: 'The job list request is invalid' },
    grant: { name: 'jobs', operation: 'read' },
    response: JobList,
  },
  {
    method: 'POST',
    path: '/v1/jobs/cancel',
    operationId: 'cancelJob',
    summary: 'Cancel a job: a queued one at once, a running one at its next step; a finished one is returned unchanged.',
    feature: 'durable-jobs',
    request: JobIdentity,
    invalidBody: { code: 'INVALID_JOB', message: 'The job request is invalid' },
    grant: { name: 'jobs', operation: 'cancel' },
    response: JobInfo,
  },
  {
    method: 'POST',
    path: '/v1/jobs/events',
    operationId: 'jobEvents',
    summary: 'A page of the job\'s committed events after a cursor.',
    feature: 'durable-jobs',
    request: JobEventsRequest,
    invalidBody: { code: 'INVALID_JOB_CURSOR', message: 'The job events request is invalid' },
    grant: { name: 'jobs', operation: 'read' },
    response: JobEventPage,
  },
  {
    method: 'GET',
    path: '/v1/jobs/{id}/stream',
    operationId: 'streamJob',
    summary:
      'The job\'s committed events as server-sent events (`id:` = the event\'s sequence), as they are committed, until the terminal event; `Last-Event-ID` resumes after that sequence, on any replica.',
    feature: 'job-event-stream',
    pathParams: [{ name: 'id', description: 'The job id (a lowercase UUID).', schema: UUID_PARAM, invalid: { code: 'INVALID_JOB', message: 'The job id must be a lowercase UUID.' } }],
    grant: { name: 'jobs', operation: 'read' },
    response: RunEvent,
    events: RunEvent,
    streamOnly: true,
    clientMethod: 'tailJob',
    resumable: true,
  },
  {
    method: 'POST',
    path: '/v1/runs/read',
    operationId: 'readRun',
    summary:
      'Read back a run of the caller\'s subject, attached or background: its state, cursor, and once finished its result or error and usage (a background run needs the `read` job grant).',
    feature: 'run-records',
    request: RunReadRequest,
    invalidBody: { code: 'INVALID_RUN_READ', message: 'The run read request is invalid' },
    response: RunInfo,
  },
  {
    method: 'POST',
    path: '/v1/runs/events',
    operationId: 'runEvents',
    summary: 'A page of a run\'s committed events after a cursor.',
    feature: 'run-records',
    request: RunEventsRequest,
    invalidBody: { code: 'INVALID_RUN_CURSOR', message: 'The run events request is invalid' },
    response: RunEventPage,
  },
  {
    method: 'GET',
    path: '/v1/runs/{id}/stream',
    operationId: 'streamRun',
    summary:
      'A run\'s committed events as server-sent events (`id:` = the event\'s sequence), as they are committed, until the terminal event; `Last-Event-ID` resumes after that sequence, on any replica.',
    feature: 'run-records',
    pathParams: [{ name: 'id', description: 'The run id (a lowercase UUID).', schema: UUID_PARAM, invalid: { code: 'INVALID_RUN_READ', message: 'The run id must be a lowercase UUID.' } }],
    response: RunEvent,
    events: RunEvent,
    streamOnly: true,
    clientMethod: 'followRun',
    resumable: true,
  },
  {
    method: 'POST',
    path: '/v1/retrieval/search',
    operationId: 'searchRetrieval',
    summary: 'Search a corpus the token may search: ranked passages of the sources the subject may see, with provenance.',
    feature: 'scoped-retrieval',
    request: RetrievalSearch,
    invalidBody: { code: 'INVALID_RETRIEVAL', message: 'The retrieval request is invalid' },
    grant: { name: 'retrieval', operation: 'search', resource: 'corpus' },
    admission: 'call',
    response: RetrievalResult,
  },
  {
    method: 'POST',
    path: '/v1/retrieval/index',
    operationId: 'indexSource',
    summary: 'Index one source revision as given chunks; replaces the source atomically (`unchanged` when identical).',
    feature: 'retrieval-indexing',
    request: RetrievalIndexRequest,
    invalidBody: { code: 'INVALID_RETRIEVAL', message: 'The index request is invalid' },
    grant: { name: 'retrieval', operation: 'index', resource: 'corpus' },
    admission: 'call',
    response: RetrievalIndexReceipt,
  },
  {
    method: 'POST',
    path: '/v1/retrieval/delete',
    operationId: 'deleteSource',
    summary: 'Delete one source at its current revision from a corpus.',
    feature: 'retrieval-indexing',
    request: RetrievalDeleteRequest,
    invalidBody: { code: 'INVALID_RETRIEVAL', message: 'The delete request is invalid' },
    grant: { name: 'retrieval', operation: 'delete', resource: 'corpus' },
    admission: 'call',
    response: RetrievalDeleteResult,
  },
  {
    method: 'POST',
    path: '/v1/retrieval/ingest',
    operationId: 'ingestDocument',
    summary: 'Extract, chunk and index one document (text, Markdown, email thread or PDF); the receipt carries the ingestion manifest.',
    feature: 'document-ingestion',
    request: IngestRequest,
    invalidBody: { code: 'INVALID_INGESTION', message: 'The ingestion request is invalid' },
    grant: { name: 'retrieval', operation: 'index', resource: 'corpus' },
    admission: 'call',
    response: IngestResult,
  },
  // Operator endpoints: only tokens with the `operator` grant (any other token gets FORBIDDEN).
  {
    method: 'POST',
    path: '/v1/operator/runs',
    operationId: 'operatorListRuns',
    summary:
      'Operator: the active runs of every replica — this replica\'s with their steps and tokens so far, every one with what it waits for — and one page of finished runs (any replica) with their outcome, newest first; filters by state, subject, provider and text.',
    feature: 'operator-endpoints',
    request: OperatorRunsRequest,
    invalidBody: INVALID_OPERATOR,
    grant: { name: 'operator' },
    response: OperatorRunList,
    clientMethod: 'runs',
  },
  {
    method: 'GET',
    path: '/v1/operator/updates',
    operationId: 'operatorUpdates',
    summary:
      'Operator: live changes as server-sent events — a snapshot of the active runs and the pending-approval count first, then each change to a run, newly finished runs, the pending count and jobs. A subscriber that falls behind is disconnected (reconnect for a new snapshot).',
    feature: 'operator-endpoints',
    grant: { name: 'operator' },
    response: OperatorUpdate,
    events: OperatorUpdate,
    streamOnly: true,
  },
  {
    method: 'GET',
    path: '/v1/operator/runs/{id}',
    operationId: 'operatorReadRun',
    summary:
      'Operator: one run, active or finished, on any replica, with its steps, tools, tokens and timing (folded from its committed events when another replica serves it).',
    feature: 'operator-endpoints',
    pathParams: [{ name: 'id', description: 'The run id (a lowercase UUID).', schema: UUID_PARAM, invalid: { code: 'INVALID_OPERATOR_REQUEST', message: 'The run id must be a lowercase UUID.' } }],
    grant: { name: 'operator' },
    response: OperatorRunDetail,
    clientMethod: 'run',
  },
  {
    method: 'GET',
    path: '/v1/operator/runs/{id}/events',
    operationId: 'operatorWatchRun',
    summary:
      'Operator: the events of one active run (on any replica) as server-sent events — the recent ones first, then live, until its terminal event. A watcher that falls behind is disconnected; the run is never slowed.',
    feature: 'operator-endpoints',
    pathParams: [{ name: 'id', description: 'The run id (a lowercase UUID).', schema: UUID_PARAM, invalid: { code: 'INVALID_OPERATOR_REQUEST', message: 'The run id must be a lowercase UUID.' } }],
    grant: { name: 'operator' },
    response: RunEvent,
    events: RunEvent,
    streamOnly: true,
  },
  {
    method: 'POST',
    path: '/v1/operator/approvals',
    operationId: 'operatorListApprovals',
    summary: 'Operator: pending interactive approvals of every subject, oldest first.',
    feature: 'operator-endpoints',
    request: OperatorListRequest,
    invalidBody: INVALID_OPERATOR,
    grant: { name: 'operator' },
    response: OperatorApprovalList,
    clientMethod: 'approvals',
  },
  {
    method: 'POST',
    path: '/v1/operator/approvals/decisions',
    operationId: 'operatorDecideApproval',
    summary: 'Operator: decide a pending approval of any subject; audited with the operator token like any decision.',
    feature: 'operator-endpoints',
    request: ApprovalDecision,
    invalidBody: { code: 'INVALID_APPROVAL', message: 'The decision is invalid' },
    grant: { name: 'operator' },
    response: ApprovalResolution,
  },
  {
    method: 'POST',
    path: '/v1/operator/jobs',
    operationId: 'operatorListJobs',
    summary: 'Operator: durable jobs of every subject, most recently updated first.',
    feature: 'operator-endpoints',
    request: OperatorJobsRequest,
    invalidBody: INVALID_OPERATOR,
    grant: { name: 'operator' },
    response: OperatorJobList,
    clientMethod: 'jobs',
  },
  {
    method: 'GET',
    path: '/v1/operator/jobs/{id}/stream',
    operationId: 'operatorStreamJob',
    summary: 'Operator: any job\'s committed events as server-sent events, like `GET /v1/jobs/{id}/stream` (`Last-Event-ID` resumes).',
    feature: 'operator-endpoints',
    pathParams: [{ name: 'id', description: 'The job id (a lowercase UUID).', schema: UUID_PARAM, invalid: { code: 'INVALID_JOB', message: 'The job id must be a lowercase UUID.' } }],
    grant: { name: 'operator' },
    response: RunEvent,
    events: RunEvent,
    streamOnly: true,
    clientMethod: 'tailJob',
    resumable: true,
  },
  {
    method: 'POST',
    path: '/v1/operator/usage',
    operationId: 'operatorUsage',
    summary: 'Operator: usage totals of the stored usage records, optionally grouped by subject, provider, model, day or hour.',
    feature: 'operator-endpoints',
    request: OperatorUsageRequest,
    invalidBody: INVALID_OPERATOR,
    grant: { name: 'operator' },
    response: OperatorUsage,
  },
  {
    method: 'POST',
    path: '/v1/operator/limits',
    operationId: 'operatorLimits',
    summary: 'Operator: the configured budgets and rate limits per scope (host, subject, token), each budget with its limit, used, reserved, remaining and reset time.',
    feature: 'operator-endpoints',
    request: OperatorLimitsRequest,
    invalidBody: INVALID_OPERATOR,
    grant: { name: 'operator' },
    response: OperatorLimits,
  },
  {
    method: 'POST',
    path: '/v1/operator/audit',
    operationId: 'operatorAudit',
    summary: 'Operator: one page of the approval audit log, newest first.',
    feature: 'operator-endpoints',
    request: OperatorAuditRequest,
    invalidBody: INVALID_OPERATOR,
    grant: { name: 'operator' },
    response: OperatorAuditPage,
  },
];

/** The client that calls an endpoint: the operator endpoints have a client of their own. */
export type ClientKind = 'agent' | 'operator';

export interface ClientOperation {
  endpoint: Endpoint;
  client: ClientKind;
  /** camelCase method names: the call, and for a JSON-or-events endpoint also its stream. */
  methods: string[];
}

/** Every endpoint a client calls, with its client and method names (`clientMethod`). */
export function clientOperations(endpoints: readonly Endpoint[] = ENDPOINTS): ClientOperation[] {
  return endpoints.flatMap((endpoint) => {
    if (endpoint.clientMethod === null) return [];
    const operator = endpoint.path.startsWith('/v1/operator/');
    const derived = operator ? endpoint.operationId.replace(/^operator(.)/, (_, first: string) => first.toLowerCase()) : endpoint.operationId;
    const method = endpoint.clientMethod ?? derived;
    return [{ endpoint, client: operator ? 'operator' : 'agent', methods: endpoint.clientStreamMethod ? [method, endpoint.clientStreamMethod] : [method] }];
  });
}

/** The endpoint of an operation id (a typo is a programming error). */
export function endpointOf(operationId: string): Endpoint {
  const endpoint = ENDPOINTS.find((candidate) => candidate.operationId === operationId);
  if (!endpoint) throw new Error(`no endpoint has operationId ${operationId}`);
  return endpoint;
}
