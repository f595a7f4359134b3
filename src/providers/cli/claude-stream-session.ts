/**
 * Claude Code's long-lived mode for warm starts: `claude -p --input-format stream-json`
 * started ahead of time, waiting on stdin. It keeps one conversation per process, so a
 * process serves exactly one run (one user message, then stdin is closed) and is never
 * reused; the pool keeps a started spare instead, which saves the CLI's start-up.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart } from '../contract/v1.js';
import type { CliStreamParser, WarmRun, WarmSession, WarmSpawn } from './adapter.js';
import { OpenStdin, runCli, type CliOutput } from './process.js';

export class SingleUseStreamSession implements WarmSession {
  private readonly stdin = new OpenStdin();
  private readonly stop = new AbortController();
  private readonly output: AsyncGenerator<CliOutput>;
  /** The next output not yet consumed; awaited from the start so the process is spawned at once. */
  private pending: Promise<IteratorResult<CliOutput>>;
  private used = false;
  private exited = false;

  constructor(
    spawn: WarmSpawn,
    args: string[],
    private readonly product: string,
    private readonly parser: () => CliStreamParser,
  ) {
    this.output = runCli({ ...spawn, args, stdin: this.stdin, outputLimitBytes: spawn.outputLimitBytes }, this.stop.signal);
    this.pending = this.output.next();
    void this.skipStartupOutput();
  }

  /** While the spare waits, its start-up lines (UI notices) are dropped and an exit is noticed at once. */
  private async skipStartupOutput(): Promise<void> {
    for (;;) {
      const item = await this.pending.catch(() => undefined);
      if (this.used) return;
      if (!item || item.done || item.value.type === 'exit') {
        this.exited = true;
        return;
      }
      this.pending = this.output.next();
    }
  }

  get alive(): boolean {
    return !this.used && !this.exited;
  }

  async close(): Promise<void> {
    this.stop.abort(new DriverError('CLI_FAILED', `${this.product} was stopped.`));
    await this.pending.catch(() => undefined);
    await this.output.return(undefined).catch(() => undefined);
  }

  async *run(run: WarmRun, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    if (!this.alive) throw new DriverError('CLI_FAILED', `${this.product} exited before it was used.`);
    this.used = true;
    const onAbort = () => this.stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      signal.throwIfAborted();
      this.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: run.prompt } })}\n`);
      this.stdin.end();
      const parser = this.parser();
      for (let next = await this.pending; !next.done; next = await this.output.next()) {
        const item = next.value;
        const parts = item.type === 'line' ? parser.line(item.line) : parser.exit(item.code, item.signal, item.stderrTail);
        for (const part of parts) yield part;
      }
    } catch (error) {
      throw signal.aborted ? signal.reason : error;
    } finally {
      signal.removeEventListener('abort', onAbort);
      await this.close();
    }
  }
}
