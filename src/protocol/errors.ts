/**
 * The error contract: every code the host or a client can produce, each with one
 * deliberate HTTP status (docs/architecture.md, decisions: Status codes). `protocol/status-codes.json` is generated
 * from this table and a test fails when the two drift.
 */
import type { ErrorInfo } from './schemas.js';

export const ERROR_STATUS = {
  // Request mistakes: the caller can fix the request.
  INVALID_REQUEST: 400,
  INVALID_SCHEMA: 400,
  UNKNOWN_PROVIDER: 400,
  UNKNOWN_TOOL: 400,
  UNSUPPORTED_MODEL: 400,
  UNSUPPORTED_TOOLS: 400,
  UNSUPPORTED_CAPABILITY: 400,
  UNSUPPORTED_PROTOCOL_VERSION: 400,
  UNSUPPORTED_MODALITY: 400,
  IDEMPOTENCY_UNAVAILABLE: 400,
  INVALID_TOOL_EXECUTION: 400,
  INVALID_TOOL_OUTPUT: 400,
  TOOL_OUTPUT_LIMIT: 400,
  TOOL_DEFINITION_LIMIT: 400,
  APPLICATION_TOOLS_UNAVAILABLE: 400,
  TOOL_STREAM_REQUIRED: 400,
  INVALID_APPROVAL: 400,
  APPROVAL_UNAVAILABLE: 400,
  APPROVAL_POLICY: 400,
  APPROVAL_STREAM_REQUIRED: 400,
  INVALID_RETRIEVAL: 400,
  INVALID_INGESTION: 400,
  INVALID_DOCUMENT: 400,
  DOCUMENT_LIMIT: 400,
  EMPTY_DOCUMENT: 400,
  EMPTY_EXTRACTION: 400,
  OCR_REQUIRED: 400,
  PDF_EXTRACTOR_REQUIRED: 400,
  PDF_ENCRYPTED: 400,
  PDF_PERMISSIONS: 400,
  RETRIEVAL_UNAVAILABLE: 400,
  NO_RETRIEVAL_EVIDENCE: 400,
  INVALID_CITATION: 400,
  SESSIONS_UNAVAILABLE: 400,
  INVALID_SESSION: 400,
  UNSUPPORTED_CONTINUATION: 400,
  INVALID_JOB: 400,
  INVALID_JOB_CURSOR: 400,
  INVALID_RUN_READ: 400,
  INVALID_RUN_CURSOR: 400,
  INVALID_OPERATOR_REQUEST: 400,
  JOB_REQUEST_UNSUPPORTED: 400,
  SESSION_ACCOUNT_REQUIRED: 400,
  SESSION_HISTORY_CONFLICT: 400,
  SESSION_CONTEXT_UNSUPPORTED: 400,
  SESSION_CONTEXT_LIMIT: 400,
  INVALID_SESSION_STATE: 400,
  INVALID_ARTIFACT: 400,
  INVALID_CONTEXT: 400,
  CONTEXT_UNAVAILABLE: 400,
  CONTEXT_REPLAY_UNAVAILABLE: 400,
  INVALID_CONFIG: 400,
  // Operator-side configuration problems (reported by the CLI at start-up, not over HTTP).
  CONFIG_NOT_FOUND: 400,
  CONFIG_EXISTS: 400,
  INVALID_TLS: 400,
  INVALID_ARGUMENT: 400,
  SECRET_PERMISSIONS: 400,
  SECRET_TOO_LARGE: 400,
  SECRET_UNAVAILABLE: 400,
  UNSUPPORTED_CONFIGURATION: 400,
  // Unsafe transport configuration (a config or client-side setup mistake).
  TLS_REQUIRED: 400,
  INSECURE_TRANSPORT: 400,
  // A host URL that is not an absolute http(s) URL (e.g. no scheme); a client-side mistake.
  INVALID_URL: 400,

  // Credentials.
  UNAUTHORIZED: 401,
  // A client-side code: no usable credential was configured.
  AUTH_REQUIRED: 401,

  // Authenticated but not allowed.
  FORBIDDEN: 403,
  ORIGIN_DENIED: 403,
  APPROVAL_REQUIRED: 403,
  APPROVAL_DENIED: 403,
  RESOURCE_LIMIT: 403,
  RESOURCE_USAGE_UNKNOWN: 403,
  RESOURCE_ADMISSION_DENIED: 403,

  // Unknown objects (or objects of another subject).
  NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  // An unknown corpus, or a source the subject may not see (indistinguishable on purpose).
  CONTEXT_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  APPROVAL_NOT_FOUND: 404,
  TOOL_EXECUTION_NOT_FOUND: 404,

  // State conflicts.
  IDEMPOTENCY_CONFLICT: 409,
  OPERATION_IN_PROGRESS: 409,
  OPERATION_UNCERTAIN: 409,
  TOOL_OUTCOME_UNCERTAIN: 409,
  SOURCE_CONFLICT: 409,
  CHUNK_CONFLICT: 409,
  INDEX_INCOMPATIBLE: 409,
  APPROVAL_MISMATCH: 409,
  TOOL_EXECUTION_MISMATCH: 409,
  TOOL_DEFINITION_CONFLICT: 409,
  SESSION_REVISION_CONFLICT: 409,
  SESSION_BUSY: 409,
  SESSION_INTERRUPTED: 409,
  SESSION_PROVIDER_MISMATCH: 409,
  SESSION_ACCOUNT_CHANGED: 409,
  SESSION_DELETED: 409,
  CONTEXT_CHANGED: 409,
  JOB_EVENT_CONFLICT: 409,
  JOB_ACCOUNT_CHANGED: 409,
  JOB_INTERRUPTED: 409,
  RUN_INTERRUPTED: 409,
  // Start-up: another live host holds this state (the CLI reports it; never sent over HTTP).
  HOST_ALREADY_RUNNING: 409,
  // The run ended because it was cancelled (host shutdown, session deletion, approval cancel).
  CANCELLED: 409,

  // Expired objects and decisions.
  JOB_EXPIRED: 410,
  APPROVAL_EXPIRED: 410,

  // The HTTP request itself: too slow (408), too large (413, 431), a charset other than UTF-8 (415).
  REQUEST_TIMEOUT: 408,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,

  // The run could not finish within the bounds it asked for or the host set.
  STEP_LIMIT: 422,
  TOOL_LIMIT: 422,
  OUTPUT_BUFFER_LIMIT: 422,

  // Capacity.
  BUSY: 429,
  QUEUE_FULL: 429,
  RATE_LIMITED: 429,
  /** A budget of the token, its subject or the host is spent until the period resets (docs/governance.md). */
  BUDGET_EXCEEDED: 429,
  APPROVAL_CAPACITY: 429,
  TOOL_EXECUTOR_CAPACITY: 429,
  SESSION_CAPACITY: 429,
  JOB_STORE_FULL: 429,
  JOB_WORKER_BUSY: 429,

  INTERNAL_ERROR: 500,

  // Upstream failures: the provider, the model's output, a CLI or a tool.
  PROVIDER_AUTH: 502,
  PROVIDER_UNREACHABLE: 502,
  PROVIDER_ERROR: 502,
  PROVIDER_FAILED: 502,
  PROVIDER_REFUSAL: 502,
  INVALID_PROVIDER_RESPONSE: 502,
  TRUNCATED_TOOL_CALL: 502,
  TOOL_NOT_ALLOWED: 502,
  INVALID_TOOL_CALL: 502,
  INVALID_TOOL_ARGUMENTS: 502,
  TOOL_FAILED: 502,
  APPLICATION_TOOL_FAILED: 502,
  INVALID_OUTPUT: 502,
  CLI_AUTH_REQUIRED: 502,
  CLI_UNAVAILABLE: 502,
  CLI_UPGRADE_REQUIRED: 502,
  CLI_POLICY_VIOLATION: 502,
  CLI_FAILED: 502,
  CLI_OUTPUT_LIMIT: 502,
  INVALID_CLI_OUTPUT: 502,
  // Retrieval and ingestion: the embedding vendor, the PDF extractor, the index.
  INVALID_EMBEDDING: 502,
  EMBEDDING_AUTH_REJECTED: 502,
  EMBEDDING_HTTP_ERROR: 502,
  EMBEDDING_FAILED: 502,
  PDF_EXTRACTOR_UNAVAILABLE: 502,
  PDF_EXTRACTION_FAILED: 502,
  INVALID_EXTRACTION: 502,
  UNSUPPORTED_INGESTION: 502,
  // Received by clients from a peer; listed so every code has a home.
  INVALID_RESPONSE: 502,
  INVALID_STREAM: 502,
  INCOMPLETE_STREAM: 502,
  UNSUPPORTED_EVENT: 502,
  RESPONSE_TOO_LARGE: 502,
  HTTP_ERROR: 502,
  // A client's job tail gave up reconnecting to the live job stream.
  JOB_STREAM_LOST: 503,
  RUN_STREAM_LOST: 503,
  // Client-side: the runtime lacks what the client needs (e.g. no fetch or streams).
  UNSUPPORTED_ENVIRONMENT: 500,
  // Client-side: a call on a client after its close().
  CLIENT_CLOSED: 400,

  // The host (or one of its stores) cannot serve right now.
  HOST_STARTING: 503,
  HOST_UNREACHABLE: 503,
  LISTEN_FAILED: 503,
  CONFIG_WRITE_FAILED: 503,
  HOST_SHUTTING_DOWN: 503,
  AUTH_UNAVAILABLE: 503,
  INVALID_AUTH_POLICY: 503,
  APPROVAL_AUDIT_FAILED: 503,
  OPERATION_STORE_ERROR: 503,
  OPERATION_STORE_FULL: 503,
  OPERATION_RECORD_LIMIT: 503,
  RESOURCE_POLICY_UNAVAILABLE: 503,
  ADMISSION_IDENTITY_REQUIRED: 503,
  JOBS_UNAVAILABLE: 503,
  JOB_STORE_ERROR: 503,
  JOB_RECORD_LIMIT: 503,
  JOB_STORE_CLOSED: 503,
  JOB_LEASE_LOST: 503,
  USAGESTAT_ERROR: 503,
  USAGESTAT_SCHEMA: 503,
  INDEX_FULL: 503,
  INDEX_STORAGE_ERROR: 503,

  // Time bounds.
  IDLE_TIMEOUT: 504,
  TIMEOUT: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Codes whose condition is transient by nature; everything else defaults to false. */
const RETRYABLE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'BUSY',
  'QUEUE_FULL',
  'RATE_LIMITED',
  'HOST_STARTING',
  'HOST_SHUTTING_DOWN',
  'AUTH_UNAVAILABLE',
  'OPERATION_IN_PROGRESS',
  'IDLE_TIMEOUT',
  'REQUEST_TIMEOUT',
  'PROVIDER_UNREACHABLE',
  'PROVIDER_ERROR',
  'APPROVAL_CAPACITY',
  'TOOL_EXECUTOR_CAPACITY',
  'SESSION_CAPACITY',
  'SESSION_BUSY',
  'JOB_WORKER_BUSY',
  'JOB_STORE_FULL',
  'JOB_STREAM_LOST',
  'RUN_STREAM_LOST',
]);

export function isKnownErrorCode(code: string): code is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_STATUS, code);
}

/** HTTP status for a code. Unknown codes are internal faults: a host never invents codes. */
export function statusForCode(code: string): number {
  return isKnownErrorCode(code) ? ERROR_STATUS[code] : 500;
}

export function defaultRetryable(code: string): boolean {
  return RETRYABLE_CODES.has(code);
}


/** The one error type of the SDK: the wire `ErrorInfo` as a JavaScript error. */
export class DriverError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly outcome: 'uncertain' | undefined;
  /** Seconds until trying again may succeed: the host's `Retry-After` header (not part of the envelope). */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: string, message: string, options: { retryable?: boolean; outcome?: 'uncertain'; cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DriverError';
    this.code = code;
    this.retryable = options.retryable ?? defaultRetryable(code);
    this.outcome = options.outcome;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  toJSON(): ErrorInfo {
    const info: ErrorInfo = { code: this.code, message: this.message, retryable: this.retryable };
    if (this.outcome) info.outcome = this.outcome;
    return info;
  }

  static from(info: ErrorInfo): DriverError {
    return new DriverError(info.code, info.message, { retryable: info.retryable, ...(info.outcome ? { outcome: info.outcome } : {}) });
  }
}

/** Any thrown value as a public error: typed errors pass through, anything else is masked. */
export function toDriverError(error: unknown): DriverError {
  if (error instanceof DriverError) return error;
  return new DriverError('INTERNAL_ERROR', 'The driver hit an internal error.', { cause: error });
}
