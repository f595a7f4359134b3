/**
 * AgenticDriver wire protocol 1.0 — the single source of truth, one file per feature under
 * ./schemas/ (this file gathers them).
 *
 * Every schema here is plain JSON Schema (TypeBox builds it), so the same objects give
 * TypeScript types (`Static`), runtime validators (Ajv, see ./validate.ts) and the
 * published documents under `protocol/` (scripts/generate-protocol.ts).
 *
 * Request objects are strict (unknown fields rejected). Response objects and events
 * tolerate unknown fields, except the nested objects the protocol declares strict.
 * Rules JSON Schema cannot express (cross-field checks) live in ./rules.ts.
 */
import type { TSchema } from '@sinclair/typebox';
import { ErrorEnvelope, ErrorInfo, ToolCall, Usage } from './schemas/common.js';
import { ContextInput, ContextManifest, ContextSource, DraftArtifact } from './schemas/context.js';
import { Capabilities, Health, ModelCatalog, ProtocolInfo, Provider, ProviderHealth, ProviderList } from './schemas/discovery.js';
import { EVENT_SCHEMAS, EventEnvelope, RunEvent } from './schemas/events.js';
import { ApplicationToolDefinition, ApprovalDecision, ApprovalRequest, ApprovalResolution, HistoryMessage, SessionInfo, ToolExecution, ToolExecutionIdentity, ToolExecutionReceipt, ToolExecutionResult } from './schemas/interactive.js';
import { JobEventPage, JobEventsRequest, JobIdentity, JobInfo, JobList, JobListRequest, JobSubmit } from './schemas/jobs.js';
import {
  AuditEntry,
  OperatorApproval,
  OperatorApprovalList,
  OperatorAuditPage,
  OperatorAuditRequest,
  BudgetStatus,
  OperatorLimits,
  OperatorLimitsRequest,
  ScopeLimits,
  OperatorJob,
  OperatorJobList,
  OperatorJobsRequest,
  OperatorListRequest,
  OperatorRun,
  OperatorRunDetail,
  OperatorRunList,
  OperatorRunsRequest,
  OperatorStep,
  OperatorToolCall,
  OperatorUpdate,
  OperatorUsage,
  OperatorUsageRequest,
  OperatorWaiting,
  UsageTotals,
} from './schemas/operator.js';
import { IngestDocument, IngestionManifest, IngestRequest, IngestResult, RetrievalDeleteRequest, RetrievalDeleteResult, RetrievalIndexReceipt, RetrievalIndexRequest, RetrievalResult, RetrievalSearch } from './schemas/retrieval.js';
import { RunEventPage, RunEventsRequest, RunInfo, RunReadRequest } from './schemas/run-records.js';
import { RunRequest, RunResult } from './schemas/runs.js';
import { SessionCreate, SessionDeleteResult, SessionIdentity, SessionList, SessionListRequest, SessionSnapshot } from './schemas/sessions.js';

export * from './schemas/common.js';
export * from './schemas/context.js';
export * from './schemas/retrieval.js';
export * from './schemas/interactive.js';
export * from './schemas/runs.js';
export * from './schemas/events.js';
export * from './schemas/discovery.js';
export * from './schemas/sessions.js';
export * from './schemas/jobs.js';
export * from './schemas/run-records.js';
export * from './schemas/operator.js';

/** Every named schema, in the order the published documents list them. */
export const NAMED_SCHEMAS: TSchema[] = [
  ErrorInfo,
  ErrorEnvelope,
  Usage,
  ToolCall,
  ContextSource,
  ContextInput,
  ContextManifest,
  DraftArtifact,
  IngestionManifest,
  RetrievalResult,
  RetrievalSearch,
  RetrievalIndexRequest,
  RetrievalIndexReceipt,
  RetrievalDeleteRequest,
  RetrievalDeleteResult,
  IngestDocument,
  IngestRequest,
  IngestResult,
  HistoryMessage,
  SessionInfo,
  ApplicationToolDefinition,
  ApprovalRequest,
  ApprovalResolution,
  ToolExecution,
  ApprovalDecision,
  ToolExecutionIdentity,
  ToolExecutionResult,
  ToolExecutionReceipt,
  RunRequest,
  RunResult,
  EventEnvelope,
  ...Object.values(EVENT_SCHEMAS),
  RunEvent,
  ProtocolInfo,
  ProviderHealth,
  ModelCatalog,
  Capabilities,
  Provider,
  ProviderList,
  Health,
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
  OperatorWaiting,
  OperatorRun,
  OperatorRunsRequest,
  OperatorRunList,
  OperatorToolCall,
  OperatorStep,
  OperatorRunDetail,
  OperatorUpdate,
  OperatorListRequest,
  OperatorApproval,
  OperatorApprovalList,
  OperatorJobsRequest,
  OperatorJob,
  OperatorJobList,
  OperatorUsageRequest,
  UsageTotals,
  OperatorUsage,
  OperatorLimitsRequest,
  BudgetStatus,
  ScopeLimits,
  OperatorLimits,
  OperatorAuditRequest,
  AuditEntry,
  OperatorAuditPage,
];
