/**
 * The host's usage pipeline: checks each record, hands it to every configured sink (the
 * in-process callback, the JSONL file, the webhook), and keeps their health where `doctor`
 * and `status` read it (`usage-sinks.json` in the host's local state folder). A sink failure
 * never reaches the run: it is counted, logged as `USAGESTAT_ERROR` / `USAGESTAT_SCHEMA`, and
 * kept. It also journals runs in flight, so that a run a crash interrupted still reaches the
 * sinks (as `interrupted`) at the next start. The journal is this process's own: its folder is
 * locked by the host for the process's life (src/host/local-state.ts), so no other live process
 * reads it as dead.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { readSecret } from '../../shared/secrets.js';
import { interruptedRecord, USAGE_RECORD_SCHEMA, type RunStartRecord, type UsageRecord } from '../../runtime/usage-record.js';
import type { UsageConfig } from './config.js';
import { JsonlFileSink } from './file-sink.js';
import { CallbackSink, HealthCounter, logSinkFailureToStderr, type SinkHealth, type SinkLog, type UsageSink } from './sink.js';
import { WebhookSink, type SpoolStats } from './webhook-sink.js';
import { webhookSpoolDirectory } from './spool-path.js';

export const HEALTH_FILE = 'usage-sinks.json';
const RUN_FILE = /^[0-9A-Za-z-]{1,128}\.json$/;

export interface UsageHealthReport {
  updatedAt: string;
  sinks: SinkHealth[];
}

export interface PipelineOptions {
  usage: UsageConfig | undefined;
  configDir: string;
  /** This process's own local state folder (src/host/local-state.ts): the journal and health file live there. */
  localDirectory: string;
  /** PostgreSQL: this replica's slot (`replica-N`), for a configured spool directory. */
  slot?: string | undefined;
  env: NodeJS.ProcessEnv;
  callback?: ((record: UsageRecord) => void | Promise<void>) | undefined;
  log?: SinkLog | undefined;
}

export class UsagePipeline {
  private readonly checker: HealthCounter;
  private readonly journal: string | undefined;

  private constructor(
    private readonly sinks: UsageSink[],
    private readonly localDirectory: string,
    private readonly spoolOf: (directory: string, slot: string) => string,
    log: SinkLog,
  ) {
    this.checker = new HealthCounter('schema', log);
    // Only durable sinks need interrupted runs replayed; the store accounts for them itself.
    this.journal = sinks.some((sink) => sink.name !== 'callback') ? journalIn(localDirectory) : undefined;
  }

  static async open(options: PipelineOptions): Promise<UsagePipeline> {
    const base = options.log ?? logSinkFailureToStderr;
    let created: UsagePipeline | undefined;
    // Background failures (a webhook round) also refresh the health file that doctor reads.
    const log: SinkLog = (failure) => {
      base(failure);
      void created?.writeHealth();
    };
    const sinks: UsageSink[] = [];
    const usage = options.usage;
    const at = (path: string) => (isAbsolute(path) ? path : resolve(options.configDir, path));
    if (options.callback) sinks.push(new CallbackSink(options.callback, log));
    if (usage?.file) sinks.push(new JsonlFileSink(at(usage.file.path), { maxBytes: usage.file.maxBytes, keep: usage.file.keep }, log));
    if (usage?.webhook) {
      const { webhook } = usage;
      const token = webhook.tokenRef ? await readSecret(webhook.tokenRef, options.configDir, options.env) : undefined;
      const sink = new WebhookSink(
        {
          url: webhook.url,
          spoolDirectory: webhookSpoolDirectory(usage, options.configDir, options.localDirectory, options.slot),
          token,
          maxAttempts: webhook.maxAttempts,
          timeoutMs: webhook.timeoutMs,
          retryIntervalMs: webhook.retryIntervalMs,
          maxSpoolRecords: webhook.maxSpoolRecords,
          maxSpoolBytes: webhook.maxSpoolBytes,
        },
        log,
      );
      await sink.open();
      sinks.push(sink);
    }
    const spoolOf = (directory: string, slot: string) => webhookSpoolDirectory(usage, options.configDir, directory, slot);
    const pipeline = new UsagePipeline(sinks, options.localDirectory, spoolOf, log);
    created = pipeline;
    if (pipeline.journal) await mkdir(pipeline.journal, { recursive: true, mode: 0o700 });
    return pipeline;
  }

  /** Journal writes still in progress, so a record never overtakes its run's start. */
  private readonly journalling = new Map<string, Promise<void>>();

  /** Notes a run in flight (durable sinks only), before its provider is asked anything. */
  async runStarted(start: RunStartRecord): Promise<void> {
    await this.journalWrite(start.runId, start);
  }

  /**
   * Replaces the run's journal entry with its final record, before the store commits it, so
   * that a crash from here on re-delivers this record at the next start (not an `interrupted` one).
   */
  async finished(record: UsageRecord): Promise<void> {
    await this.journalWrite(record.runId, record);
  }

  private async journalWrite(runId: string, entry: RunStartRecord | UsageRecord): Promise<void> {
    if (!this.journal || !RUN_FILE.test(`${runId}.json`)) return;
    const target = join(this.journal, `${runId}.json`);
    const previous = this.journalling.get(runId) ?? Promise.resolve();
    const write = previous.then(async () => {
      const handle = await open(`${target}.tmp`, 'w', 0o600);
      try {
        await handle.writeFile(JSON.stringify(entry));
      } finally {
        await handle.close();
      }
      await rename(`${target}.tmp`, target);
    });
    const settled = write.catch(() => undefined);
    this.journalling.set(runId, settled);
    void settled.then(() => {
      if (this.journalling.get(runId) === settled) this.journalling.delete(runId);
    });
    await write;
  }

  /** Deliveries started by `deliverLater` and not yet settled; `close` waits for them. */
  private readonly pending = new Set<Promise<void>>();

  /**
   * Delivers in the background: the run (and its admission slot) does not wait for the sinks.
   * The journal already holds the final record, so a crash before delivery loses nothing.
   */
  deliverLater(record: UsageRecord): void {
    const delivery = this.record(record).catch(() => undefined);
    this.pending.add(delivery);
    void delivery.then(() => this.pending.delete(delivery));
  }

  /** Resolves once every background delivery started so far has settled. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Hands a finished run's record to every sink, then forgets the run; never throws. */
  async record(record: UsageRecord): Promise<void> {
    const problem = checkUsageRecord(record);
    if (problem) {
      this.checker.failure('USAGESTAT_SCHEMA', `The usage record was not sent: ${problem}.`, record.recordId);
      await this.writeHealth();
    } else {
      await this.fanOut(record);
    }
    if (!this.journal) return;
    await this.journalling.get(record.runId);
    await rm(join(this.journal, `${record.runId}.json`), { force: true }).catch(() => undefined);
  }

  private async fanOut(record: UsageRecord): Promise<void> {
    const before = this.failures();
    await Promise.all(
      this.sinks.map(async (sink) => {
        try {
          await sink.deliver(record);
        } catch (error) {
          const code = (error as { code?: string }).code === 'USAGESTAT_SCHEMA' ? 'USAGESTAT_SCHEMA' : 'USAGESTAT_ERROR';
          this.checker.failure(code, `The ${sink.name} sink failed: ${error instanceof Error ? error.message : 'unknown error'}.`, record.recordId);
        }
      }),
    );
    if (this.failures() !== before) await this.writeHealth();
  }

  /**
   * At start-up, once this process owns its local state and listens: runs the previous owner of
   * this folder left in flight reach the sinks as `interrupted` (stamped `at`), and the webhook
   * starts delivering what its spool holds. Returns how many journal entries were settled.
   */
  async start(at: string): Promise<number> {
    const settled = this.journal ? await this.reconcile(this.journal, at) : 0;
    for (const sink of this.sinks) if (sink instanceof WebhookSink) sink.start();
    return settled;
  }

  /**
   * Takes over the local state of a process that died (a PostgreSQL replica's slot, locked by the
   * caller): its journal reaches this host's sinks as above, its spooled records move to this spool.
   */
  async adopt(directory: string, slot: string, at: string): Promise<{ runs: number; spooled: number }> {
    const runs = this.journal ? await this.reconcile(journalIn(directory), at) : 0;
    let spooled = 0;
    for (const sink of this.sinks) if (sink instanceof WebhookSink) spooled += await sink.adopt(this.spoolOf(directory, slot));
    return { runs, spooled };
  }

  private async reconcile(journal: string, at: string): Promise<number> {
    let entries: string[];
    try {
      entries = await readdir(journal);
    } catch {
      return 0;
    }
    const names = entries.filter((name) => RUN_FILE.test(name));
    for (const name of entries) if (name.endsWith('.tmp')) await rm(join(journal, name), { force: true });
    for (const name of names) {
      const path = join(journal, name);
      try {
        const entry = JSON.parse(await readFile(path, 'utf8')) as RunStartRecord | UsageRecord;
        // A final record the crash kept from its sinks goes out as it was (sinks deduplicate by
        // recordId); a run that never finished goes out as interrupted.
        await this.fanOut('status' in entry ? entry : interruptedRecord(entry, at));
      } catch {
        // A torn journal entry (the crash hit its write) has nothing to account for.
      }
      await rm(path, { force: true });
    }
    return names.length;
  }

  /** The webhook spool's contents and bound, when a webhook is configured. */
  spool(): SpoolStats | undefined {
    const webhook = this.sinks.find((sink): sink is WebhookSink => sink instanceof WebhookSink);
    return webhook?.spool();
  }

  health(): SinkHealth[] {
    return [...this.sinks.map((sink) => sink.health()), this.checker.snapshot()];
  }

  private failures(): number {
    return this.health().reduce((sum, entry) => sum + entry.failures, 0);
  }

  /** Written atomically; `doctor` and `status` read it. */
  async writeHealth(): Promise<void> {
    const report: UsageHealthReport = { updatedAt: new Date().toISOString(), sinks: this.health() };
    const target = join(this.localDirectory, HEALTH_FILE);
    try {
      await mkdir(this.localDirectory, { recursive: true, mode: 0o700 });
      const handle = await open(`${target}.tmp`, 'w', 0o600);
      try {
        await handle.writeFile(JSON.stringify(report));
      } finally {
        await handle.close();
      }
      await rename(`${target}.tmp`, target);
    } catch {
      // Health is advisory; the logs already have the failure.
    }
  }

  /** Lets the webhook deliver what is spooled now. */
  async flush(): Promise<void> {
    await this.settled();
    for (const sink of this.sinks) if (sink instanceof WebhookSink) await sink.flush();
  }

  async close(): Promise<void> {
    await this.settled();
    for (const sink of this.sinks) await sink.close();
    await this.writeHealth();
  }
}

/** What a sink may rely on; a record that breaks it is refused (`USAGESTAT_SCHEMA`), never sent. */
export function checkUsageRecord(record: UsageRecord): string | undefined {
  if (record.schema !== USAGE_RECORD_SCHEMA) return `schema is not ${USAGE_RECORD_SCHEMA}`;
  if (record.recordId !== record.runId) return 'recordId differs from runId';
  const started = Date.parse(record.startedAt);
  const finished = Date.parse(record.finishedAt);
  if (!Number.isFinite(started) || !Number.isFinite(finished) || finished < started) return 'the timestamps are inconsistent';
  const { startedSteps, completedSteps, reportedSteps } = record.coverage;
  if (!(reportedSteps <= completedSteps && completedSteps <= startedSteps)) return 'the coverage is inconsistent';
  for (const [field, total] of Object.entries(record.usage ?? {})) {
    if (record.observedUsage[field as keyof UsageRecord['observedUsage']] !== total) return `usage.${field} differs from the observed sum`;
  }
  return undefined;
}

function journalIn(directory: string): string {
  return join(directory, 'usage-runs');
}

/** The last health report a host wrote in a local state folder, for `doctor` and `status`. */
export async function readUsageHealth(localDirectory: string): Promise<UsageHealthReport | undefined> {
  try {
    return JSON.parse(await readFile(join(localDirectory, HEALTH_FILE), 'utf8')) as UsageHealthReport;
  } catch {
    return undefined;
  }
}
