/**
 * Prometheus metrics (`GET /metrics`, prom-client). An operator endpoint, not part of the
 * wire protocol: it is absent unless the config has `metrics`, and it is answered only to
 * its own bearer secret (`metrics.tokenRef`; host tokens do not work here, and that secret
 * works nowhere else) or, without one, only to loopback peers. Labels are provider ids,
 * models, statuses, error codes and sink names — never subjects, tokens or content.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DriverError, isKnownErrorCode } from '../../protocol/errors.js';
import { isLoopbackHost } from '../../shared/addresses.js';
import type { UsageRecord } from '../../runtime/usage-record.js';
import type { SpoolStats } from '../usage/webhook-sink.js';

export const METRICS_PATH = '/metrics';

/** Endpoints for the operator, outside the wire protocol's endpoint table (and its OpenAPI document). */
export const OPERATOR_ENDPOINTS = [{ method: 'GET', path: METRICS_PATH, operationId: 'metrics' }] as const;

const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

export class PrometheusMetrics {
  readonly registry = new Registry();
  private readonly runs: Counter<'provider' | 'model' | 'status'>;
  private readonly durations: Histogram<'provider' | 'model' | 'status'>;
  private readonly tokens: Counter<'provider' | 'model' | 'kind'>;
  private readonly errors: Counter<'provider' | 'code'>;
  private readonly rejections: Counter<'reason'>;
  private readonly sinkFailures: Counter<'sink' | 'code'>;
  private readonly limitRefusals: Counter<'code'>;
  private streams = 0;
  private readonly tokenDigest: Buffer | undefined;

  constructor(options: { token?: string | undefined; activeRuns: () => number }) {
    this.tokenDigest = options.token !== undefined ? digest(options.token) : undefined;
    const registers = [this.registry];
    this.runs = new Counter({ name: 'agenticdriver_runs_total', help: 'Runs ended, by provider, model and status.', labelNames: ['provider', 'model', 'status'], registers });
    this.durations = new Histogram({
      name: 'agenticdriver_run_duration_seconds',
      help: 'Run durations, by provider, model and status.',
      labelNames: ['provider', 'model', 'status'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.tokens = new Counter({
      name: 'agenticdriver_tokens_total',
      help: 'Tokens the providers reported (observed sums), by provider, model and kind (input, output, cached_input, reasoning).',
      labelNames: ['provider', 'model', 'kind'],
      registers,
    });
    this.errors = new Counter({
      name: 'agenticdriver_run_errors_total',
      help: 'Failed and cancelled runs by provider and error code (provider errors are PROVIDER_* and CLI_* codes).',
      labelNames: ['provider', 'code'],
      registers,
    });
    this.rejections = new Counter({ name: 'agenticdriver_admission_rejections_total', help: 'Runs refused at admission (429 BUSY).', labelNames: ['reason'], registers });
    this.limitRefusals = new Counter({ name: 'agenticdriver_limit_refusals_total', help: 'Runs refused by the host\'s limits (RATE_LIMITED, BUDGET_EXCEEDED), at admission or at a step.', labelNames: ['code'], registers });
    this.sinkFailures = new Counter({ name: 'agenticdriver_usage_sink_failures_total', help: 'Usage sink failures by sink and code.', labelNames: ['sink', 'code'], registers });
    const self = this;
    new Gauge({
      name: 'agenticdriver_active_runs',
      help: 'Runs being served now.',
      registers,
      collect() {
        this.set(options.activeRuns());
      },
    });
    new Gauge({
      name: 'agenticdriver_active_streams',
      help: 'Event streams (SSE responses) open now.',
      registers,
      collect() {
        this.set(self.streams);
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'agenticdriver_' });
  }

  observeRecord(record: UsageRecord): void {
    const labels = { provider: record.provider, model: record.model, status: record.status };
    this.runs.inc(labels);
    this.durations.observe(labels, record.durationMs / 1000);
    const observed = record.observedUsage ?? {};
    const kinds: [string, number | undefined][] = [
      ['input', observed.inputTokens],
      ['output', observed.outputTokens],
      ['cached_input', observed.cachedInputTokens],
      ['reasoning', observed.reasoningTokens],
    ];
    for (const [kind, count] of kinds) if (count) this.tokens.inc({ provider: record.provider, model: record.model, kind }, count);
    // Labels come only from the contract's table: a code from anywhere else is one series, not one per code.
    if (record.errorCode) this.errors.inc({ provider: record.provider, code: isKnownErrorCode(record.errorCode) ? record.errorCode : 'INTERNAL_ERROR' });
  }

  /** The webhook spool against its bound (registered when a webhook sink is configured). */
  watchSpool(stats: () => SpoolStats): void {
    const registers = [this.registry];
    new Gauge({
      name: 'agenticdriver_usage_spool_records',
      help: 'Usage records in the webhook spool: waiting (pending) and refused by the webhook (rejected).',
      labelNames: ['folder'],
      registers,
      collect() {
        const now = stats();
        this.set({ folder: 'pending' }, now.pending);
        this.set({ folder: 'rejected' }, now.rejected);
      },
    });
    new Gauge({ name: 'agenticdriver_usage_spool_bytes', help: 'Bytes in the webhook spool (both folders).', registers, collect() { this.set(stats().bytes); } });
    new Gauge({ name: 'agenticdriver_usage_spool_max_records', help: 'The spool bound in records (usage.webhook.maxSpoolRecords).', registers, collect() { this.set(stats().maxRecords); } });
    new Gauge({ name: 'agenticdriver_usage_spool_max_bytes', help: 'The spool bound in bytes (usage.webhook.maxSpoolBytes).', registers, collect() { this.set(stats().maxBytes); } });
    let counted = 0;
    new Counter({
      name: 'agenticdriver_usage_spool_dropped_total',
      help: 'Usage records the webhook will not get because the spool was full (the state store keeps them).',
      registers,
      collect() {
        const dropped = stats().dropped;
        if (dropped > counted) this.inc(dropped - counted);
        counted = dropped;
      },
    });
  }

  /** A gauge read at every scrape (an extension's own figure, e.g. the job queue's depth). */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await read());
      },
    });
  }

  /** The host-wide budgets' remaining amounts (per-subject figures are not labels: `agenticdriver usage` shows them). */
  watchHostBudgets(read: () => Promise<{ unit: string; period: string; remaining: number; limit: number }[]>): void {
    const registers = [this.registry];
    new Gauge({
      name: 'agenticdriver_host_budget_remaining',
      help: 'What the host-wide budgets (limits.host.budgets) have left this period, by unit (usd, tokens) and period.',
      labelNames: ['unit', 'period'],
      registers,
      async collect() {
        this.reset();
        for (const budget of await read()) this.set({ unit: budget.unit, period: budget.period }, budget.remaining);
      },
    });
  }

  /** Each provider instance's budgets' remaining amounts (provider ids are configured, so a bounded label). */
  watchProviderBudgets(read: () => Promise<{ provider: string; budgets: { unit: string; period: string; remaining: number }[] }[]>): void {
    new Gauge({
      name: 'agenticdriver_provider_budget_remaining',
      help: 'What each provider instance\'s budgets (limits.providers.<id>.budgets) have left this period, by provider, unit (usd, tokens) and period.',
      labelNames: ['provider', 'unit', 'period'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { provider, budgets } of await read()) for (const budget of budgets) this.set({ provider, unit: budget.unit, period: budget.period }, budget.remaining);
      },
    });
  }

  limitRefused(code: string): void {
    this.limitRefusals.inc({ code: isKnownErrorCode(code) ? code : 'INTERNAL_ERROR' });
  }

  admissionRejected(): void {
    this.rejections.inc({ reason: 'busy' });
  }

  sinkFailed(failure: { sink: string; code: string }): void {
    this.sinkFailures.inc({ sink: failure.sink, code: failure.code });
  }

  streamOpened(): () => void {
    this.streams += 1;
    let closed = false;
    return () => {
      if (!closed) this.streams -= 1;
      closed = true;
    };
  }

  /** Throws 401 unless the caller may scrape: the metrics secret, or (without one) a loopback peer. */
  authorize(authorization: string | undefined, remoteAddress: string | undefined): void {
    if (this.tokenDigest) {
      const match = /^bearer ([^\s,]{32,4096})$/i.exec(authorization ?? '');
      if (!match || !timingSafeEqual(digest(match[1]!), this.tokenDigest)) {
        throw new DriverError('UNAUTHORIZED', 'The metrics token is required.');
      }
      return;
    }
    if (!remoteAddress || !isLoopbackHost(remoteAddress)) throw new DriverError('FORBIDDEN', 'Metrics are served to loopback peers only.');
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
