/**
 * The metering record handed to usage sinks after every run: exactly one per run, whatever
 * its terminal status. It holds identities, timings and counts — never prompts, outputs,
 * tool data, request metadata or secrets. Labels come from the operator's config only.
 */
import type { Usage } from './types.js';

export const USAGE_RECORD_SCHEMA = 'agenticdriver.usage.v2';

/** Where the counts come from: the provider's own report, an estimate, or a stand-in (the mock). */
export type UsageSource = 'provider-reported' | 'estimated' | 'synthetic';

/** How many steps started, returned, and returned a usage report. */
export interface UsageCoverage {
  startedSteps: number;
  completedSteps: number;
  reportedSteps: number;
}

/** What an API call with these token counts would cost at list price: always an estimate. */
export interface ApiEquivalentCost {
  usd: number;
  estimate: true;
  /** `provider`: the provider reported its own estimate; `price-table`: computed here from `usage`. */
  basis: 'provider' | 'price-table';
  /** Which price table, when `basis` is `price-table`. */
  priceTable?: 'builtin' | 'operator';
}

/** Who records: the host's identity and the operator's labels (from host config, never a request). */
export interface UsageIdentity {
  hostId: string;
  labels?: Record<string, string>;
}

export interface UsageRecord {
  schema: typeof USAGE_RECORD_SCHEMA;
  /** Unique per record; equals `runId` (one record per run). Sinks deduplicate by it. */
  recordId: string;
  hostId: string;
  runId: string;
  subject: string;
  /** The bearer token's id (not the token); absent for in-process runs. */
  tokenId?: string;
  provider: string;
  vendor: string;
  model: string;
  authMode: 'api-key' | 'cli-session' | 'none';
  source: UsageSource;
  /** `interrupted`: the host stopped (crashed) while the run was in flight; found at the next start. */
  status: 'completed' | 'failed' | 'cancelled' | 'interrupted';
  errorCode?: string;
  /** `uncertain` on interrupted runs: what the provider or tools did is unknown. */
  outcome?: 'uncertain';
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  steps: number;
  /** Totals of the measurements every started step reported; absent when no measurement is complete. */
  usage?: Usage;
  /** Partial sums of whatever the steps did report (a lower bound when coverage is incomplete). */
  observedUsage: Usage;
  coverage: UsageCoverage;
  /** Only when every step's provider reported a charge. */
  costUsd?: number;
  apiEquivalentCostUsd?: ApiEquivalentCost;
  /** The operator's labels from host config. */
  labels?: Record<string, string>;
  /** `embedding`: one embedding call of scoped retrieval (absent: a run). */
  operation?: 'embedding';
  /** Of an embedding call: indexing a source or embedding a search query. */
  purpose?: 'index' | 'query';
  /** Of an embedding call made for a run (its retrieval search). */
  parentRunId?: string;
}

/**
 * Written before a run asks its provider anything, so that a host that dies mid-run can
 * still account for it: a start without a usage record is an interrupted run.
 */
export type RunStartRecord = Pick<
  UsageRecord,
  'schema' | 'recordId' | 'hostId' | 'runId' | 'subject' | 'tokenId' | 'provider' | 'vendor' | 'model' | 'authMode' | 'source' | 'startedAt' | 'labels'
>;

/** The record of a run a previous process left in flight: nothing is known about its usage. */
export function interruptedRecord(start: RunStartRecord, at: string): UsageRecord {
  return {
    ...start,
    schema: USAGE_RECORD_SCHEMA,
    recordId: start.recordId ?? start.runId,
    hostId: start.hostId ?? 'unknown',
    source: start.source ?? 'provider-reported',
    status: 'interrupted',
    outcome: 'uncertain',
    finishedAt: at,
    // Only an upper bound: the process died somewhere between start and now.
    durationMs: Math.max(0, Date.parse(at) - Date.parse(start.startedAt)),
    steps: 0,
    observedUsage: {},
    coverage: { startedSteps: 0, completedSteps: 0, reportedSteps: 0 },
  };
}

/** A record's measurements split the way the record carries them: tokens in `usage`, charges beside it. */
export function meteredFields(
  totals: Usage,
  observed: Usage,
): Pick<UsageRecord, 'usage' | 'observedUsage' | 'costUsd'> & { providerEstimateUsd?: number } {
  const { costUsd, apiEquivalentCostUsd, ...tokens } = totals;
  const fields: Pick<UsageRecord, 'usage' | 'observedUsage' | 'costUsd'> & { providerEstimateUsd?: number } = { observedUsage: observed };
  if (Object.keys(tokens).length > 0) fields.usage = tokens;
  if (costUsd !== undefined) fields.costUsd = costUsd;
  if (apiEquivalentCostUsd !== undefined) fields.providerEstimateUsd = apiEquivalentCostUsd;
  return fields;
}
