/**
 * What `doctor` and `status` show about the usage sinks: configured sinks, their last health,
 * the webhook spool against its bound. A config's local state may be several folders (one per
 * PostgreSQL replica slot); the report adds them up.
 */
import type { UsageConfig } from './config.js';
import { readUsageHealth, type UsageHealthReport } from './pipeline.js';
import type { SinkHealth } from './sink.js';
import { DEFAULT_SPOOL_BYTES, DEFAULT_SPOOL_RECORDS, spoolBacklog } from './webhook-sink.js';
import { webhookSpoolDirectory } from './spool-path.js';

export interface UsageSinkReport {
  /** False when a sink's last attempt failed, the webhook refused records, or its spool is full. */
  ok: boolean;
  sinks: string[];
  /** As the host last wrote it (absent before the first failure or shutdown). */
  health?: UsageHealthReport;
  /**
   * The webhook spool: records waiting and refused, their bytes, the bound (`maxSpoolRecords`,
   * `maxSpoolBytes`), whether it is full, and records dropped at the bound (from the health).
   */
  spool?: { directory: string; pending: number; rejected: number; bytes: number; maxRecords: number; maxBytes: number; full: boolean; dropped: number };
}

/** `locals`: the host's local state folders (src/host/local-state.ts `localStateDirectories`). */
export async function usageSinkReport(
  usage: UsageConfig | undefined,
  configDir: string,
  locals: { directory: string; slot: string | undefined }[],
  spoolBase: string,
): Promise<UsageSinkReport> {
  const sinks = [...(usage?.file ? ['file'] : []), ...(usage?.webhook ? ['webhook'] : [])];
  const health = mergeHealth((await Promise.all(locals.map(({ directory }) => readUsageHealth(directory)))).filter((entry) => entry !== undefined));
  const report: UsageSinkReport = { ok: !(health?.sinks.some((sink) => !sink.ok) ?? false), sinks };
  if (health) report.health = health;
  if (usage?.webhook) {
    const backlogs = await Promise.all(locals.map(({ directory, slot }) => spoolBacklog(webhookSpoolDirectory(usage, configDir, directory, slot))));
    const pending = backlogs.reduce((sum, entry) => sum + entry.pending, 0);
    const rejected = backlogs.reduce((sum, entry) => sum + entry.rejected, 0);
    const bytes = backlogs.reduce((sum, entry) => sum + entry.bytes, 0);
    const maxRecords = usage.webhook.maxSpoolRecords ?? DEFAULT_SPOOL_RECORDS;
    const maxBytes = usage.webhook.maxSpoolBytes ?? DEFAULT_SPOOL_BYTES;
    // Full per folder: each process holds its own spool to the bound.
    const full = backlogs.some((entry) => entry.pending + entry.rejected >= maxRecords || entry.bytes >= maxBytes);
    const dropped = health?.sinks.find((sink) => sink.sink === 'webhook')?.dropped ?? 0;
    const directory = locals.length === 1 ? webhookSpoolDirectory(usage, configDir, locals[0]!.directory, locals[0]!.slot) : spoolBase;
    report.spool = { directory, pending, rejected, bytes, maxRecords, maxBytes, full, dropped };
    if (rejected > 0 || full) report.ok = false;
  }
  return report;
}

/** One report from several folders' reports: counts added up per sink, the latest failure kept. */
function mergeHealth(reports: UsageHealthReport[]): UsageHealthReport | undefined {
  if (reports.length <= 1) return reports[0];
  const bySink = new Map<string, SinkHealth>();
  for (const entry of reports.flatMap((report) => report.sinks)) {
    const seen = bySink.get(entry.sink);
    if (!seen) {
      bySink.set(entry.sink, { ...entry });
      continue;
    }
    const add = (a: number | undefined, b: number | undefined) => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));
    const pending = add(seen.pending, entry.pending);
    const dropped = add(seen.dropped, entry.dropped);
    const lastError = [seen.lastError, entry.lastError].filter((error) => error !== undefined).sort((a, b) => (a.at < b.at ? 1 : -1))[0];
    bySink.set(entry.sink, {
      sink: entry.sink,
      ok: seen.ok && entry.ok,
      delivered: seen.delivered + entry.delivered,
      failures: seen.failures + entry.failures,
      ...(pending !== undefined ? { pending } : {}),
      ...(dropped !== undefined ? { dropped } : {}),
      ...(lastError ? { lastError } : {}),
    });
  }
  const updatedAt = reports.map((report) => report.updatedAt).sort().at(-1)!;
  return { updatedAt, sinks: [...bySink.values()] };
}
