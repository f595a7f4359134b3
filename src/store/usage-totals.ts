/**
 * Usage totals over stored records, grouped the way an operator asks first (by subject,
 * provider, model or day). Written once over the records' JSON, so every engine answers
 * `StateStore.usageTotals` the same way. Token sums are the observed sums (equal to the
 * totals when every step reported); `incompleteRuns` says how many runs lack full coverage.
 */
import type { UsageRecord } from '../runtime/usage-record.js';

export type UsageGrouping = 'subject' | 'provider' | 'model' | 'day' | 'hour';

export interface UsageTotalsQuery {
  /** Only records that finished at or after this ISO time. */
  since?: string;
  by?: UsageGrouping;
}

export interface UsageTotalsRow {
  /** The group (absent when not grouped). `model` groups are `provider/model`; `day` is the UTC date, `hour` the UTC date and hour (`2026-12-01T14`). */
  key?: string;
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
  interrupted: number;
  /** Runs whose records lack complete token totals (a step did not report, or the run was interrupted). */
  incompleteRuns: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
  durationMs: number;
  /** Provider-reported charges only. */
  costUsd: number;
  /** Labelled estimates (provider-reported or from the price table). */
  apiEquivalentCostUsd: number;
}

type StoredRecord = Partial<UsageRecord> & Pick<UsageRecord, 'runId' | 'subject' | 'provider' | 'model' | 'status' | 'finishedAt'>;

export function emptyTotals(key?: string): UsageTotalsRow {
  return {
    ...(key !== undefined ? { key } : {}),
    runs: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
    interrupted: 0,
    incompleteRuns: 0,
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    reasoningTokens: 0,
    durationMs: 0,
    costUsd: 0,
    apiEquivalentCostUsd: 0,
  };
}

function groupKey(record: StoredRecord, by: UsageGrouping): string {
  if (by === 'subject') return record.subject;
  if (by === 'provider') return record.provider;
  if (by === 'model') return `${record.provider}/${record.model}`;
  if (by === 'hour') return record.finishedAt.slice(0, 13);
  return record.finishedAt.slice(0, 10);
}

/** Sums records (v1 records, which carried only `usage`, count that as observed). Rows sorted by key. */
export function sumUsage(records: Iterable<StoredRecord>, by?: UsageGrouping): UsageTotalsRow[] {
  const rows = new Map<string, UsageTotalsRow>();
  for (const record of records) {
    const key = by ? groupKey(record, by) : '';
    let row = rows.get(key);
    if (!row) rows.set(key, (row = emptyTotals(by ? key : undefined)));
    row.runs += 1;
    if (record.status === 'completed' || record.status === 'failed' || record.status === 'cancelled' || record.status === 'interrupted') row[record.status] += 1;
    const observed = record.observedUsage ?? record.usage ?? {};
    const complete = record.usage?.inputTokens !== undefined && record.usage.outputTokens !== undefined;
    if (!complete) row.incompleteRuns += 1;
    row.inputTokens += observed.inputTokens ?? 0;
    row.outputTokens += observed.outputTokens ?? 0;
    row.cachedInputTokens += observed.cachedInputTokens ?? 0;
    row.reasoningTokens += observed.reasoningTokens ?? 0;
    row.durationMs += record.durationMs ?? 0;
    row.costUsd += record.costUsd ?? 0;
    row.apiEquivalentCostUsd += record.apiEquivalentCostUsd?.usd ?? 0;
  }
  if (!by && rows.size === 0) return [emptyTotals()];
  return [...rows.values()].sort((a, b) => (a.key ?? '').localeCompare(b.key ?? ''));
}
