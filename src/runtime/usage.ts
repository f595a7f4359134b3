/** Usage normalization and per-run accumulation (totals only when every step reported). */
import type { Usage } from './types.js';

const COUNT_FIELDS = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'reasoningTokens'] as const;
const COST_FIELDS = ['costUsd', 'apiEquivalentCostUsd'] as const;
type UsageField = (typeof COUNT_FIELDS)[number] | (typeof COST_FIELDS)[number];
const FIELDS: readonly UsageField[] = [...COUNT_FIELDS, ...COST_FIELDS];

/** Drops unknown, negative, non-finite and inconsistent measurements. */
export function normalizeUsage(raw: Partial<Record<string, unknown>> | undefined): Usage {
  const usage: Usage = {};
  if (!raw) return usage;
  for (const field of COUNT_FIELDS) {
    const value = raw[field];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) usage[field] = value;
  }
  for (const field of COST_FIELDS) {
    const value = raw[field];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) usage[field] = value;
  }
  if (usage.cachedInputTokens !== undefined && (usage.inputTokens === undefined || usage.cachedInputTokens > usage.inputTokens)) {
    delete usage.cachedInputTokens;
  }
  if (usage.reasoningTokens !== undefined && (usage.outputTokens === undefined || usage.reasoningTokens > usage.outputTokens)) {
    delete usage.reasoningTokens;
  }
  return usage;
}

/** A UsageAccumulator's state, as a run's checkpoint keeps it. */
export interface MeterState {
  startedSteps: number;
  completedSteps: number;
  reportedSteps: number;
  sums: [string, number][];
  reported: [string, number][];
}

export class UsageAccumulator {
  private startedSteps = 0;
  private completedSteps = 0;
  private reportedSteps = 0;
  private readonly sums = new Map<UsageField, number>();
  private readonly reported = new Map<UsageField, number>();

  stepStarted(): void {
    this.startedSteps += 1;
  }

  stepCompleted(usage: Usage | undefined): void {
    this.completedSteps += 1;
    if (!usage) return;
    this.reportedSteps += 1;
    for (const field of FIELDS) {
      const value = usage[field];
      if (value === undefined) continue;
      this.sums.set(field, (this.sums.get(field) ?? 0) + value);
      this.reported.set(field, (this.reported.get(field) ?? 0) + 1);
    }
  }

  /** Totals of the fields every started step reported; unknown fields are omitted. */
  totals(): Usage {
    const usage: Usage = {};
    if (this.startedSteps === 0 || this.completedSteps !== this.startedSteps) return usage;
    for (const field of FIELDS) {
      const sum = this.sums.get(field);
      if (sum === undefined || this.reported.get(field) !== this.startedSteps) continue;
      if (COUNT_FIELDS.includes(field as (typeof COUNT_FIELDS)[number]) && !Number.isSafeInteger(sum)) continue;
      usage[field] = sum;
    }
    return usage;
  }

  /** Partial sums of whatever the steps reported (safe integers only for counts). */
  observed(): Usage {
    const usage: Usage = {};
    for (const [field, sum] of this.sums) {
      if (COUNT_FIELDS.includes(field as (typeof COUNT_FIELDS)[number]) && !Number.isSafeInteger(sum)) continue;
      usage[field] = sum;
    }
    return usage;
  }

  snapshot(): MeterState {
    return {
      startedSteps: this.startedSteps,
      completedSteps: this.completedSteps,
      reportedSteps: this.reportedSteps,
      sums: [...this.sums],
      reported: [...this.reported],
    };
  }

  /** Goes on from a checkpoint's state (unknown fields are dropped). */
  restore(state: MeterState): void {
    this.startedSteps = state.startedSteps;
    this.completedSteps = state.completedSteps;
    this.reportedSteps = state.reportedSteps;
    for (const [field, value] of state.sums) if (FIELDS.includes(field as UsageField)) this.sums.set(field as UsageField, value);
    for (const [field, value] of state.reported) if (FIELDS.includes(field as UsageField)) this.reported.set(field as UsageField, value);
  }

  coverage(): { startedSteps: number; completedSteps: number; reportedSteps: number } {
    return { startedSteps: this.startedSteps, completedSteps: this.completedSteps, reportedSteps: this.reportedSteps };
  }
}
