/**
 * Usage records POSTed to an operator's webhook, at least once and deduplicable by
 * `recordId` (also sent as `Idempotency-Key`). Each record is first written to an on-disk
 * spool (private, one file per record) and removed only after a 2xx, so records survive a
 * webhook outage and a host restart; a record is never sent again after a 2xx.
 * Transport failures and 408/429/5xx are retried (bounded attempts with backoff per round,
 * then the record waits for the next round); any other 4xx refuses the record for good: it
 * moves to `rejected/` and counts as `USAGESTAT_SCHEMA`.
 *
 * The spool is bounded (records and bytes, `pending/` and `rejected/` together): at the bound
 * a new record is not spooled — a `USAGESTAT_ERROR` naming it, counted as `dropped` — and the
 * state store still holds it. The folder is read once, in the background after open; rounds
 * walk an in-memory index in arrival order.
 */
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { UsageRecord } from '../../runtime/usage-record.js';
import { HealthCounter, SinkError, type SinkHealth, type SinkLog, type UsageSink } from './sink.js';

export const DEFAULT_WEBHOOK_ATTEMPTS = 5;
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5_000;
export const DEFAULT_WEBHOOK_RETRY_INTERVAL_MS = 30_000;
export const DEFAULT_SPOOL_RECORDS = 100_000;
export const DEFAULT_SPOOL_BYTES = 256 * 1024 * 1024;
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
  maxSpoolRecords?: number | undefined;
  maxSpoolBytes?: number | undefined;
}

/** What the spool holds now, and its bound (doctor and `/metrics` show it). */
export interface SpoolStats {
  pending: number;
  rejected: number;
  bytes: number;
  maxRecords: number;
  maxBytes: number;
  /** Records not spooled because the spool was full, since this process started. */
  dropped: number;
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
  private started = false;
  private readonly stop = new AbortController();
  /** Waiting records, file name → bytes, in arrival order (a Map keeps insertion order). */
  private readonly pending = new Map<string, number>();
  private rejected = { count: 0, bytes: 0 };
  private pendingBytes = 0;
  /** Room taken by records being written now, so that concurrent deliveries never pass the bound together. */
  private reserved = { count: 0, bytes: 0 };
  private dropped = 0;
  /** Resolves once what an earlier process left in the spool is indexed. */
  private indexed: Promise<void> = Promise.resolve();
  private readonly maxRecords: number;
  private readonly maxBytes: number;

  constructor(
    private readonly options: WebhookSinkOptions,
    log: SinkLog,
  ) {
    this.counter = new HealthCounter(this.name, log);
    this.pendingDir = join(options.spoolDirectory, 'pending');
    this.rejectedDir = join(options.spoolDirectory, 'rejected');
    this.maxRecords = options.maxSpoolRecords ?? DEFAULT_SPOOL_RECORDS;
    this.maxBytes = options.maxSpoolBytes ?? DEFAULT_SPOOL_BYTES;
  }

  /**
   * Creates the spool and starts indexing what an earlier process left in it (oldest first) in
   * the background — a large spool does not hold up the host's start; deliveries wait for it.
   * Sends nothing yet.
   */
  async open(): Promise<void> {
    await mkdir(this.pendingDir, { recursive: true, mode: 0o700 });
    await mkdir(this.rejectedDir, { recursive: true, mode: 0o700 });
    this.indexed = (async () => {
      for (const { name, size } of await spooledFiles(this.pendingDir)) this.index(name, size);
      for (const { size } of await spooledFiles(this.rejectedDir)) this.addRejected(size);
    })();
  }

  /** Starts delivering, with whatever the spool already holds. */
  start(): void {
    this.started = true;
    void this.indexed.then(() => this.kick());
  }

  /** Takes over the records of another process's spool (one that died), within the bound; returns how many moved. */
  async adopt(spoolDirectory: string): Promise<number> {
    await this.indexed;
    let moved = 0;
    for (const folder of ['pending', 'rejected'] as const) {
      for (const { name, size } of await spooledFiles(join(spoolDirectory, folder))) {
        if (this.full(size, this.pending.get(name) ?? 0)) return moved;
        const target = folder === 'pending' ? this.pendingDir : this.rejectedDir;
        try {
          await rename(join(spoolDirectory, folder, name), join(target, name));
        } catch {
          continue;
        }
        if (folder === 'pending') this.index(name, size);
        else this.addRejected(size);
        moved += 1;
      }
    }
    if (moved > 0) this.kick();
    return moved;
  }

  /** Resolves once the record is durably spooled; delivery happens in the background. */
  async deliver(record: UsageRecord): Promise<void> {
    if (this.closed) throw new SinkError('USAGESTAT_ERROR', 'The webhook sink is closed.', true);
    await this.indexed;
    const name = `${record.recordId}.json`;
    if (!RECORD_FILE.test(name)) throw new SinkError('USAGESTAT_SCHEMA', 'The record id is not a file-safe id.', false);
    const body = JSON.stringify(record);
    const size = Buffer.byteLength(body);
    // A record already waiting (a re-delivery after a crash) replaces itself.
    const replaced = this.pending.get(name) ?? 0;
    if (this.full(size, replaced)) {
      this.dropped += 1;
      throw new SinkError(
        'USAGESTAT_ERROR',
        `the spool is full (${this.pending.size + this.rejected.count} records, ${this.pendingBytes + this.rejected.bytes} bytes; bounds usage.webhook.maxSpoolRecords ${this.maxRecords}, maxSpoolBytes ${this.maxBytes}), so the webhook will not get this record; the state store keeps it`,
        false,
      );
    }
    const reservation = { count: replaced > 0 ? 0 : 1, bytes: size - replaced };
    this.reserved = { count: this.reserved.count + reservation.count, bytes: this.reserved.bytes + reservation.bytes };
    try {
      const target = join(this.pendingDir, name);
      const temporary = `${target}.tmp`;
      const handle = await open(temporary, 'w', 0o600);
      try {
        await handle.writeFile(body);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, target);
      this.index(name, size);
    } finally {
      this.reserved = { count: this.reserved.count - reservation.count, bytes: this.reserved.bytes - reservation.bytes };
    }
    this.kick();
  }

  /** Whether `size` more bytes (replacing `replaced`) would pass a bound. */
  private full(size: number, replaced: number): boolean {
    const records = this.pending.size + this.rejected.count + this.reserved.count + (replaced > 0 ? 0 : 1);
    const bytes = this.pendingBytes + this.rejected.bytes + this.reserved.bytes - replaced + size;
    return records > this.maxRecords || bytes > this.maxBytes;
  }

  private index(name: string, size: number): void {
    this.pendingBytes += size - (this.pending.get(name) ?? 0);
    this.pending.set(name, size);
  }

  private addRejected(size: number): void {
    this.rejected = { count: this.rejected.count + 1, bytes: this.rejected.bytes + size };
  }

  private unindex(name: string): number {
    const size = this.pending.get(name) ?? 0;
    this.pending.delete(name);
    this.pendingBytes -= size;
    return size;
  }

  /** Starts a delivery round, or asks the running one to look again when it ends. */
  private kick(): void {
    if (this.closed || !this.started) return;
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
    // Records spooled during the round join the end of the Map and are reached in this loop.
    for (const name of this.pending.keys()) {
      if (this.closed) return;
      const path = join(this.pendingDir, name);
      let body: string;
      try {
        body = await readFile(path, 'utf8');
      } catch {
        this.unindex(name); // Removed from outside the host.
        continue;
      }
      const recordId = name.slice(0, -'.json'.length);
      const outcome = await this.send(recordId, body);
      if (outcome === 'delivered') {
        await rm(path, { force: true });
        this.unindex(name);
        this.counter.success();
      } else if (outcome === 'rejected') {
        const size = this.unindex(name);
        await rename(path, join(this.rejectedDir, name)).then(
          () => this.addRejected(size),
          () => rm(path, { force: true }),
        );
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
      if (attempt > 1) await this.sleep(Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 2)) * (0.5 + Math.random() / 2));
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

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.stop.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }

  /** Delivers what is spooled now (tests and shutdown use it); resolves when the round ends. */
  async flush(): Promise<void> {
    await this.indexed;
    this.kick();
    while (this.draining) await this.draining;
  }

  spool(): SpoolStats {
    return {
      pending: this.pending.size,
      rejected: this.rejected.count,
      bytes: this.pendingBytes + this.rejected.bytes,
      maxRecords: this.maxRecords,
      maxBytes: this.maxBytes,
      dropped: this.dropped,
    };
  }

  health(): SinkHealth {
    return this.counter.snapshot({ pending: this.pending.size, ...(this.dropped > 0 ? { dropped: this.dropped } : {}) });
  }

  /** Stops retrying; whatever is not delivered stays in the spool for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.draining;
  }
}

/** The record files of one spool folder with their sizes, oldest first. */
async function spooledFiles(folder: string): Promise<{ name: string; size: number }[]> {
  const names = await readdir(folder).then((all) => all.filter((name) => RECORD_FILE.test(name)), () => [] as string[]);
  const files = await Promise.all(
    names.map(async (name) => {
      const info = await stat(join(folder, name)).catch(() => undefined);
      return info?.isFile() ? { name, size: info.size, at: info.mtimeMs } : undefined;
    }),
  );
  return files
    .filter((file): file is { name: string; size: number; at: number } => file !== undefined)
    .sort((a, b) => a.at - b.at || (a.name < b.name ? -1 : 1))
    .map(({ name, size }) => ({ name, size }));
}

/** What a spool directory holds (what `doctor` reports, with or without a running host). */
export async function spoolBacklog(spoolDirectory: string): Promise<{ pending: number; rejected: number; bytes: number }> {
  const pending = await spooledFiles(join(spoolDirectory, 'pending'));
  const rejected = await spooledFiles(join(spoolDirectory, 'rejected'));
  const bytes = [...pending, ...rejected].reduce((sum, file) => sum + file.size, 0);
  return { pending: pending.length, rejected: rejected.length, bytes };
}
