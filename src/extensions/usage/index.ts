/**
 * Usage records: one per run and per embedding call, with the host's identity, labels and
 * prices. Each is observed (metrics, logs), handed to the sinks (the in-process callback, a JSONL
 * file, a webhook with its spool) and kept in the store; runs a crash left in flight reach the
 * sinks as interrupted at the next start. Always on; config section `usage`.
 */
import { randomUUID } from 'node:crypto';
import type { RunStartRecord, UsageRecord } from '../../runtime/usage-record.js';
import { isoTimestamp } from '../../shared/clock.js';
import { defineExtension } from '../../http/extension.js';
import { logSinkFailure } from '../../http/logging.js';
import { UsageConfig } from './config.js';
import { checkUsageConfig } from './config-rules.js';
import { UsagePipeline } from './pipeline.js';
import { logSinkFailureToStderr, type SinkLog } from './sink.js';

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
  async create({ config, host, options, env, clock, store, observers, local, services }) {
    // Usage sinks; nothing is reconciled or sent until the host listens.
    const pipeline = await UsagePipeline.open({
      usage: config,
      configDir: host.configDir,
      localDirectory: local.directory,
      slot: local.slot,
      env,
      callback: options.onUsage,
      log: (failure) => {
        observers.usageSinkFailed(failure);
        if (options.logUsageSinkFailure) options.logUsageSinkFailure(failure);
        else if (options.log) logSinkFailure(options.log, failure);
        else logSinkFailureToStderr(failure);
      },
    });
    const spool = pipeline.spool();
    if (spool) services.metrics?.watchSpool(() => pipeline.spool()!);
    // One path for every usage record, runs and embedding calls alike: observers, sinks, store.
    const record = async (usage: UsageRecord) => {
      observers.usage(usage);
      try {
        await pipeline.finished(usage).catch(() => undefined);
        await store.usage.record(usage);
        observers.stored(usage);
      } finally {
        pipeline.deliverLater(usage);
      }
    };
    // Runs and embedding calls carry the same host id.
    const hostId = config.hostId ?? randomUUID();
    return {
      services: { usage: { pipeline, recorder: { hostId, ...(config.labels ? { labels: config.labels } : {}), record } } },
      run: {
        metering: { hostId, labels: config.labels, prices: config.prices },
        onRunStarted: async (start: RunStartRecord) => {
          await Promise.all([store.usage.runStarted(start), pipeline.runStarted(start)]);
        },
        onUsage: record,
      },
      // Runs this replica's previous process (or a dead replica's slot) left in flight reach the sinks as interrupted.
      start: async () => {
        const at = isoTimestamp(clock);
        await pipeline.start(at);
        await local.adoptOrphans((directory, slot) => pipeline.adopt(directory, slot, at));
      },
      close: () => pipeline.close(),
    };
  },
});
