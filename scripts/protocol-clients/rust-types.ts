/**
 * Rust types emitter: a serde struct per wire object the crate exposes as-is and a
 * string enum per closed set of values the crate names, with the public names, field
 * types and derives of the hand-written types they replace. Rules, not tables, where the
 * crate has one: field names are snake_case with `rename_all = "camelCase"` when a name
 * needs it; an optional field is an `Option` skipped when `None`; an object reached from
 * a request (what the client sends) rejects unknown fields, a response object ignores
 * them (`serde(default)` on its options); objects with extra keys are a `BTreeMap` (or a
 * flattened one beside the named fields); integers are `u32` unless unbounded (`u64`).
 * The tables hold what is a choice: which enum-valued fields get a Rust enum (the others
 * stay `String`, open for the caller), integer types that differ from the rule, derives
 * beyond the common ones, and doc comments. The shapes Rust models its own way stay in
 * clients/rust/src/types.rs: the attachment union (ContextInput), the event (Event,
 * EventPayload), the tool result with its present-`null` output (ToolExecutionResult).
 */
import { NAMES } from './python-types.js';
import { snake, words, type Node, type WireModel } from './model.js';

export const RUST_TYPES_FILE = 'clients/rust/src/generated/types.rs';

/** Named schemas generated as Rust structs, with their Rust name. */
const STRUCTS: Record<string, string> = {
  ContextSource: 'ContextSource',
  HistoryMessage: 'HistoryMessage',
  ApplicationToolDefinition: 'ApplicationToolDefinition',
  RunRequest: 'RunRequest',
  Usage: 'Usage',
  SessionInfo: 'SessionInfo',
  ContextManifest: 'ContextManifest',
  DraftArtifact: 'DraftArtifact',
  IngestionManifest: 'IngestionManifest',
  RetrievalResult: 'RetrievalResult',
  RunResult: 'RunResult',
  ErrorInfo: 'ErrorInfo',
  ToolCall: 'ToolCall',
  ApprovalRequest: 'ApprovalRequest',
  ApprovalResolution: 'ApprovalResolution',
  ToolExecution: 'ToolExecution',
  ProtocolInfo: 'ProtocolInfo',
  Provider: 'Provider',
  Capabilities: 'Capabilities',
  ProviderHealth: 'ProviderHealth',
  ModelCatalog: 'ModelCatalog',
  ApprovalDecision: 'ApprovalDecision',
  ToolExecutionIdentity: 'ToolExecutionIdentity',
  ToolExecutionReceipt: 'ToolExecutionReceipt',
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

/** Rust names of schemas referred to but modelled by hand. */
const REFERRED: Record<string, string> = { ...STRUCTS, ContextInput: 'ContextInput', RunEvent: 'Event', IngestDocument: 'IngestDocument' };

/** What the client sends: every object reached from these is strict. */
const REQUESTS = [
  'RunRequest',
  'ApprovalDecision',
  'ToolExecutionIdentity',
  'ToolExecutionResult',
  'ContextInput',
  'SessionCreate',
  'SessionIdentity',
  'JobSubmit',
  'JobIdentity',
  'JobEventsRequest',
  'JobListRequest',
  'SessionListRequest',
  'RunReadRequest',
  'RunEventsRequest',
  'RetrievalSearch',
  'RetrievalIndexRequest',
  'RetrievalDeleteRequest',
  'IngestRequest',
  'IngestDocument',
  'OperatorRunsRequest',
  'OperatorListRequest',
  'OperatorJobsRequest',
  'OperatorUsageRequest',
  'OperatorLimitsRequest',
  'OperatorAuditRequest',
];

/** Names of unnamed objects (the Python table, with the Rust spelling where it differs). */
const INLINE: Record<string, string> = {
  ...NAMES,
  'IngestionManifest.chunker': 'ChunkerIdentity',
};

/** Enum-valued fields that are a Rust enum (the others are `String`), by where they sit. */
const ENUMS: Record<string, string> = {
  'HistoryMessage.role': 'Role',
  'RunRequest.approvals.mode': 'ApprovalMode',
  'RunRequest.approvals.idlePolicy': 'IdlePolicy',
  'ApprovalRequest.idlePolicy': 'IdlePolicy',
  'RunResult.finishReason': 'FinishReason',
  'SessionInfo.mode': 'SessionMode',
  'SessionInfo.state': 'SessionState',
  'ContextManifest.origin': 'ContextOrigin',
  'ApprovalResolution.outcome': 'ApprovalOutcome',
  'RunProgressEvent.phase': 'ProgressPhase',
  'Provider.authMode': 'AuthMode',
  'ProviderHealth.status': 'HealthStatus',
  'ModelCatalog.source': 'CatalogSource',
  'ApprovalDecision.decision': 'ApprovalAction',
  'ToolExecutionReceipt.status': 'ReceiptStatus',
  'ErrorInfo.outcome': 'ErrorOutcome',
  'SessionCreate.mode': 'SessionMode',
  'JobInfo.state': 'JobState',
  'JobListRequest.state': 'JobState',
  'RunInfo.mode': 'RunMode',
  'RunInfo.state': 'RunState',
};

/** Enums named above but defined by hand (error.rs). */
const HAND_ENUMS = new Set(['ErrorOutcome']);

/** Enums used only by hand-written types: generated from where they sit. */
const STANDALONE_ENUMS = ['RunProgressEvent.phase'];

/** Field types that differ from the rule (u32, or u64 when unbounded). */
const FIELD_TYPES: Record<string, string> = {
  'RunRequest.idleTimeoutMs': 'u64',
  'RunRequest.retrieval.maxContextBytes': 'u64',
  'RetrievalSearch.maxContextBytes': 'u64',
  'IngestRequest.idleTimeoutMs': 'u64',
  'RunResult.steps': 'u32',
  'ContextManifest.bytes': 'u64',
  'IngestionManifest.inputBytes': 'u64',
  'IngestionManifest.extractedTextBytes': 'u64',
  'IngestionManifest.indexedTextBytes': 'u64',
};

/** Derives beyond `Debug, Clone, PartialEq, Serialize, Deserialize`. */
const DEFAULT = new Set([
  'RunRequest', 'ContextSource', 'SourceLocation', 'RetrievalOptions', 'Usage', 'RetrievalSearch', 'JobListRequest', 'SessionListRequest',
  'OperatorRunsRequest', 'OperatorListRequest', 'OperatorJobsRequest', 'OperatorUsageRequest', 'OperatorLimitsRequest', 'OperatorAuditRequest',
]);
const EQ = new Set([
  'HistoryMessage', 'SessionBinding', 'ApprovalOptions', 'SessionInfo', 'DraftArtifact', 'RetrievalIndex', 'IngestionManifest',
  'ExtractorIdentity', 'ChunkerIdentity', 'PageCoverage', 'MessageCoverage', 'ErrorInfo', 'ApprovalResolution', 'ProtocolInfo',
  'Capabilities', 'ProviderHealth', 'ModelCatalog', 'ToolExecutionIdentity', 'ToolExecutionReceipt',
  'SessionCreate', 'SessionIdentity', 'SessionSnapshot', 'SessionDeleteResult', 'JobIdentity', 'JobEventsRequest', 'JobInfo',
  'JobListRequest', 'SessionListRequest', 'JobList', 'SessionList', 'RunReadRequest', 'RunEventsRequest',
  'RetrievalIndexReceipt', 'RetrievalDeleteRequest', 'RetrievalDeleteResult', 'IngestResult',
]);

const DOCS: Record<string, string> = {
  RunRequest: '`POST /v1/runs` body. Build with [`RunRequest::new`] and set optional fields directly.',
  ContextSource: "A context source's identity (request side, strict).",
  SessionBinding: 'Continue a stored conversation session at an exact revision.',
  ApprovalOptions: 'Opt into interactive approvals (streaming runs only).',
  ApplicationToolDefinition: 'A function the application executes itself (streaming runs only).',
  Usage: 'Usage counters; a field is absent when it is unknown.',
  ContextManifest: 'What one context source contributed to a run.',
  ErrorInfo: 'The wire error object of `run.failed` / `run.cancelled` and of HTTP error envelopes.',
  ProtocolInfo: '`GET /v1/protocol`.',
  Provider: 'One provider instance the token may use (`GET /v1/providers`).',
  ApprovalDecision:
    '`POST /v1/approvals/decisions`: decides one pending approval, echoing its run and call.\n/// Build it from the event with [`ApprovalRequest::decision`].',
  DecidedCall: 'The call an approval decision is about (strict copy of the requested call).',
  ToolExecutionIdentity: 'Names one dispatched application tool execution (`POST /v1/tool-executions/progress`).',
  ToolExecutionReceipt: "The host's receipt for tool progress or a tool result.",
  SessionCreate: '`POST /v1/sessions/create` body.',
  SessionIdentity: 'Names one stored session (`POST /v1/sessions/read`, `/v1/sessions/delete`).',
  SessionSnapshot: 'A session with its visible history.',
  SessionDeleteResult: 'The answer of `POST /v1/sessions/delete`.',
  JobSubmit: '`POST /v1/jobs/submit` body: an idempotency key and a run request.',
  JobIdentity: 'Names one durable job (`POST /v1/jobs/read`, `/v1/jobs/cancel`).',
  JobEventsRequest: '`POST /v1/jobs/events`: the committed events after `after` (at most `limit`, default 100).',
  JobInfo: 'The state of one durable job; `cursor` counts its committed events.',
  JobListRequest: '`POST /v1/jobs/list`: at most `limit` (default 20) of the subject\'s jobs, optionally in one `state`.',
  JobList: 'The subject\'s jobs, most recently updated first.',
  SessionListRequest: '`POST /v1/sessions/list`: at most `limit` (default 20) of the subject\'s sessions.',
  SessionList: 'The subject\'s sessions, most recently used first.',
  JobEventPage: "One page of a job's committed events.",
  RunReadRequest: 'Names one run (`POST /v1/runs/read`).',
  RunEventsRequest: "`POST /v1/runs/events`: a run's committed events after `after` (at most `limit`, default 100).",
  RunInfo: 'Any run read back, attached or background; `cursor` counts its committed events, `result` or `error` tell how a finished run ended.',
  RunEventPage: "One page of a run's committed events.",
  RetrievalSearch: '`POST /v1/retrieval/search` body. Build with `RetrievalSearch { corpus, query, ..Default::default() }`.',
  RetrievalIndexRequest: "`POST /v1/retrieval/index` body: a source revision's own chunks.",
  RetrievalIndexReceipt: 'The answer of `POST /v1/retrieval/index`.',
  RetrievalDeleteRequest: '`POST /v1/retrieval/delete` body.',
  RetrievalDeleteResult: 'The answer of `POST /v1/retrieval/delete`.',
  IngestRequest: '`POST /v1/retrieval/ingest` body: one document to extract, chunk and index.',
  IngestResult: 'The answer of `POST /v1/retrieval/ingest`, with its ingestion manifest.',
  OperatorRunsRequest: '`POST /v1/operator/runs` body; `finished` absent = the host default (20).',
  OperatorRunList: 'The answer of `POST /v1/operator/runs`: active runs on this replica, one page of finished ones (`next_before` for the next).',
  OperatorRunDetail: 'The answer of `GET /v1/operator/runs/{id}`: the run, and its steps when this replica served it.',
  OperatorUpdate: 'One change on `GET /v1/operator/updates` (a `snapshot` first).',
  OperatorListRequest: '`POST /v1/operator/approvals` body.',
  OperatorJobsRequest: '`POST /v1/operator/jobs` body.',
  OperatorUsageRequest: '`POST /v1/operator/usage` body.',
  OperatorLimitsRequest: '`POST /v1/operator/limits` body; `subject` absent = every configured scope.',
  OperatorLimits: 'The answer of `POST /v1/operator/limits`: every configured scope\'s limits, each budget as it stands now.',
  OperatorAuditRequest: '`POST /v1/operator/audit` body; `before` is the previous page\'s `next_before`.',
};

const FIELD_DOCS: Record<string, string> = {
  'RunRequest.idleTimeoutMs': 'Host-side inactivity limit; absent or 0 means none (there is no default deadline).',
  'RunResult.text': "The final step's visible text (`text.delta` events span all steps).",
  'Usage.apiEquivalentCostUsd': 'An estimate, never a charge.',
  'DraftArtifact.status': 'Always `"draft"`: the application decides whether to accept it.',
  'ProtocolInfo.features': 'Open-ended: unknown feature names are kept.',
  'Provider.models': "The host's model allowlist: absent = any explicit model, empty = none.",
  'Capabilities.*': 'Further boolean capabilities (`safeRetries`, `images`, ...).',
  'ProviderHealth.code': 'Open set of codes.',
};

/** A field name that is a Rust keyword is written raw (`r#type`); serde still names it `type`. */
const rustIdent = (name: string): string => (['type', 'match', 'ref', 'move', 'loop'].includes(name) ? `r#${name}` : name);

const pascal = (value: string): string => words(value).map((w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase()).join('');

type ObjectNode = Extract<Node, { kind: 'object' }>;

/** Where `where` points in the model (`Def.field.field`, `Def.field[]`). */
function at(model: WireModel, where: string): Node {
  const [definition, ...path] = where.split('.');
  let n = model.definitions.find((d) => d.name === definition)?.node;
  for (const step of path) {
    const name = step.replace(/\[\]$/, '');
    const field = n?.kind === 'object' ? n.fields.find((f) => f.name === name) : undefined;
    n = field?.node;
    if (n && step.endsWith('[]')) n = n.kind === 'array' ? n.items : undefined;
  }
  if (!n) throw new Error(`protocol-clients: ${where} (scripts/protocol-clients/rust-types.ts) is not in the schemas`);
  return n;
}

export function emitRustTypes(model: WireModel): string {
  const out: string[] = [];
  const emitted = new Map<string, string>();
  const strict = new Set<string>();

  // Every object (by where it sits) reached from what the client sends.
  const reach = (n: Node, where: string): void => {
    switch (n.kind) {
      case 'ref':
        if (!strict.has(n.name)) {
          strict.add(n.name);
          reach(at(model, n.name), n.name);
        }
        break;
      case 'array':
        reach(n.items, `${where}[]`);
        break;
      case 'anyOf':
        n.options.forEach((option, index) => reach(option, `${where}|${index}`));
        break;
      case 'object':
        strict.add(where);
        if (INLINE[where]) strict.add(INLINE[where]);
        for (const field of n.fields) reach(field.node, `${where}.${field.name}`);
        break;
      default:
    }
  };
  for (const name of REQUESTS) reach({ kind: 'ref', name }, name);

  const once = (name: string, text: string): void => {
    const before = emitted.get(name);
    if (before === undefined) {
      emitted.set(name, text);
      out.push(text);
    } else if (before !== text) throw new Error(`protocol-clients: ${name} would be two different Rust types`);
  };

  const enumType = (name: string, n: Node, where: string): string => {
    if (n.kind !== 'enum') throw new Error(`protocol-clients: ${where} is not an enum`);
    if (HAND_ENUMS.has(name)) return name;
    const plain = n.values.every((value) => /^[a-z]+(-[a-z]+)*$/.test(value));
    const variants = n.values.map((value) => (plain ? `    ${pascal(value)},\n` : `    #[serde(rename = ${JSON.stringify(value)})]\n    ${pascal(value)},\n`));
    const rename = !plain ? '' : n.values.some((value) => value.includes('-')) ? '#[serde(rename_all = "kebab-case")]\n' : '#[serde(rename_all = "lowercase")]\n';
    once(name, `#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]\n${rename}pub enum ${name} {\n${variants.join('')}}\n`);
    return name;
  };

  const struct = (name: string, n: ObjectNode, where: string): void => {
    if (emitted.has(name)) return;
    emitted.set(name, '');
    const request = strict.has(where) || strict.has(name);
    const fields = n.fields.map((field) => {
      const path = `${where}.${field.name}`;
      const type = FIELD_TYPES[path] ?? rustType(field.node, path);
      const doc = FIELD_DOCS[path] ? `    /// ${FIELD_DOCS[path]}\n` : '';
      const attribute = field.required ? '' : request ? '    #[serde(skip_serializing_if = "Option::is_none")]\n' : '    #[serde(default, skip_serializing_if = "Option::is_none")]\n';
      return `${doc}${attribute}    pub ${rustIdent(snake(field.name))}: ${field.required ? type : `Option<${type}>`},\n`;
    });
    if (n.extra) {
      const doc = FIELD_DOCS[`${where}.*`] ? `    /// ${FIELD_DOCS[`${where}.*`]}\n` : '';
      fields.push(`${doc}    #[serde(flatten)]\n    pub other: BTreeMap<String, ${rustType(n.extra, `${where}.*`)}>,\n`);
    }
    const derives = ['Debug', 'Clone', ...(DEFAULT.has(name) ? ['Default'] : []), 'PartialEq', ...(EQ.has(name) ? ['Eq'] : []), 'Serialize', 'Deserialize'];
    const serde = [
      ...(n.fields.some((field) => snake(field.name).includes('_')) ? ['rename_all = "camelCase"'] : []),
      ...(request ? ['deny_unknown_fields'] : []),
    ];
    const doc = DOCS[name] ? `/// ${DOCS[name]}\n` : '';
    const text = `${doc}#[derive(${derives.join(', ')})]\n${serde.length ? `#[serde(${serde.join(', ')})]\n` : ''}pub struct ${name} {\n${fields.join('')}}\n`;
    emitted.set(name, text);
    out.push(text);
  };

  const rustType = (n: Node, where: string): string => {
    switch (n.kind) {
      case 'any':
        return 'Value';
      case 'ref': {
        const name = REFERRED[n.name];
        if (!name) throw new Error(`protocol-clients: the Rust type of ${n.name} (at ${where}) is not named in scripts/protocol-clients/rust-types.ts`);
        return name;
      }
      case 'boolean':
        return 'bool';
      case 'integer':
        return n.maximum === undefined || n.maximum > 0xffffffff ? 'u64' : 'u32';
      case 'number':
        return 'f64';
      case 'string':
        return 'String';
      case 'enum':
        return ENUMS[where] ? enumType(ENUMS[where], n, where) : 'String';
      case 'array':
        return `Vec<${rustType(n.items, `${where}[]`)}>`;
      case 'anyOf':
        throw new Error(`protocol-clients: an inline union at ${where} has no Rust type`);
      case 'object': {
        if (n.fields.length === 0) return n.extra ? `BTreeMap<String, ${rustType(n.extra, `${where}.*`)}>` : 'JsonObject';
        const name = INLINE[where];
        if (!name) throw new Error(`protocol-clients: name the object at ${where} in scripts/protocol-clients`);
        struct(name, n, where);
        return name;
      }
    }
  };

  for (const { name, node } of model.definitions) {
    const rust = STRUCTS[name];
    if (!rust) continue;
    if (node.kind !== 'object') throw new Error(`protocol-clients: ${name} is not an object`);
    struct(rust, node, name);
  }
  for (const where of STANDALONE_ENUMS) enumType(ENUMS[where]!, at(model, where), where);
  for (const where of Object.keys(ENUMS)) at(model, where);
  return [
    '// Code generated by scripts/generate-protocol.ts from protocol/schemas/agenticdriver.schema.json; DO NOT EDIT.\n',
    '//! The plain wire structs and string enums of protocol 1.0, re-exported by `crate::types`.\n',
    '//! Run `npm run protocol` after changing `src/protocol`. Types Rust models its own way\n',
    '//! (ContextInput, IngestDocument, Event and EventPayload, ToolExecutionResult) are in `types.rs`.\n',
    'use crate::error::ErrorOutcome;\n',
    'use crate::types::{ContextInput, Event, IngestDocument, JsonObject};\n',
    'use serde::{Deserialize, Serialize};\n',
    'use serde_json::Value;\n',
    'use std::collections::BTreeMap;\n\n',
    out.join('\n'),
  ].join('');
}
