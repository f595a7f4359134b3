/**
 * Every extension the host can run, in the order they start (and, reversed, shut down). The
 * host derives from this list its config schema, the features it advertises, the endpoints it
 * serves and the order of start and shutdown. An extension that offers the runtime services
 * stands before every extension that uses the runtime (see `ExtensionDeps.driver`).
 *
 * Adding an extension is one folder and one line here (docs/architecture.md, "Adding an extension").
 */
import type { Extension } from '../http/extension.js';
import { a2aExtension } from './a2a/index.js';
import { agUiExtension } from './ag-ui/index.js';
import { applicationToolsExtension } from './application-tools/index.js';
import { approvalsExtension } from './approvals/index.js';
import { consoleExtension } from './console/index.js';
import { idempotencyExtension } from './idempotency/index.js';
import { jobsExtension } from './jobs/index.js';
import { mcpExtension } from './mcp/index.js';
import { metricsExtension } from './metrics/index.js';
import { operatorExtension } from './operator/index.js';
import { retrievalExtension } from './retrieval/index.js';
import { runRecordsExtension } from './run-records/index.js';
import { sessionsExtension } from './sessions/index.js';
import { tracingExtension } from './tracing/index.js';
import { usageExtension } from './usage/index.js';

export const EXTENSIONS: readonly Extension[] = [
  metricsExtension,
  tracingExtension,
  usageExtension,
  approvalsExtension,
  applicationToolsExtension,
  retrievalExtension,
  idempotencyExtension,
  sessionsExtension,
  jobsExtension,
  runRecordsExtension,
  mcpExtension,
  agUiExtension,
  a2aExtension,
  operatorExtension,
  consoleExtension,
];
