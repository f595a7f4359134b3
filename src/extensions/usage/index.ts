/**
 * Usage records: one per run and per embedding call, with the host's identity, labels and
 * prices. Each is observed (metrics, logs), handed to the sinks (the in-process callback, a JSONL
 * file, a webhook with its spool) and kept in the store; runs a crash left in flight reach the
 * sinks as interrupted at the next start. Always on; config section `usage`.
 */
import type { UsageRecord } from '../../runtime/usage-record.js';
import { defineExtension } from '../../http/extension.js';
import { UsageConfig } from './config.js';
import { checkUsageConfig } from './config-rules.js';
import type { UsagePipeline } from './pipeline.js';
import type { SinkLog } from './sink.js';

/** Records usage for something other than a run (an embedding call), with the host's identity. */
export interface UsageRecorder {
  hostId: string;
  labels?: Record<string, string>;
  record(record: UsageRecord): Promise<void>;
}

declare module '../../http/extension.js' {
  interface HostServices {
    usage: { pipeline: UsagePipeline; recorder: UsageRecorder };
  }
  interface ExtensionOptions {
    /** Extra metering sink, called in the background once the store has the record (it never holds up a run). */
    onUsage?: (record: UsageRecord) => void | Promise<void>;
    /** Where usage-sink failures are logged (`USAGESTAT_ERROR` / `USAGESTAT_SCHEMA`); default the structured log, else one JSON line on stderr. */
    logUsageSinkFailure?: SinkLog;
  }
}

export const usageExtension = defineExtension({
  id: 'usage',
  features: [],
  configSchema: UsageConfig,
  checkConfig: checkUsageConfig,
  defaultConfig: {},
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
