/** What `doctor` and `status` show about the usage sinks: configured sinks, their last health, the spool. */
import type { UsageConfig } from './config.js';
import { readUsageHealth } from './pipeline.js';
import type { SinkHealth } from './sink.js';
import { spoolBacklog } from './webhook-sink.js';
import { webhookSpoolDirectory } from './spool-path.js';

export interface UsageSinkReport {
  /** False when a sink's last attempt failed or the webhook refused records. */
  ok: boolean;
  sinks: string[];
  /** As the host last wrote it (absent before the first failure or shutdown). */
  health?: { updatedAt: string; sinks: SinkHealth[] };
  spool?: { directory: string; pending: number; rejected: number };
}

export async function usageSinkReport(usage: UsageConfig | undefined, configDir: string, stateDirectory: string): Promise<UsageSinkReport> {
  const sinks = [...(usage?.file ? ['file'] : []), ...(usage?.webhook ? ['webhook'] : [])];
  const health = await readUsageHealth(stateDirectory);
  const report: UsageSinkReport = { ok: !(health?.sinks.some((sink) => !sink.ok) ?? false), sinks };
  if (health) report.health = health;
  if (usage?.webhook) {
    const directory = webhookSpoolDirectory(usage, configDir, stateDirectory);
    const backlog = await spoolBacklog(directory);
    report.spool = { directory, ...backlog };
    if (backlog.rejected > 0) report.ok = false;
  }
  return report;
}
