/** What `startHost` takes (the config, and what code gives it) and what a running host offers. */
import type { Clock } from '../shared/clock.js';
import type { AgenticDriver } from '../runtime/driver.js';
import type { ApproveCallback, HostTool } from '../runtime/tools.js';
import type { StateStore } from '../store/store.js';
import type { Extension, ExtensionOptions } from '../http/extension.js';
import type { ApprovalRegistry } from '../extensions/approvals/registry.js';
import type { ToolExecutionRegistry } from '../extensions/application-tools/registry.js';
import type { RetrievalService } from '../extensions/retrieval/service.js';
import type { UsagePipeline } from '../extensions/usage/pipeline.js';
import type { HostConfig } from './config.js';
import type { HostMetrics } from '../http/run-counter.js';
import type { InternalErrorLog } from './server.js';

export interface HostOptions extends ExtensionOptions {
  config: HostConfig;
  /** Host tools, registered in code (config never loads code). */
  tools?: HostTool[];
  approve?: ApproveCallback;
  /** State store; default: the one the config's `state` names. */
  store?: StateStore;
  heartbeatMs?: number;
  /** Overrides `limits.writeStallTimeoutMs`. */
  writeStallMs?: number;
  /** Overrides `limits.shutdownGraceMs`. */
  shutdownGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  logger?: boolean;
  clock?: Clock;
  /** Where every internal error (a 500) is reported; default one JSON line on stderr. */
  logInternalError?: InternalErrorLog;
  /** The extensions (default `EXTENSIONS`); the config must have been parsed with the same list. */
  extensions?: readonly Extension[];
}

export interface RunningHost {
  url: string;
  /** The operator console page, when `console` is enabled. */
  consoleUrl: string | undefined;
  driver: AgenticDriver;
  /** Present when the config enables interactive approvals. */
  approvals: ApprovalRegistry | undefined;
  /** Present when the config enables application tools. */
  toolExecutions: ToolExecutionRegistry | undefined;
  store: StateStore;
  metrics: HostMetrics;
  /** The usage sinks (callback, file, webhook) and their health. */
  usage: UsagePipeline;
  /** Scoped retrieval, when the config names corpora. */
  retrieval: RetrievalService | undefined;
  /**
   * Applies a new config without a restart, all or nothing (see ./reload.ts): tokens,
   * providers and limits (except `maxBodyBytes`); a config that changes anything else is refused.
   */
  reload(config: HostConfig): Promise<ReloadResult>;
  close(): Promise<void>;
}

export interface ReloadResult {
  /** The top-level config fields whose values changed (tokens are re-read even when their entries did not). */
  changed: string[];
}

export const DEFAULT_CONCURRENCY = { total: 32, perSubject: 4 };
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/** How long a replica's claim on its runs lasts without renewal (renewed every third of it). */
export const DEFAULT_LEASE_MS = 15_000;
