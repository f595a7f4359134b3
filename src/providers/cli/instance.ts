/** What every run mode (one-shot, warm pool, native session) takes from its adapter instance. */
import type { CliDialect } from './dialect.js';
import type { RunWorkspace } from './workspace.js';

export interface CliInstance {
  readonly dialect: CliDialect;
  readonly binary: string;
  /** The configured per-run output bound, if any (the process default otherwise). */
  readonly outputLimitBytes: number | undefined;
  readonly killGraceMs: number | undefined;
  /** The child environment for a process living in `workspace`. */
  environment(workspace: RunWorkspace, adapterEnv: Record<string, string>): Promise<Record<string, string>>;
  /** A private run directory where the CLI honours its files (checked before every run). */
  createWorkspace(): Promise<RunWorkspace>;
  /** Version and minimum-version check, once per instance; resolves to the version. */
  ensureReady(env: Record<string, string>, cwd: string, signal: AbortSignal): Promise<string>;
}
