/** What every usage sink shares: delivery, health, and the typed failures that never reach a run. */
import type { UsageRecord } from '../../runtime/usage-record.js';

/** `USAGESTAT_ERROR`: the transport failed (retried); `USAGESTAT_SCHEMA`: the record was refused (not retried). */
export type SinkFailureCode = 'USAGESTAT_ERROR' | 'USAGESTAT_SCHEMA';

export interface SinkFailure {
  code: SinkFailureCode;
  message: string;
  retryable: boolean;
  sink: string;
  recordId?: string;
  at: string;
}

export interface SinkHealth {
  sink: string;
  ok: boolean;
  delivered: number;
  failures: number;
  /** Records waiting in the spool (webhook). */
  pending?: number;
  /** Records the webhook will never get because its spool was full (this process). */
  dropped?: number;
  lastError?: SinkFailure;
}

export interface UsageSink {
  readonly name: string;
  /** Resolves once the record is delivered or durably queued; rejects with a `SinkError`. */
  deliver(record: UsageRecord): Promise<void>;
  health(): SinkHealth;
  close(): Promise<void>;
}

export class SinkError extends Error {
  constructor(
    readonly code: SinkFailureCode,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'SinkError';
  }
}

/** One log line per sink failure: the code, the sink, the record id; never the record's content. */
export type SinkLog = (failure: SinkFailure) => void;

export const logSinkFailureToStderr: SinkLog = (failure) => {
  process.stderr.write(`${JSON.stringify({ time: failure.at, level: 'warn', msg: 'usage sink failure', ...failure })}\n`);
};

/** Counts and the last failure of one sink. */
export class HealthCounter {
  private delivered = 0;
  private failures = 0;
  private lastError: SinkFailure | undefined;
  private ok = true;

  constructor(
    readonly sink: string,
    private readonly log: SinkLog,
  ) {}

  success(): void {
    this.delivered += 1;
    this.ok = true;
  }

  failure(code: SinkFailureCode, message: string, recordId?: string): void {
    this.failures += 1;
    this.ok = false;
    this.lastError = { code, message, retryable: code === 'USAGESTAT_ERROR', sink: this.sink, at: new Date().toISOString(), ...(recordId ? { recordId } : {}) };
    this.log(this.lastError);
  }

  recovered(): void {
    this.ok = true;
  }

  snapshot(extra: Partial<SinkHealth> = {}): SinkHealth {
    return { sink: this.sink, ok: this.ok, delivered: this.delivered, failures: this.failures, ...(this.lastError ? { lastError: this.lastError } : {}), ...extra };
  }
}

/** The in-process callback (`HostOptions.onUsage`) as a sink. */
export class CallbackSink implements UsageSink {
  readonly name = 'callback';
  private readonly counter: HealthCounter;

  constructor(
    private readonly callback: (record: UsageRecord) => void | Promise<void>,
    log: SinkLog,
  ) {
    this.counter = new HealthCounter(this.name, log);
  }

  async deliver(record: UsageRecord): Promise<void> {
    try {
      await this.callback(record);
      this.counter.success();
    } catch (error) {
      this.counter.failure('USAGESTAT_ERROR', `The usage callback threw: ${error instanceof Error ? error.name : typeof error}.`, record.recordId);
    }
  }

  health(): SinkHealth {
    return this.counter.snapshot();
  }

  async close(): Promise<void> {}
}
