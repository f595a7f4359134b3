/** One-shot mode: one CLI process per run, the prompt on stdin, its line stream parsed into parts. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ProviderPart, ProviderRequest } from '../contract/v1.js';
import type { CliRunContext, CliStreamParser } from './dialect.js';
import type { CliInstance } from './instance.js';
import type { ToolBridge } from './mcp-bridge.js';
import type { NativeToolProfile } from './native-tools.js';
import { runCli } from './process.js';
import { renderPrompt } from './prompt.js';
import type { RunWorkspace } from './workspace.js';

export interface OneShotOptions {
  bridge: ToolBridge | undefined;
  nativeTools: NativeToolProfile;
  /** A native-mode session turn's CLI conversation (see CliRunContext). */
  conversation?: CliRunContext['conversation'];
  /** Variables that point the CLI at a session's private home; they override the account's. */
  homeEnv?: Record<string, string>;
  /** Sees the run's parser, for what it learns besides parts (the CLI's conversation id). */
  onParser?(parser: CliStreamParser): void;
}

export async function* streamOneShot(
  cli: CliInstance,
  request: ProviderRequest,
  workspace: RunWorkspace,
  tools: OneShotOptions,
  signal: AbortSignal,
): AsyncGenerator<ProviderPart> {
  const { bridge, nativeTools, conversation } = tools;
  const plan = cli.dialect.plan({ model: request.model, prompt: renderPrompt(request), request, workspace, nativeTools, ...(bridge ? { bridge } : {}), ...(conversation ? { conversation } : {}) });
  for (const [path, content] of Object.entries(plan.files ?? {})) {
    await mkdir(dirname(join(workspace.root, path)), { recursive: true, mode: 0o700 });
    await writeFile(join(workspace.root, path), content, { mode: 0o600 });
  }
  const env = await cli.environment(workspace, { ...plan.env, ...tools.homeEnv });
  await cli.dialect.verifyRun?.(env, workspace.workDir);
  const parser = cli.dialect.parser(bridge, nativeTools);
  tools.onParser?.(parser);
  const process = runCli(
    {
      binary: cli.binary,
      args: plan.args,
      env,
      cwd: workspace.workDir,
      stdin: plan.stdin,
      ...(cli.outputLimitBytes === undefined ? {} : { outputLimitBytes: cli.outputLimitBytes }),
      ...(cli.killGraceMs === undefined ? {} : { killGraceMs: cli.killGraceMs }),
    },
    signal,
  );
  for await (const output of process) {
    const parts = output.type === 'line' ? parser.line(output.line) : parser.exit(output.code, output.signal, output.stderrTail);
    for (const part of parts) yield part;
  }
}
