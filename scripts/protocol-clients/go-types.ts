/**
 * Go types emitter: a struct per wire object the client exposes as-is, with Go names
 * (initialisms upper-cased), `omitzero` on optional fields, pointers for optional
 * objects and booleans. The shapes Go models its own way stay in types.go: the
 * attachment union (ContextInput), ContextManifest (embeds ContextSource), Usage
 * (nil = not reported), the flattened Event, receipts and results embedding the ticket
 * identity. FIELD_TYPES holds the few fields whose Go type is a choice, not a rule.
 */
import { NAMES } from './python-types.js';
import { words, type Node, type WireModel } from './model.js';

export const GO_TYPES_FILE = 'clients/go/types_generated.go';

/** Named schemas generated as Go structs, with their Go name. */
const STRUCTS: Record<string, string> = {
  ToolCall: 'ToolCall',
  ContextSource: 'ContextSource',
  DraftArtifact: 'DraftArtifact',
  IngestionManifest: 'IngestionManifest',
  RetrievalResult: 'RetrievalResult',
  HistoryMessage: 'HistoryMessage',
  SessionInfo: 'SessionInfo',
  ApplicationToolDefinition: 'ApplicationTool',
  ApprovalRequest: 'ApprovalRequest',
  ApprovalResolution: 'ApprovalResolution',
  ToolExecution: 'ToolExecution',
  ApprovalDecision: 'ApprovalDecision',
  ToolExecutionIdentity: 'ToolExecutionIdentity',
  RunRequest: 'RunRequest',
  RunResult: 'RunResult',
  ProtocolInfo: 'ProtocolInfo',
  ProviderHealth: 'ProviderHealth',
  ModelCatalog: 'ModelCatalog',
  Provider: 'Provider',
  SessionCreate: 'SessionCreate',
  SessionIdentity: 'SessionIdentity',
  SessionSnapshot: 'SessionSnapshot',
  SessionDeleteResult: 'SessionDeleteResult',
  SessionListRequest: 'SessionListRequest',
  SessionList: 'SessionList',
  JobSubmit: 'JobSubmit',
  JobIdentity: 'JobIdentity',
  JobEventsRequest: 'JobEventsRequest',
  JobInfo: 'JobInfo',
  JobEventPage: 'JobEventPage',
  JobListRequest: 'JobListRequest',
  JobList: 'JobList',
  RunReadRequest: 'RunReadRequest',
  RunEventsRequest: 'RunEventsRequest',
  RunInfo: 'RunInfo',
  RunEventPage: 'RunEventPage',
  RetrievalSearch: 'RetrievalSearch',
  RetrievalIndexRequest: 'RetrievalIndexRequest',
  RetrievalIndexReceipt: 'RetrievalIndexReceipt',
  RetrievalDeleteRequest: 'RetrievalDeleteRequest',
  RetrievalDeleteResult: 'RetrievalDeleteResult',
  IngestRequest: 'IngestRequest',
  IngestResult: 'IngestResult',
  OperatorWaiting: 'OperatorWaiting',
  OperatorRun: 'OperatorRun',
  OperatorRunsRequest: 'OperatorRunsRequest',
  OperatorRunList: 'OperatorRunList',
  OperatorToolCall: 'OperatorToolCall',
  OperatorStep: 'OperatorStep',
  OperatorRunDetail: 'OperatorRunDetail',
  OperatorUpdate: 'OperatorUpdate',
  OperatorListRequest: 'OperatorListRequest',
  OperatorApproval: 'OperatorApproval',
  OperatorApprovalList: 'OperatorApprovalList',
  OperatorJobsRequest: 'OperatorJobsRequest',
  OperatorJob: 'OperatorJob',
  OperatorJobList: 'OperatorJobList',
  OperatorUsageRequest: 'OperatorUsageRequest',
  UsageTotals: 'UsageTotals',
  OperatorUsage: 'OperatorUsage',
  OperatorLimitsRequest: 'OperatorLimitsRequest',
  BudgetStatus: 'BudgetStatus',
  ScopeLimits: 'ScopeLimits',
  OperatorLimits: 'OperatorLimits',
  OperatorAuditRequest: 'OperatorAuditRequest',
  AuditEntry: 'AuditEntry',
  OperatorAuditPage: 'OperatorAuditPage',
};

/** Go names of schemas referred to but modelled by hand (or renamed). */
const REFERRED: Record<string, string> = {
  ...STRUCTS,
  ContextInput: 'ContextInput',
  ContextManifest: 'ContextManifest',
  Usage: 'Usage',
  Capabilities: 'map[string]bool',
  RunEvent: 'Event',
  IngestDocument: 'IngestDocument',
  ErrorInfo: 'DriverError',
};

const INLINE: Record<string, string> = { ...NAMES, 'RunRequest.outputArtifact': 'OutputArtifact' };

const FIELD_TYPES: Record<string, string> = {
  'ToolCall.arguments': 'map[string]json.RawMessage',
  'ApprovalDecision.call': 'ToolCall',
  'SessionInfo.revision': 'int64',
  'RunRequest.session.revision': 'int64',
  'RunRequest.idleTimeoutMs': 'int64',
  'RunRequest.approvals.expiresAfterMs': 'int64',
  'RunRequest.retry.baseDelayMs': '*int',
  'RunRequest.retry.maxDelayMs': '*int',
  'RunRequest.retrieval.minScore': '*float64',
  'RetrievalSearch.minScore': '*float64',
  'IngestRequest.idleTimeoutMs': 'int64',
  'OperatorRunsRequest.finished': '*int',
  'OperatorUpdate.pendingApprovals': '*int',
  'OperatorAuditRequest.before': 'int64',
  'OperatorAuditPage.nextBefore': 'int64',
  'AuditEntry.id': 'int64',
  'IngestionManifest.inputBytes': 'int64',
  'IngestionManifest.extractedTextBytes': 'int64',
  'IngestionManifest.indexedTextBytes': 'int64',
  'JobEventsRequest.after': 'int64',
  'JobInfo.cursor': 'int64',
  'JobEventPage.nextCursor': 'int64',
  'RunEventsRequest.after': 'int64',
  'RunInfo.cursor': 'int64',
  'RunInfo.result': '*RunResult',
  'RunInfo.error': '*DriverError',
  'RunInfo.usage': '*Usage',
  'RunEventPage.nextCursor': 'int64',
};

const DOCS: Record<string, string> = {
  RunRequest: 'RunRequest is the body of POST /v1/runs. Optional fields are omitted when zero; a\n// non-nil empty Tools slice is sent as [] (it selects no tools, unlike an absent list).',
  SessionBinding: 'SessionBinding continues a stored session at an exact revision.',
  ApprovalOptions: 'ApprovalOptions opts a streamed run into interactive approvals.',
  ApplicationTool: 'ApplicationTool declares a function the application executes itself (streaming only).',
  RunResult: 'RunResult is the outcome of a completed run.',
  ToolCall: "ToolCall is a model's request to run a tool; Arguments is a JSON object.",
  ToolExecution: 'ToolExecution asks the application to run one of its declared tools.',
  ProtocolInfo: 'ProtocolInfo is the answer of GET /v1/protocol.',
  Provider: 'Provider is one provider instance the token may use.',
  ApprovalDecision: 'ApprovalDecision answers one approval.requested event (POST /v1/approvals/decisions).',
  ToolExecutionIdentity: 'ToolExecutionIdentity names one dispatched application-tool execution.',
  SessionCreate: 'SessionCreate is the body of POST /v1/sessions/create.',
  SessionIdentity: 'SessionIdentity names one stored session (POST /v1/sessions/read and /delete).',
  SessionSnapshot: 'SessionSnapshot is a session with its visible history.',
  SessionDeleteResult: 'SessionDeleteResult is the answer of POST /v1/sessions/delete.',
  JobSubmit: 'JobSubmit is the body of POST /v1/jobs/submit: an idempotency key and a run request.',
  JobIdentity: 'JobIdentity names one durable job (POST /v1/jobs/read and /cancel).',
  JobEventsRequest: 'JobEventsRequest asks for the events after a cursor (POST /v1/jobs/events); Limit 0 means the default.',
  JobListRequest: 'JobListRequest asks for the subject\'s jobs (POST /v1/jobs/list), optionally in one State; Limit 0 means the default (20).',
  JobList: 'JobList holds the subject\'s jobs, most recently updated first.',
  SessionListRequest: 'SessionListRequest asks for the subject\'s sessions (POST /v1/sessions/list); Limit 0 means the default (20).',
  SessionList: 'SessionList holds the subject\'s sessions, most recently used first.',
  JobInfo: 'JobInfo is the state of one durable job; Cursor counts its committed events.',
  JobEventPage: 'JobEventPage is one page of a job\'s committed events.',
  RunReadRequest: 'RunReadRequest names one run (POST /v1/runs/read).',
  RunEventsRequest: 'RunEventsRequest asks for a run\'s events after a cursor (POST /v1/runs/events); Limit 0 means the default.',
  RunInfo: 'RunInfo is any run read back, attached or background; Cursor counts its committed events, Result or Error tell how a finished run ended.',
  RunEventPage: 'RunEventPage is one page of a run\'s committed events.',
  RetrievalSearch: 'RetrievalSearch is the body of POST /v1/retrieval/search; MinScore nil means none.',
  RetrievalIndexRequest: "RetrievalIndexRequest is the body of POST /v1/retrieval/index: a source revision's own chunks.",
  RetrievalIndexReceipt: 'RetrievalIndexReceipt is the answer of POST /v1/retrieval/index.',
  RetrievalDeleteRequest: 'RetrievalDeleteRequest is the body of POST /v1/retrieval/delete.',
  RetrievalDeleteResult: 'RetrievalDeleteResult is the answer of POST /v1/retrieval/delete.',
  IngestRequest: 'IngestRequest is the body of POST /v1/retrieval/ingest: one document to extract, chunk and index.',
  IngestResult: 'IngestResult is the answer of POST /v1/retrieval/ingest, with its ingestion manifest.',
  OperatorRunsRequest: 'OperatorRunsRequest is the body of POST /v1/operator/runs; Finished nil means the host default (20).',
  OperatorRunList: 'OperatorRunList is the answer of POST /v1/operator/runs; pass NextBefore as Before for the next page.',
  OperatorRunDetail: 'OperatorRunDetail is the answer of GET /v1/operator/runs/{id}; Steps is nil when only the usage record is left.',
  OperatorUpdate: 'OperatorUpdate is one change on GET /v1/operator/updates; PendingApprovals is nil when the update does not carry it.',
  OperatorListRequest: 'OperatorListRequest is the body of POST /v1/operator/approvals; Limit 0 means the default.',
  OperatorJobsRequest: 'OperatorJobsRequest is the body of POST /v1/operator/jobs.',
  OperatorUsageRequest: 'OperatorUsageRequest is the body of POST /v1/operator/usage.',
  OperatorLimitsRequest: 'OperatorLimitsRequest is the body of POST /v1/operator/limits; Subject "" means every configured scope.',
  OperatorLimits: 'OperatorLimits is the answer of POST /v1/operator/limits: every configured scope\'s limits, each budget as it stands now.',
  OperatorAuditRequest: 'OperatorAuditRequest is the body of POST /v1/operator/audit; Before 0 means the newest page.',
};

const INITIALISMS: Record<string, string> = { Id: 'ID', Ids: 'IDs', Uri: 'URI', Url: 'URL', Sha256: 'SHA256', Ocr: 'OCR', Usd: 'USD', Api: 'API', Json: 'JSON' };
const goField = (name: string): string =>
  words(name.replace(/Sha256/g, 'Sha256 ').replace(/^sha256/, 'Sha256 ')).map((w) => {
    const word = w[0]!.toUpperCase() + w.slice(1);
    return INITIALISMS[word] ?? word;
  }).join('');

export function emitGoTypes(model: WireModel): string {
  const out: string[] = [];
  const emitted = new Set<string>();

  const struct = (name: string, n: Extract<Node, { kind: 'object' }>, where: string): void => {
    if (emitted.has(name)) return;
    emitted.add(name);
    const fields = n.fields.map((field) => {
      const at = `${where}.${field.name}`;
      const type = FIELD_TYPES[at] ?? fieldType(field.node, at, !field.required);
      return `\t${goField(field.name)} ${type} \`json:"${field.name}${field.required ? '' : ',omitzero'}"\`\n`;
    });
    const doc = DOCS[name] ? `// ${DOCS[name]}\n` : '';
    out.push(`${doc}type ${name} struct {\n${fields.join('')}}\n`);
  };

  const fieldType = (n: Node, where: string, optional: boolean): string => {
    const type = goType(n, where);
    const pointer = optional && (n.kind === 'boolean' || (n.kind === 'ref' && !REFERRED[n.name]!.startsWith('map')) || (n.kind === 'object' && n.fields.length > 0 && !n.extra));
    return pointer ? `*${type}` : type;
  };

  const goType = (n: Node, where: string): string => {
    switch (n.kind) {
      case 'any':
        return 'json.RawMessage';
      case 'ref': {
        const name = REFERRED[n.name];
        if (!name) throw new Error(`protocol-clients: the Go type of ${n.name} (at ${where}) is not named in scripts/protocol-clients/go-types.ts`);
        return name;
      }
      case 'boolean':
        return 'bool';
      case 'integer':
        return 'int';
      case 'number':
        return 'float64';
      case 'string':
      case 'enum':
        return 'string';
      case 'array':
        return `[]${goType(n.items, `${where}[]`)}`;
      case 'anyOf':
        throw new Error(`protocol-clients: an inline union at ${where} has no Go type`);
      case 'object': {
        if (n.fields.length === 0) return n.extra ? `map[string]${goType(n.extra, `${where}.*`)}` : 'json.RawMessage';
        if (n.extra) throw new Error(`protocol-clients: an object with extra fields at ${where} has no Go type`);
        const name = INLINE[where];
        if (!name) throw new Error(`protocol-clients: name the object at ${where} in scripts/protocol-clients`);
        struct(name, n, where);
        return name;
      }
    }
  };

  for (const { name, node } of model.definitions) {
    const goName = STRUCTS[name];
    if (!goName) continue;
    if (node.kind !== 'object') throw new Error(`protocol-clients: ${name} is not an object`);
    struct(goName, node, name);
  }
  return [
    '// Code generated by scripts/generate-protocol.ts from protocol/schemas/agenticdriver.schema.json; DO NOT EDIT.\n',
    '// Run `npm run protocol` after changing src/protocol. Types Go models its own way\n',
    '// (ContextInput, ContextManifest, Usage, Event, results and receipts) are in types.go.\n\n',
    'package agenticdriver\n\n',
    'import "encoding/json"\n\n',
    out.join('\n'),
  ].join('');
}
