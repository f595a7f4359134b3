/**
 * Usage records POSTed to an operator's webhook, at least once and deduplicable by
 * `recordId` (also sent as `Idempotency-Key`). Each record is first written to an on-disk
 * spool (private, one file per record) and removed only after a 2xx, so records survive a
 * webhook outage and a host restart; a record is never sent again after a 2xx.
 * Transport failures and 408/429/5xx are retried (bounded attempts with backoff per round,
 * then the record waits for the next round); any other 4xx refuses the record for good: it
 * moves to `rejected/` and counts as `USAGESTAT_SCHEMA`.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { UsageRecord } from '../../runtime/usage-record.js';
import { sleep } from '../../shared/abort.js';
import { HealthCounter, SinkError, type SinkHealth, type SinkLog, type UsageSink } from './sink.js';

export const DEFAULT_WEBHOOK_ATTEMPTS = 5;
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5_000;
export const DEFAULT_WEBHOOK_RETRY_INTERVAL_MS = 30_000;
const BACKOFF_BASE_MS = 100;
const BACKOFF_CAP_MS = 2_000;
const RECORD_FILE = /^[0-9A-Za-z-]{1,128}\.json$/;

export interface WebhookSinkOptions {
  url: string;
  spoolDirectory: string;
  /** The bearer secret, already resolved. */
  token?: string | undefined;
  maxAttempts?: number | undefined;
  timeoutMs?: number | undefined;
  retryIntervalMs?: number | undefined;
}

export class WebhookSink implements UsageSink {
  readonly name = 'webhook';
  private readonly counter: HealthCounter;
  private readonly pendingDir: string;
  private readonly rejectedDir: string;
  private draining: Promise<void> | undefined;
  private again = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private readonly stop = new AbortController();
  private pendingCount = 0;

  constructor(
    private readonly options: WebhookSinkOptions,
    log: SinkLog,
  ) {
    this.counter = new HealthCounter(this.name, log);
    this.pendingDir = join(options.spoolDirectory, 'pending');
    this.rejectedDir = join(options.spoolDirectory, 'rejected');
  }

  /** Creates the spool and starts delivering whatever an earlier process left in it. */
  async open(): Promise<void> {
    await mkdir(this.pendingDir, { recursive: true, mode: 0o700 });
    await mkdir(this.rejectedDir, { recursive: true, mode: 0o700 });
    this.kick();
  }

  /** Resolves once the record is durably spooled; delivery happens in the background. */
  async deliver(record: UsageRecord): Promise<void> {
    if (this.closed) throw new SinkError('USAGESTAT_ERROR', 'The webhook sink is closed.', true);
    if (!RECORD_FILE.test(`${record.recordId}.json`)) throw new SinkError('USAGESTAT_SCHEMA', 'The record id is not a file-safe id.', false);
    const target = join(this.pendingDir, `${record.recordId}.json`);
    const temporary = `${target}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(record));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
    this.pendingCount += 1;
    this.kick();
  }

  /** Starts a delivery round, or asks the running one to look again when it ends. */
  private kick(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.draining = this.drain()
      .catch(() => undefined)
      .finally(() => {
        this.draining = undefined;
        if (this.again && !this.closed) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    const names = (await readdir(this.pendingDir)).filter((name) => RECORD_FILE.test(name)).sort();
    this.pendingCount = names.length;
    for (const name of names) {
      if (this.closed) return;
      const path = join(this.pendingDir, name);
      let body: string;
      try {
        body = await readFile(path, 'utf8');
      } catch {
        continue; // Delivered by an earlier round.
      }
      const recordId = name.slice(0, -'.json'.length);
      const outcome = await this.send(recordId, body);
      if (outcome === 'delivered') {
        await rm(path, { force: true });
        this.pendingCount -= 1;
        this.counter.success();
      } else if (outcome === 'rejected') {
        await rename(path, join(this.rejectedDir, name)).catch(() => rm(path, { force: true }));
        this.pendingCount -= 1;
      } else {
        // The webhook is down: everything waits for the next round.
        this.schedule();
        return;
      }
    }
  }

  private schedule(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.options.retryIntervalMs ?? DEFAULT_WEBHOOK_RETRY_INTERVAL_MS);
    this.timer.unref();
  }

  private async send(recordId: string, body: string): Promise<'delivered' | 'rejected' | 'retry'> {
    const attempts = this.options.maxAttempts ?? DEFAULT_WEBHOOK_ATTEMPTS;
    let failure = '';
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      if (this.closed) return 'retry';
      if (attempt > 1) await sleep(Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 2)) * (0.5 + Math.random() / 2), this.stop.signal).catch(() => undefined);
      try {
        const response = await fetch(this.options.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': recordId,
            ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
          },
          body,
          redirect: 'error',
          signal: AbortSignal.any([this.stop.signal, AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS)]),
        });
        await response.body?.cancel().catch(() => undefined);
        if (response.ok) return 'delivered';
        if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) {
          this.counter.failure('USAGESTAT_SCHEMA', `The webhook refused the record with HTTP ${response.status}.`, recordId);
          return 'rejected';
        }
        failure = `HTTP ${response.status}`;
      } catch (error) {
        failure = error instanceof Error ? error.name : 'error';
      }
    }
    this.counter.failure('USAGESTAT_ERROR', `The webhook could not be reached after ${attempts} attempts (${failure}); the record waits in the spool.`, recordId);
    return 'retry';
  }

  /** Delivers what is spooled now (tests and shutdown use it); resolves when the round ends. */
  async flush(): Promise<void> {
    this.kick();
    while (this.draining) await this.draining;
  }

  health(): SinkHealth {
    return this.counter.snapshot({ pending: this.pendingCount });
  }

  /** Stops retrying; whatever is not delivered stays in the spool for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.draining;
  }
}

/** Records waiting in a spool directory (what `doctor` reports). */
export async function spoolBacklog(spoolDirectory: string): Promise<{ pending: number; rejected: number }> {
  const count = (dir: string) => readdir(dir).then((names) => names.filter((name) => RECORD_FILE.test(name)).length, () => 0);
  return { pending: await count(join(spoolDirectory, 'pending')), rejected: await count(join(spoolDirectory, 'rejected')) };
}
