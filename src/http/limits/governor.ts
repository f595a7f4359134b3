/**
 * Governance of runs (config `limits`, docs/governance.md): rate limits, concurrent runs and
 * budgets per token, per subject and for the whole host, on counters in the state store (so they
 * hold across replicas). A run is admitted, or refused with a typed 429, before its first model
 * step: its request is counted and an estimate of that step reserved. After each step the actual
 * usage is settled; before each later step an estimate is reserved again, and a spent budget
 * ends the run there (BUDGET_EXCEEDED), between steps, never while a tool runs. A later step
 * that finds its tokens-per-minute limit reached waits at the step boundary for the next minute
 * (once: a minute already full again ends the run RATE_LIMITED). The run's holds are
 * released when it ends, or by the reaper when its replica died.
 *
 * The overrun bound: a step is reserved at `max(estimate from the request, the run's largest
 * step so far)` and charged what it reports, so each run in flight can overrun a budget by at
 * most its step's actual cost minus its reservation — at most one step's cost per concurrent run.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { BudgetStatus, RunRequest } from '../../protocol/schemas.js';
import type { Usage } from '../../runtime/types.js';
import type { StepGate } from '../../runtime/services.js';
import { sleep } from '../../shared/abort.js';
import type { Clock } from '../../shared/clock.js';
import type { LimitCharge, LimitRefusal, LimitStore, LimitUse } from '../../store/store.js';
import { minuteWindow, periodKey, periodWindow, type BudgetPeriod } from './periods.js';

export interface BudgetLimit {
  period: BudgetPeriod;
  usd?: number | undefined;
  tokens?: number | undefined;
}

export interface LimitRule {
  requestsPerMinute?: number | undefined;
  tokensPerMinute?: number | undefined;
  concurrentRuns?: number | undefined;
  budgets?: BudgetLimit[] | undefined;
}

/** The governance fields of the host config's `limits`. */
export interface GovernanceLimits {
  timeZone?: string | undefined;
  cliCost?: 'api-equivalent' | 'reported' | undefined;
  host?: LimitRule | undefined;
  subjects?: Record<string, LimitRule> | undefined;
  tokens?: Record<string, LimitRule> | undefined;
  providers?: Record<string, LimitRule> | undefined;
}

/** The run about to start, as governance sees it. */
export interface GovernedRunInfo {
  subject: string;
  tokenId: string | undefined;
  /** The provider instance's id. */
  provider: string;
  request: RunRequest;
  vendor: string;
  model: string;
  authMode: 'api-key' | 'cli-session' | 'none';
  maxOutputTokens: number | undefined;
  /** A background run going on from its checkpoint: its request was counted when it started. */
  resumed?: boolean;
  /** List price of some tokens of this model (the host's price table), when one is known. */
  priceUsd(usage: Usage): number | undefined;
}

/** An admitted run's governance: its step gate, and `end` to release what it still holds. */
export interface GovernedRun {
  steps: StepGate;
  end(): Promise<void>;
}

/** Told of every refusal (metrics). */
export type RefusalObserver = (code: 'RATE_LIMITED' | 'BUDGET_EXCEEDED') => void;

/** Output tokens a step is assumed to produce when the run sets no `maxOutputTokens`. */
export const DEFAULT_OUTPUT_ESTIMATE = 1024;
const MICRO = 1_000_000;
/** Per-minute counters are kept this long after their minute began. */
const PER_MINUTE_KEPT_MS = 120_000;
const SCOPE_NAMES = { host: "the host's", subject: "this subject's", token: "this token's", provider: "this provider's" } as const;

type ScopeKind = keyof typeof SCOPE_NAMES;

interface Scope {
  kind: ScopeKind;
  key: string;
  rule: LimitRule;
}

/** One budget's counter at a moment (unit `usd` in micro-dollars, or `tokens`). */
interface BudgetCounter {
  scope: Scope;
  unit: 'usd' | 'tokens';
  metric: string;
  limit: number;
  window: number;
  since?: number | undefined;
  resetAt: number;
}

export class Governor {
  private current: GovernanceLimits;
  private anyLimit: boolean;
  /** The minute whose older per-minute counters were last pruned (once a minute, by this clock: the one that wrote them). */
  private prunedMinute = 0;

  constructor(
    private readonly store: LimitStore,
    readonly clock: Clock,
    limits: GovernanceLimits,
    private readonly refused: RefusalObserver = () => undefined,
  ) {
    this.current = limits;
    this.anyLimit = hasLimits(limits);
  }

  /** The limits in force. */
  get limits(): GovernanceLimits {
    return this.current;
  }

  /** Whether any limit is configured (feature `limits`). */
  get configured(): boolean {
    return this.anyLimit;
  }

  /** New limits for runs admitted and steps taken from now on; counters carry over. */
  setLimits(limits: GovernanceLimits): void {
    this.current = limits;
    this.anyLimit = hasLimits(limits);
  }

  /** Admits the run (its request counted, its first step reserved) or throws RATE_LIMITED / BUDGET_EXCEEDED. Undefined when no limit applies to it. */
  async admit(run: GovernedRunInfo): Promise<GovernedRun | undefined> {
    const scopes = this.scopesOf(run);
    if (scopes.length === 0) return undefined;
    const now = this.clock.now();
    const minute = minuteWindow(now);
    if (minute.window !== this.prunedMinute) {
      this.prunedMinute = minute.window;
      // Off the run's path; a failure only leaves rows for the next minute's prune.
      void this.store.prune(minute.window - PER_MINUTE_KEPT_MS).catch(() => undefined);
    }
    const estimate = this.estimate(run);
    const charges: LimitCharge[] = [];
    for (const { key, rule } of scopes) {
      if (rule.requestsPerMinute !== undefined && !run.resumed) charges.push({ scope: key, metric: 'requests', window: minute.window, limit: rule.requestsPerMinute, need: 1, use: 1, reserve: 0 });
      if (rule.concurrentRuns !== undefined) charges.push({ scope: key, metric: 'runs', window: 0, limit: rule.concurrentRuns, need: 1, use: 0, reserve: 1 });
    }
    charges.push(...tokenMinuteCharges(scopes, minute.window));
    const budgets = this.budgetsOf(scopes, now);
    charges.push(...budgets.map((budget) => reserveCharge(budget, estimate)));
    const holdId = randomUUID();
    const refusal = await this.store.take(holdId, charges);
    if (refusal) throw this.refusal(refusal, scopes, budgets, now);
    return new RunGovernance(this, this.store, holdId, run, scopes, estimate, charges.some((charge) => charge.reserve > 0)).handle();
  }

  /** The counters of one scope's budgets now (for `agenticdriver usage` and `/metrics`). */
  async budgetStatus(kind: ScopeKind, name: string | undefined): Promise<BudgetStatus[]> {
    const rule = kind === 'host' ? this.limits.host : kind === 'subject' ? (this.limits.subjects?.[name!] ?? this.limits.subjects?.['*']) : this.limits[kind === 'token' ? 'tokens' : 'providers']?.[name!];
    if (!rule) return [];
    const scope: Scope = { kind, key: kind === 'host' ? 'host' : `${kind}:${name}`, rule };
    const statuses: BudgetStatus[] = [];
    for (const budget of this.budgetsOf([scope], this.clock.now())) {
      const counter = await this.store.read(budget.scope.key, budget.metric, budget.window, budget.since);
      const scale = budget.unit === 'usd' ? MICRO : 1;
      statuses.push({
        unit: budget.unit,
        period: budget.metric.slice(budget.unit.length + 1),
        limit: budget.limit / scale,
        used: counter.used / scale,
        reserved: counter.reserved / scale,
        remaining: Math.max(0, budget.limit - counter.used - counter.reserved) / scale,
        resetsAt: new Date(budget.resetAt).toISOString(),
      });
    }
    return statuses;
  }

  /** @internal The budget counters of `scopes` at `now`. */
  budgetsOf(scopes: readonly Scope[], now: number): BudgetCounter[] {
    const timeZone = this.limits.timeZone ?? 'UTC';
    const counters: BudgetCounter[] = [];
    for (const scope of scopes) {
      for (const budget of scope.rule.budgets ?? []) {
        const { window, since, resetAt } = periodWindow(budget.period, now, timeZone);
        const key = periodKey(budget.period);
        if (budget.usd !== undefined) counters.push({ scope, unit: 'usd', metric: `usd:${key}`, limit: Math.round(budget.usd * MICRO), window, since, resetAt });
        if (budget.tokens !== undefined) counters.push({ scope, unit: 'tokens', metric: `tokens:${key}`, limit: budget.tokens, window, since, resetAt });
      }
    }
    return counters;
  }

  /** @internal What a step of this run costs: tokens (input + output) and micro-dollars. */
  cost(run: GovernedRunInfo, usage: Usage | undefined): { tokens: number; usd: number } {
    if (!usage) return { tokens: 0, usd: 0 };
    const tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
    let usd = usage.costUsd;
    if (usd === undefined && (run.authMode !== 'cli-session' || this.limits.cliCost === 'api-equivalent')) {
      usd = run.priceUsd(usage) ?? usage.apiEquivalentCostUsd;
    }
    return { tokens, usd: Math.ceil((usd ?? 0) * MICRO) };
  }

  /** @internal The typed refusal of a charge that did not fit (told to the observer). */
  refusal(refusal: LimitRefusal, scopes: readonly Scope[], budgets: readonly BudgetCounter[], now: number): DriverError {
    const { charge } = refusal;
    const scope = scopes.find((candidate) => candidate.key === charge.scope)!;
    const whose = SCOPE_NAMES[scope.kind];
    if (charge.metric === 'requests' || charge.metric === 'tokens-minute' || charge.metric === 'runs') {
      this.refused('RATE_LIMITED');
      const what = charge.metric === 'requests' ? 'requests per minute' : charge.metric === 'runs' ? 'concurrent runs' : 'tokens per minute';
      const wait = charge.metric === 'runs' ? 1 : Math.max(1, Math.ceil((minuteWindow(now).resetAt - now) / 1000));
      return new DriverError('RATE_LIMITED', `This run would exceed ${whose} limit of ${what}; try again in ${wait} s.`, { retryable: true, retryAfterSeconds: wait });
    }
    this.refused('BUDGET_EXCEEDED');
    const budget = budgets.find((candidate) => candidate.scope.key === charge.scope && candidate.metric === charge.metric)!;
    const wait = Math.max(1, Math.ceil((budget.resetAt - now) / 1000));
    const period = budget.since === undefined ? budget.metric.slice(budget.unit.length + 1) : 'rolling';
    return new DriverError(
      'BUDGET_EXCEEDED',
      `${capitalized(whose)} ${period} ${budget.unit === 'usd' ? 'USD' : 'token'} budget is spent; it resets at ${new Date(budget.resetAt).toISOString()}.`,
      { retryable: false, retryAfterSeconds: wait },
    );
  }

  private scopesOf(run: GovernedRunInfo): Scope[] {
    const { host, subjects, tokens, providers } = this.limits;
    const scopes: Scope[] = [];
    if (host) scopes.push({ kind: 'host', key: 'host', rule: host });
    const subjectRule = subjects?.[run.subject] ?? subjects?.['*'];
    if (subjectRule) scopes.push({ kind: 'subject', key: `subject:${run.subject}`, rule: subjectRule });
    const tokenRule = run.tokenId !== undefined ? tokens?.[run.tokenId] : undefined;
    if (tokenRule) scopes.push({ kind: 'token', key: `token:${run.tokenId}`, rule: tokenRule });
    const providerRule = providers?.[run.provider];
    if (providerRule) scopes.push({ kind: 'provider', key: `provider:${run.provider}`, rule: providerRule });
    return scopes;
  }

  /** A step's estimate from the request: its JSON size at four characters a token, plus its output cap. */
  private estimate(run: GovernedRunInfo): { tokens: number; usd: number } {
    const inputTokens = Math.ceil(JSON.stringify(run.request).length / 4);
    const outputTokens = run.maxOutputTokens ?? DEFAULT_OUTPUT_ESTIMATE;
    const usd = run.priceUsd({ inputTokens, outputTokens });
    return { tokens: inputTokens + outputTokens, usd: Math.ceil((usd ?? 0) * MICRO) };
  }
}

/** One admitted run: its first step is reserved; each step settles and the next one reserves. */
class RunGovernance {
  private reservedFirst = true;
  private estimate: { tokens: number; usd: number };
  private ended = false;

  constructor(
    private readonly governor: Governor,
    private readonly store: LimitStore,
    private readonly holdId: string,
    private readonly run: GovernedRunInfo,
    private readonly scopes: readonly Scope[],
    estimate: { tokens: number; usd: number },
    /** Whether the run holds a reservation (a concurrency slot, a step's estimate) that `end` must release. */
    private holding: boolean,
  ) {
    this.estimate = estimate;
  }

  handle(): GovernedRun {
    return {
      steps: { before: (step, signal) => this.before(step, signal), after: (usage) => this.after(usage) },
      end: () => this.end(),
    };
  }

  /**
   * Each later step reserves its estimate against every budget, in one transaction with the
   * check that each tokens-per-minute limit has room this minute. A minute without room holds
   * the run here, between steps, until the next minute (at most 60 s, cut short when the run
   * ends); if that minute has no room either, the run ends RATE_LIMITED with its retry time.
   */
  private async before(step: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.reservedFirst && step === 1) return;
    this.reservedFirst = false;
    for (let waited = false; ; waited = true) {
      const now = this.governorNow();
      const minute = minuteWindow(now);
      const budgets = this.governor.budgetsOf(this.scopes, now);
      const charges = [...tokenMinuteCharges(this.scopes, minute.window), ...budgets.map((budget) => reserveCharge(budget, this.estimate))];
      if (charges.length === 0) return;
      const refusal = await this.store.take(this.holdId, charges);
      if (!refusal) {
        if (budgets.length > 0) this.holding = true;
        return;
      }
      if (waited || refusal.charge.metric !== 'tokens-minute') throw this.governor.refusal(refusal, this.scopes, budgets, now);
      await sleep(minute.resetAt - now, signal, this.governor.clock);
    }
  }

  private async after(usage: Usage | undefined): Promise<void> {
    this.reservedFirst = false;
    const cost = this.governor.cost(this.run, usage);
    // The next step is reserved at least at the largest step so far.
    this.estimate = { tokens: Math.max(this.estimate.tokens, cost.tokens), usd: Math.max(this.estimate.usd, cost.usd) };
    const now = this.governorNow();
    const uses: LimitUse[] = [];
    const minute = minuteWindow(now).window;
    for (const { key, rule } of this.scopes) {
      if (rule.tokensPerMinute !== undefined) uses.push({ scope: key, metric: 'tokens-minute', window: minute, amount: cost.tokens });
    }
    const budgets = this.governor.budgetsOf(this.scopes, now);
    for (const budget of budgets) uses.push({ scope: budget.scope.key, metric: budget.metric, window: budget.window, amount: budget.unit === 'usd' ? cost.usd : cost.tokens });
    if (uses.length === 0) return;
    await this.store.settle(this.holdId, uses, [...new Set(budgets.map((budget) => budget.metric))]);
  }

  private async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.holding) await this.store.release(this.holdId);
  }

  private governorNow(): number {
    return this.governor.clock.now();
  }
}

/** Room left this minute in each tokens-per-minute limit (the count is below the limit; nothing is taken). */
function tokenMinuteCharges(scopes: readonly Scope[], window: number): LimitCharge[] {
  return scopes.flatMap(({ key, rule }) => (rule.tokensPerMinute === undefined ? [] : [{ scope: key, metric: 'tokens-minute', window, limit: rule.tokensPerMinute, need: 1, use: 0, reserve: 0 }]));
}

function reserveCharge(budget: BudgetCounter, estimate: { tokens: number; usd: number }): LimitCharge {
  // At least one unit, so that a spent budget refuses even a step whose price is unknown.
  const amount = Math.max(1, budget.unit === 'usd' ? estimate.usd : estimate.tokens);
  const charge: LimitCharge = { scope: budget.scope.key, metric: budget.metric, window: budget.window, limit: budget.limit, need: amount, use: 0, reserve: amount };
  if (budget.since !== undefined) charge.since = budget.since;
  return charge;
}

function hasLimits(limits: GovernanceLimits): boolean {
  const rules = [limits.host, ...Object.values(limits.subjects ?? {}), ...Object.values(limits.tokens ?? {}), ...Object.values(limits.providers ?? {})];
  return rules.some((rule) => rule !== undefined && (rule.requestsPerMinute !== undefined || rule.tokensPerMinute !== undefined || rule.concurrentRuns !== undefined || (rule.budgets?.length ?? 0) > 0));
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
