/**
 * Makes a SQLite write-ahead log durable off the event loop. With `synchronous = FULL` every
 * COMMIT waits for the disk inside better-sqlite3's synchronous call (~3 ms here), stalling
 * every other request; with `synchronous = NORMAL` a COMMIT only hands its frames to the
 * operating system (safe against a killed process, not yet against a power cut), and this
 * flushes the log from libuv's thread pool before the write is reported done. Writes arriving
 * while a flush runs share the next one.
 *
 * Only the log is opened here, never the database or its `-shm` file: closing a descriptor of a
 * file drops the process's POSIX locks on it, and SQLite holds its locks on those two.
 */
import { open, type FileHandle } from 'node:fs/promises';

export class WalSync {
  private handle: FileHandle | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(
    private readonly walPath: string,
    /** The flush itself (a test slows it down to see who waits for it). */
    private readonly flush: (handle: FileHandle) => Promise<void> = (handle) => handle.datasync(),
  ) {}

  /** Resolves once everything written to the log before this call is on disk. */
  sync(): Promise<void> {
    if (!this.running) return this.start();
    // The flush under way may have started before the caller's write: one more after it, shared.
    const again = () => {
      this.next = undefined;
      return this.start();
    };
    return (this.next ??= this.running.then(again, again));
  }

  /** After the database closed (SQLite removes its log then). */
  async close(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
    await this.handle?.close();
    this.handle = undefined;
  }

  private start(): Promise<void> {
    const flushing = this.flushOnce().finally(() => {
      if (this.running === flushing) this.running = undefined;
    });
    this.running = flushing;
    return flushing;
  }

  private async flushOnce(): Promise<void> {
    if (!this.handle) {
      try {
        this.handle = await open(this.walPath, 'r');
      } catch (error) {
        // SQLite makes the log with its first write: no log, nothing written to flush.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
    }
    await this.flush(this.handle);
  }
}
