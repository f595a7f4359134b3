/** What the endpoint families share: the runtime, admission, discovery and live counters. */
import type { ToolExecutionRegistry } from '../extensions/application-tools.js';
import type { ApprovalRegistry } from '../extensions/approvals.js';
import type { JobService } from '../extensions/jobs.js';
import type { OperationLog } from '../extensions/operations.js';
import type { SessionService } from '../extensions/sessions.js';
import type { RetrievalService } from '../extensions/retrieval/service.js';
import type { AgenticDriver } from '../runtime/driver.js';
import type { ProviderDiscovery } from '../runtime/discovery.js';
import type { StateStore } from '../store/store.js';
import type { ActiveRuns } from './active-runs.js';
import type { RunMonitor } from './run-monitor.js';
import type { Admission } from './admission.js';
import type { PrometheusMetrics } from './metrics.js';
import type { HostTracing } from './tracing.js';

export interface HostMetrics {
  runs: { completed: number; failed: number; cancelled: number };
}

/** What the operator endpoints read beyond the rest of the context: the store, and this replica's live runs. */
export interface OperatorServices {
  store: Pick<StateStore, 'recentUsage' | 'pendingApprovals' | 'jobs' | 'usageTotals' | 'auditPage'>;
  monitor: RunMonitor;
}

export interface HostContext {
  driver: AgenticDriver;
  /** The registries behind the interactive endpoints, when the config enables them. */
  approvals: ApprovalRegistry | undefined;
  toolExecutions: ToolExecutionRegistry | undefined;
  /** Operation records for `idempotencyKey`. */
  operations: OperationLog | undefined;
  /** Durable jobs, when the config enables them. */
  jobs: JobService | undefined;
  /** Conversation sessions, when the config enables them. */
  sessions: SessionService | undefined;
  /** Scoped retrieval and ingestion, when the config names corpora. */
  retrieval?: RetrievalService | undefined;
  discovery: ProviderDiscovery;
  admission: Admission;
  metrics: HostMetrics;
  /** `GET /metrics`, when the config enables it. */
  prometheus?: PrometheusMetrics | undefined;
  /** OpenTelemetry spans per run, when the config enables tracing. */
  tracing?: HostTracing | undefined;
  /** The operator endpoints, when a token has the operator grant. */
  operator?: OperatorServices | undefined;
  /** Features this host really offers, in the order `/v1/protocol` lists them. */
  features: readonly string[];
  heartbeatMs: number;
  /** How long an SSE write may wait for a client that stopped reading. */
  writeStallMs: number;
  /** The runs being served; shutdown aborts them and waits for their responses. */
  readonly active: ActiveRuns;
  /** True from binding the port until reaping and reconciling are done: requests get 503 HOST_STARTING. */
  starting: boolean;
  closing: boolean;
}
