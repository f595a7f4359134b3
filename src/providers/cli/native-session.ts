/**
 * Native-session mode: a run under a native tool profile on the CLI's long-lived protocol,
 * a process started for this run alone (never pooled), its permission requests relayed.
 */
import type { ProviderPart, ProviderRequest } from '../contract/v1.js';
import type { CliDialect, NativeSessionContext } from './dialect.js';
import type { CliInstance } from './instance.js';
import { DEFAULT_OUTPUT_LIMIT_BYTES } from './process.js';
import { renderPrompt } from './prompt.js';
import type { RunWorkspace } from './workspace.js';

export async function* streamNativeSession(
  cli: CliInstance,
  start: NonNullable<CliDialect['nativeSession']>,
  request: ProviderRequest,
  workspace: RunWorkspace,
  context: NativeSessionContext,
  signal: AbortSignal,
): AsyncGenerator<ProviderPart> {
  const outputLimitBytes = cli.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
  const env = await cli.environment(workspace, cli.dialect.safetyEnv);
  const spawn = { binary: cli.binary, env, cwd: workspace.workDir, root: workspace.root, model: request.model, outputLimitBytes, ...(cli.killGraceMs === undefined ? {} : { killGraceMs: cli.killGraceMs }) };
  const session = await start(spawn, context, signal);
  try {
    yield* session.run({ model: request.model, prompt: renderPrompt(request), cwd: workspace.workDir, outputLimitBytes }, signal);
  } finally {
    await session.close();
  }
}
