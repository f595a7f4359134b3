/**
 * Warm mode: runs on pooled long-lived CLI processes, each in its own workspace. A process
 * goes back to the pool only if its run ended cleanly; single-use modes keep a started spare.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderPart, ProviderRequest } from '../spec/v1.js';
import type { WarmMode, WarmSession } from './dialect.js';
import type { CliInstance } from './instance.js';
import { DEFAULT_OUTPUT_LIMIT_BYTES } from './process.js';
import { renderPrompt } from './prompt.js';
import { WarmPool, type IdleTimer, type WarmProcess } from './warm-pool.js';
import type { RunWorkspace } from './workspace.js';

/** A warm session with the workspace it lives in, removed when it closes. */
class WarmEntry implements WarmProcess {
  constructor(
    readonly session: WarmSession,
    private readonly workspace: RunWorkspace,
  ) {}

  get alive(): boolean {
    return this.session.alive;
  }

  async close(): Promise<void> {
    await this.session.close();
    await this.workspace.remove();
  }
}

export class WarmRuns {
  private readonly pool: WarmPool<WarmEntry>;

  constructor(
    private readonly cli: CliInstance,
    private readonly warm: WarmMode,
    options: { processes: number; idleMs: number; idleTimer?: IdleTimer },
  ) {
    this.pool = new WarmPool(options.processes, options.idleMs, options.idleTimer);
  }

  /** The run on an idle warm process (or a newly started one), which goes back to the pool only if it ended cleanly. */
  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    const pool = this.pool;
    const runSpace = await this.cli.createWorkspace();
    const run = { model: request.model, prompt: renderPrompt(request), cwd: runSpace.workDir, outputLimitBytes: this.cli.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES };
    const key = this.warm.perModel ? request.model : '';
    let entry = pool.take(key);
    let pooled = entry !== undefined;
    if (this.warm.singleUse) this.startSpare(key, request.model);
    try {
      for (;;) {
        entry ??= await this.start(request.model, signal);
        let yielded = false;
        try {
          for await (const part of entry.session.run(run, signal)) {
            yielded = true;
            yield part;
          }
          return;
        } catch (error) {
          // An idle process that died unnoticed fails before the run starts: replace it, once.
          const diedIdle = pooled && !yielded && !entry.alive && !signal.aborted && error instanceof DriverError && error.code === 'CLI_FAILED';
          if (!diedIdle) throw error;
          pool.give(key, entry, false);
          entry = undefined;
          pooled = false;
        }
      }
    } finally {
      if (entry) pool.give(key, entry, entry.alive);
      await runSpace.remove();
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** Starts a spare in the background for the next run; a failure only means that run starts cold. */
  private startSpare(key: string, model: string): void {
    this.start(model, new AbortController().signal).then(
      (spare) => this.pool.give(key, spare, spare.alive),
      () => undefined,
    );
  }

  private async start(model: string, signal: AbortSignal): Promise<WarmEntry> {
    const workspace = await this.cli.createWorkspace();
    try {
      const env = await this.cli.environment(workspace, this.cli.dialect.safetyEnv);
      await this.cli.ensureReady(env, workspace.workDir, signal);
      const outputLimitBytes = this.cli.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
      const spawn = { binary: this.cli.binary, env, cwd: workspace.workDir, root: workspace.root, model, outputLimitBytes, ...(this.cli.killGraceMs === undefined ? {} : { killGraceMs: this.cli.killGraceMs }) };
      return new WarmEntry(await this.warm.start(spawn, signal), workspace);
    } catch (error) {
      await workspace.remove();
      throw error;
    }
  }
}
