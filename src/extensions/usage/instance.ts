/** Usage records, started: the sinks' pipeline, and the one path every record takes (observers, sinks, store). */
import { randomUUID } from 'node:crypto';
import type { RunStartRecord, UsageRecord } from '../../runtime/usage-record.js';
import { isoTimestamp } from '../../shared/clock.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { logSinkFailure } from '../../http/logging.js';
import type { UsageConfig } from './config.js';
import { UsagePipeline } from './pipeline.js';
import { logSinkFailureToStderr } from './sink.js';

export async function create({ config, host, options, env, clock, store, observers, local, services }: ExtensionDeps<UsageConfig>): Promise<ExtensionInstance> {
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
  // Records on their way to the store: the host's close waits for them before the store closes
  // (a run answered just before a shutdown keeps its record; it is not reaped as interrupted).
  const recording = new Set<Promise<void>>();
  // One path for every usage record, runs and embedding calls alike: observers, sinks, store.
  const record = (usage: UsageRecord): Promise<void> => {
    const stored = (async () => {
      observers.usage(usage);
      try {
        await pipeline.finished(usage).catch(() => undefined);
        await store.usage.record(usage);
        observers.stored(usage);
      } finally {
        pipeline.deliverLater(usage);
      }
    })();
    recording.add(stored);
    void stored.catch(() => undefined).finally(() => recording.delete(stored));
    return stored;
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
    close: async () => {
      await Promise.allSettled([...recording]);
      await pipeline.close();
    },
  };
}
