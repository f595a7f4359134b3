/** `agenticdriver/client`: the browser-safe TypeScript client of AgenticDriver wire protocol 1.0. */
export { AgenticClient, DISCOVERY_TIMEOUT_MS } from './client.js';
export type { ClientOptions, RequestOptions, TailOptions } from './client.js';
export type {
  RunRequest,
  ProtocolInfo,
  Provider,
  RunEvent,
  RunResult,
  ApprovalDecision,
  ApprovalRequest,
  ApprovalResolution,
  ToolExecution,
  ToolExecutionIdentity,
  ToolExecutionReceipt,
  ToolExecutionResult,
  SessionCreate,
  SessionDeleteResult,
  SessionIdentity,
  SessionInfo,
  SessionListRequest,
  SessionSnapshot,
  JobEventPage,
  JobEventsRequest,
  JobIdentity,
  JobInfo,
  JobListRequest,
  JobState,
  JobSubmit,
  RunEventPage,
  RunEventsRequest,
  RunInfo,
  RunMode,
  RunReadRequest,
  RunState,
  IngestDocument,
  IngestionManifest,
  IngestRequest,
  IngestResult,
  RetrievalDeleteRequest,
  RetrievalDeleteResult,
  RetrievalIndexReceipt,
  RetrievalIndexRequest,
  RetrievalResult,
  RetrievalSearch,
  AuditEntry,
  OperatorApproval,
  OperatorApprovalList,
  OperatorAuditPage,
  OperatorAuditRequest,
  OperatorJob,
  OperatorJobList,
  OperatorJobsRequest,
  OperatorLimits,
  OperatorLimitsRequest,
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
  BudgetStatus,
  ScopeLimits,
  UsageTotals,
} from '../protocol/schemas.js';
/** @deprecated Renamed to ProtocolInfo, the name every client uses (removed in 0.2). */
export type ProtocolDescription = import('../protocol/schemas.js').ProtocolInfo;
/** @deprecated Renamed to Provider, the name every client uses (removed in 0.2). */
export type ProviderDescription = import('../protocol/schemas.js').Provider;
export { checkCitations, type SourceManifest } from './citations.js';
export { PendingApproval, PendingExecution } from './interactive.js';
export { OperatorClient } from './operator.js';
export type { OperatorClientOptions } from './operator.js';
export type { ApplicationToolFunctions, ToolContext, ToolFunction, ToolFunctions } from './interactive.js';
export { DriverError } from '../protocol/errors.js';
export { WIRE_VERSION } from '../protocol/version.js';
