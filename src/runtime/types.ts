/** Wire types the runtime uses, re-exported from the protocol source of truth. */
export type {
  ApplicationToolDefinition,
  Capabilities,
  ErrorInfo,
  EventPayload,
  FinishReason,
  MediaType,
  ModelCatalog,
  Provider,
  ProviderHealth,
  RunEvent,
  RunEventOf,
  RunProgressPhase,
  RunRequest,
  RunResult,
  ToolCall,
  Usage,
} from '../protocol/schemas.js';
export type { RetryPolicyValue } from '../providers/contract/v1.js';
