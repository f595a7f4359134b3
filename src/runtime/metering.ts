/** Builds the run-start and usage records of one run (src/runtime/usage-record.ts). */
import { randomUUID } from 'node:crypto';
import type { ProviderAdapter } from '../providers/contract/v1.js';
import { PriceTable, type ModelPrice } from './pricing.js';
import type { Usage } from './types.js';
import type { UsageAccumulator } from './usage.js';
import { meteredFields, USAGE_RECORD_SCHEMA, type RunStartRecord, type UsageIdentity, type UsageRecord } from './usage-record.js';

/** Host-level metering settings: identity, operator labels, the price table. */
export interface MeteringOptions {
  /** Stable id of this host; default a random UUID per driver instance. */
  hostId?: string;
  /** Operator labels copied into every record. */
  labels?: Record<string, string>;
  /** Operator prices; they win over the built-in table. */
  prices?: ModelPrice[];
}

export class Metering {
  readonly identity: UsageIdentity;
  private readonly prices: PriceTable;

  constructor(options: MeteringOptions = {}) {
    this.identity = { hostId: options.hostId ?? randomUUID(), ...(options.labels ? { labels: { ...options.labels } } : {}) };
    this.prices = new PriceTable(options.prices ?? []);
  }

  /** What these tokens would cost at list price (the operator's table first), or undefined when no price is known. */
  priceUsd(vendor: string, model: string, usage: Usage): number | undefined {
    return this.prices.estimate(vendor, model, usage)?.usd;
  }

  start(args: { runId: string; subject: string; tokenId: string | undefined; adapter: ProviderAdapter; model: string; startedAt: number }): RunStartRecord {
    const { info } = args.adapter;
    const record: RunStartRecord = {
      schema: USAGE_RECORD_SCHEMA,
      recordId: args.runId,
      hostId: this.identity.hostId,
      runId: args.runId,
      subject: args.subject,
      provider: info.id,
      vendor: info.vendor,
      model: args.model,
      authMode: info.authMode,
      source: info.usageSource ?? 'provider-reported',
      startedAt: new Date(args.startedAt).toISOString(),
    };
    if (args.tokenId !== undefined) record.tokenId = args.tokenId;
    if (this.identity.labels) record.labels = { ...this.identity.labels };
    return record;
  }

  finish(
    start: RunStartRecord,
    end: { status: UsageRecord['status']; errorCode: string | undefined; finishedAt: number; startedAt: number; steps: number; meter: UsageAccumulator },
  ): UsageRecord {
    const { providerEstimateUsd, ...metered } = meteredFields(end.meter.totals(), end.meter.observed());
    const record: UsageRecord = {
      ...start,
      status: end.status,
      finishedAt: new Date(end.finishedAt).toISOString(),
      durationMs: Math.max(0, end.finishedAt - end.startedAt),
      steps: end.steps,
      ...metered,
      coverage: end.meter.coverage(),
    };
    if (end.errorCode) record.errorCode = end.errorCode;
    const estimate =
      providerEstimateUsd !== undefined ? { usd: providerEstimateUsd, estimate: true as const, basis: 'provider' as const } : this.prices.estimate(start.vendor, start.model, record.usage);
    if (estimate) record.apiEquivalentCostUsd = estimate;
    return record;
  }
}
