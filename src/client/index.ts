/** `agenticdriver/client`: the browser-safe TypeScript client of AgenticDriver wire protocol 1.0. */
export { AgenticClient, DISCOVERY_TIMEOUT_MS } from './client.js';
export type {
  ClientOptions,
  RequestOptions,
  TailOptions,
  RunRequestBody as RunRequest,
  ProtocolInfo,
  Provider,
  ProtocolDescription,
  ProviderDescription,
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
  SessionSnapshot,
  JobEventPage,
  JobEventsRequest,
  JobIdentity,
  JobInfo,
  JobState,
  JobSubmit,
} from './client.js';
export { PendingApproval, PendingExecution } from './interactive.js';
export { OperatorClient } from './operator.js';
export type {
  OperatorClientOptions,
  AuditEntry,
  OperatorApproval,
  OperatorApprovalList,
  OperatorAuditPage,
  OperatorAuditRequest,
  OperatorJob,
  OperatorJobList,
  OperatorJobsRequest,
  OperatorListRequest,
  OperatorRun,
  OperatorRunList,
  OperatorRunsRequest,
  OperatorUsage,
  OperatorUsageRequest,
  UsageTotals,
} from './operator.js';
export type { ApplicationToolFunctions, ToolContext, ToolFunction, ToolFunctions } from './interactive.js';
export { DriverError } from '../protocol/errors.js';
export { WIRE_VERSION } from '../protocol/version.js';
