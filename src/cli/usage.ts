/** `agenticdriver usage`: token, run and cost totals from the host's state store, as a table or JSON. */
import { DriverError } from '../protocol/errors.js';
import { wantsJson } from './output.js';
import type { ScopeLimits } from '../protocol/schemas.js';
import type { UsageGrouping, UsageTotalsRow } from '../store/usage-totals.js';

export const GROUPINGS: readonly UsageGrouping[] = ['subject', 'provider', 'model', 'day'];

export interface UsageReport {
  since?: string;
  by?: UsageGrouping;
  rows: UsageTotalsRow[];
  /** The configured limits (config `limits`), with what each budget has left this period; absent when none are configured. */
  limits?: ScopeLimits[];
}

/** `--since`: an ISO date or time, or a duration back from now (`90m`, `24h`, `7d`). */
export function parseSince(value: string, now = Date.now()): string {
  const relative = /^(\d{1,6})([mhd])$/.exec(value);
  if (relative) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 'm' | 'h' | 'd'];
    return new Date(now - Number(relative[1]) * unit).toISOString();
  }
  const time = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(time)) throw new DriverError('INVALID_ARGUMENT', `--since must be an ISO date or time, or a duration like 24h or 7d, not ${JSON.stringify(value)}.`);
  return new Date(time).toISOString();
}

export function parseGrouping(value: string): UsageGrouping {
  if (!(GROUPINGS as readonly string[]).includes(value)) throw new DriverError('INVALID_ARGUMENT', `--by must be one of ${GROUPINGS.join(', ')}.`);
  return value as UsageGrouping;
}

export async function usageReport(explicitPath: string | undefined, options: { since?: string; by?: UsageGrouping }): Promise<UsageReport> {
  // Loaded here so `--since`/`--by` parsing, done for every command, stays light.
  const { readHostConfig, resolveConfigPath } = await import('../host/config.js');
  const { openStore } = await import('../store/open.js');
  const config = await readHostConfig(resolveConfigPath(explicitPath));
  const store = await openStore(config.state, config.configDir, process.env);
  try {
    const rows = await store.usage.totals({ ...(options.since ? { since: options.since } : {}), ...(options.by ? { by: options.by } : {}) });
    const [{ Governor }, { limitsReport }, { systemClock }] = await Promise.all([import('../http/limits/governor.js'), import('../http/limits/report.js'), import('../shared/clock.js')]);
    const governor = new Governor(store.limits, systemClock, config.limits);
    const limits = governor.configured ? await limitsReport(store, governor) : undefined;
    return { ...(options.since ? { since: options.since } : {}), ...(options.by ? { by: options.by } : {}), rows, ...(limits ? { limits } : {}) };
  } finally {
    await store.close();
  }
}

/** The limits as lines: one per scope, then one per budget. */
export function formatLimits(limits: readonly ScopeLimits[]): string {
  const lines = ['Limits (budgets this period; reserved = runs in flight)'];
  for (const entry of limits) {
    const rates = [
      entry.requestsPerMinute !== undefined ? `${entry.requestsPerMinute} requests/min` : undefined,
      entry.tokensPerMinute !== undefined ? `${entry.tokensPerMinute.toLocaleString('en-US')} tokens/min` : undefined,
      entry.concurrentRuns !== undefined ? `${entry.concurrentRuns} concurrent runs` : undefined,
    ].filter((rate) => rate !== undefined);
    lines.push(`${entry.scope}${entry.name !== undefined ? ` ${entry.name}` : ''}${rates.length > 0 ? `: ${rates.join(', ')}` : ''}`);
    for (const budget of entry.budgets) {
      const amount = (value: number) => (budget.unit === 'usd' ? `$${value.toFixed(4)}` : `${value.toLocaleString('en-US')} tokens`);
      lines.push(`  ${budget.period} budget ${amount(budget.limit)}: used ${amount(budget.used)}, reserved ${amount(budget.reserved)}, remaining ${amount(budget.remaining)}, resets ${budget.resetsAt}`);
    }
  }
  return lines.join('\n');
}

const COLUMNS: [string, (row: UsageTotalsRow) => string][] = [
  ['runs', (row) => String(row.runs)],
  ['completed', (row) => String(row.completed)],
  ['failed', (row) => String(row.failed)],
  ['cancelled', (row) => String(row.cancelled)],
  ['interrupted', (row) => String(row.interrupted)],
  ['input tokens', (row) => row.inputTokens.toLocaleString('en-US')],
  ['output tokens', (row) => row.outputTokens.toLocaleString('en-US')],
  ['cached', (row) => row.cachedInputTokens.toLocaleString('en-US')],
  ['incomplete', (row) => String(row.incompleteRuns)],
  ['cost USD', (row) => row.costUsd.toFixed(4)],
  ['API-equiv. USD (est.)', (row) => row.apiEquivalentCostUsd.toFixed(4)],
];

/** A plain aligned table: the group column first (when grouped), numbers right-aligned. */
export function formatUsageTable(report: UsageReport): string {
  const header = [...(report.by ? [report.by] : []), ...COLUMNS.map(([name]) => name)];
  const body = report.rows.map((row) => [...(report.by ? [row.key ?? ''] : []), ...COLUMNS.map(([, cell]) => cell(row))]);
  const widths = header.map((name, index) => Math.max(name.length, ...body.map((cells) => cells[index]!.length)));
  const grouped = report.by !== undefined;
  const line = (cells: string[]) =>
    cells.map((cell, index) => (grouped && index === 0 ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!))).join('  ').trimEnd();
  const title = `Usage${report.since ? ` since ${report.since}` : ''}${report.by ? ` by ${report.by}` : ''}`;
  const notes = 'Tokens are observed sums; "incomplete" runs lacked a report from some step. API-equivalent cost is an estimate.';
  return [title, line(header), ...body.map(line), notes, ...(report.limits ? ['', formatLimits(report.limits)] : [])].join('\n');
}

/** `agenticdriver usage`: the totals as a table at a terminal, else one JSON object. */
export async function usageCommand(options: { config?: string; since?: string; by?: string; json?: boolean }): Promise<void> {
  const since = options.since === undefined ? undefined : parseSince(options.since);
  const by = options.by === undefined ? undefined : parseGrouping(options.by);
  const report = await usageReport(options.config, { ...(since ? { since } : {}), ...(by ? { by } : {}) });
  process.stdout.write(`${wantsJson(options) ? JSON.stringify(report) : formatUsageTable(report)}\n`);
}
