/** Usage records as JSON lines in a private file (0600), rotated by size: `path`, `path.1` (newest) … `path.<keep>`. */
import { chmod, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { UsageRecord } from '../../runtime/usage-record.js';
import { HealthCounter, type SinkHealth, type SinkLog, type UsageSink } from './sink.js';

export const DEFAULT_FILE_MAX_BYTES = 10_000_000;
export const DEFAULT_FILE_KEEP = 5;

export class JsonlFileSink implements UsageSink {
  readonly name = 'file';
  private readonly counter: HealthCounter;
  private size: number | undefined;
  /** Appends in order, one at a time. */
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly options: { maxBytes?: number | undefined; keep?: number | undefined },
    log: SinkLog,
  ) {
    this.counter = new HealthCounter(this.name, log);
  }

  deliver(record: UsageRecord): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const write = this.tail.then(() => this.append(line, record.recordId));
    this.tail = write.catch(() => undefined);
    return write;
  }

  private async append(line: string, recordId: string): Promise<void> {
    try {
      const bytes = Buffer.byteLength(line);
      if (this.size === undefined) {
        await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
        this.size = await stat(this.path).then((info) => info.size, () => 0);
      }
      if (this.size > 0 && this.size + bytes > (this.options.maxBytes ?? DEFAULT_FILE_MAX_BYTES)) await this.rotate();
      const handle = await open(this.path, 'a', 0o600);
      try {
        // A file someone created with wider permissions is narrowed before a record lands in it.
        await handle.chmod(0o600);
        await handle.appendFile(line);
      } finally {
        await handle.close();
      }
      this.size += bytes;
      this.counter.success();
    } catch (error) {
      this.size = undefined;
      this.counter.failure('USAGESTAT_ERROR', `The usage file could not be written (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, recordId);
    }
  }

  private async rotate(): Promise<void> {
    const keep = this.options.keep ?? DEFAULT_FILE_KEEP;
    await rm(`${this.path}.${keep}`, { force: true });
    for (let index = keep - 1; index >= 1; index -= 1) {
      await rename(`${this.path}.${index}`, `${this.path}.${index + 1}`).catch(() => undefined);
    }
    await rename(this.path, `${this.path}.1`);
    await chmod(`${this.path}.1`, 0o600);
    this.size = 0;
  }

  health(): SinkHealth {
    return this.counter.snapshot();
  }

  async close(): Promise<void> {
    await this.tail;
  }
}
