/**
 * One adapter for every CLI kind: readiness once, a private workspace and a restricted
 * environment per run, the prompt on stdin, and the CLI's line stream turned into parts by
 * the kind's dialect. Each dialect only knows its CLI's flags, files and event vocabulary.
 */
import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderAdapter, ProviderInfo, ProviderInspection, ProviderPart, ProviderRequest } from '../spec/v1.js';
import type { CliProviderOptions } from './config.js';
import { childEnvironment } from './environment.js';
import { inspectionFromFailure, inspectionFromStatus } from './health.js';
import { startToolBridge, type BridgeTool, type ToolBridge } from './mcp-bridge.js';
import { relayNativePermission, type NativeRelay, type NativeToolProfile } from './native-tools.js';
import type { CliProbe, CliStatus } from './probe.js';
import { DEFAULT_OUTPUT_LIMIT_BYTES, runCli } from './process.js';
import { renderPrompt } from './prompt.js';
import { checkReadiness } from './readiness.js';
import { WarmPool, type WarmProcess } from './warm-pool.js';
import { createRunWorkspace, type OwnerRule, type RunWorkspace } from './workspace.js';

export interface CliRunPlan {
  args: string[];
  /** Written to stdin, then stdin is closed. */
  stdin: string | null;
  /** Telemetry, update and retry switches; they override anything configured. */
  env: Record<string, string>;
  /** Private files (0600) to write into the run workspace first, keyed by relative path. */
  files?: Record<string, string>;
}

export interface CliRunContext {
  model: string;
  prompt: string;
  request: ProviderRequest;
  workspace: RunWorkspace;
  /** The run's tools as an MCP server, when the run has tools (or the dialect's permission tool). */
  bridge?: ToolBridge;
  /** The operator's native tool profile for this instance. */
  nativeTools: NativeToolProfile;
}

/** Turns one run's stdout lines into parts; throws a DriverError for failures. */
export interface CliStreamParser {
  line(text: string): ProviderPart[];
  /** The process ended: yield the closing parts (usage, finish) or throw the classified failure. */
  exit(code: number | null, signal: NodeJS.Signals | null, stderrTail: string): ProviderPart[];
}

/** How a warm process is spawned: its own workspace and env, fixed for its lifetime. */
export interface WarmSpawn {
  binary: string;
  env: Record<string, string>;
  cwd: string;
  /** The process's private workspace root, for its settings files. */
  root: string;
  /** The model, for modes that fix it per process (`perModel`). */
  model: string;
  /** The per-run output bound, for single-use processes (one run = the process's output). */
  outputLimitBytes: number;
  killGraceMs?: number;
}

/** One run on a warm process: a fresh thread/session in its own working directory. */
export interface WarmRun {
  model: string;
  prompt: string;
  cwd: string;
  outputLimitBytes: number;
}

/** A started long-lived CLI; a run that does not end cleanly must leave it closed. */
export interface WarmSession extends WarmProcess {
  run(run: WarmRun, signal: AbortSignal): AsyncGenerator<ProviderPart>;
}

/** A run under a native tool profile on the CLI's long-lived protocol, which carries its permission requests. */
export interface NativeSessionContext {
  profile: Exclude<NativeToolProfile, 'off'>;
  /** Puts one native action the CLI asks about through the run's approval gate. */
  relay: NativeRelay;
  bridge?: ToolBridge;
}

/** The CLI's long-lived mode, where it has one that isolates runs. */
export interface WarmMode {
  textStreaming: boolean;
  /** The model is chosen when the process starts, so processes are pooled per model. */
  perModel: boolean;
  /** A process serves one run only; the pool keeps a started spare (started after each run). */
  singleUse?: boolean;
  start(spawn: WarmSpawn, signal: AbortSignal): Promise<WarmSession>;
}

export interface CliDialect {
  kind: string;
  vendor: string;
  product: string;
  defaultName: string;
  defaultBinary: string;
  /** Variable naming the CLI's account directory (e.g. CODEX_HOME). */
  accountVariable: string;
  minimumVersion: string;
  textStreaming: boolean;
  parseVersion(output: string): string | undefined;
  /** Switches for probes too (no telemetry or update checks while asking for status). */
  safetyEnv: Record<string, string>;
  plan(context: CliRunContext): CliRunPlan;
  parser(bridge: ToolBridge | undefined, nativeTools: NativeToolProfile): CliStreamParser;
  /** Who must own the run directory and its ancestors for the CLI to honour its files (default `owner-or-root`). */
  runFilesOwner?: OwnerRule;
  /** Native tool profiles besides `off` this kind supports. */
  nativeToolProfiles: readonly Exclude<NativeToolProfile, 'off'>[];
  /** The bridge tool through which the CLI asks permission for a native action, relayed by `relay`. */
  permissionTool?(relay: NativeRelay): BridgeTool;
  /**
   * Kinds whose permission prompts only exist in the long-lived protocol: a process of that
   * mode started for this run alone (never pooled), its requests relayed.
   */
  nativeSession?(spawn: WarmSpawn, context: NativeSessionContext, signal: AbortSignal): Promise<WarmSession>;
  /** Sign-in state and model catalog from the CLI's own non-generating commands. */
  status(probe: CliProbe, signal: AbortSignal): Promise<CliStatus>;
  warm?: WarmMode;
}

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

export class CliProviderAdapter implements ProviderAdapter {
  readonly info: ProviderInfo;
  private readiness: Promise<string> | undefined;
  private readonly pool: WarmPool<WarmEntry> | undefined;

  constructor(
    private readonly dialect: CliDialect,
    private readonly options: CliProviderOptions = {},
  ) {
    const warm = options.warm && dialect.warm ? dialect.warm : undefined;
    this.pool = warm && options.warm ? new WarmPool(options.warm.processes, options.warm.idleMs) : undefined;
    this.info = {
      id: options.id ?? dialect.kind,
      name: options.name ?? dialect.defaultName,
      vendor: dialect.vendor,
      authMode: 'cli-session',
      // Every kind takes the run's tools through the MCP bridge.
      capabilities: { tools: true, textStreaming: warm ? warm.textStreaming : dialect.textStreaming },
      models: options.models ?? [],
    };
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    signal.throwIfAborted();
    const withTools = request.tools.length > 0;
    if (withTools && !request.callTool) throw new DriverError('UNSUPPORTED_TOOLS', `${this.dialect.product} runs do not support tools.`);
    const nativeTools = this.options.nativeTools ?? 'off';
    if (this.pool && !withTools && nativeTools === 'off') {
      yield* this.streamWarm(this.pool, request, signal);
      return;
    }
    const workspace = await this.createWorkspace();
    // A failed tool call (validation, denial, limit) stops the CLI and ends the step with that error.
    const toolFailure = new AbortController();
    const relay: NativeRelay = (call) => relayNativePermission(request, this.dialect.product, call);
    const permissionTool = nativeTools === 'off' ? undefined : this.dialect.permissionTool?.(relay);
    const bridge =
      withTools || permissionTool
        ? await startToolBridge(request.tools, request.callTool, (error) => toolFailure.abort(error), permissionTool ? [permissionTool] : [])
        : undefined;
    try {
      const env = await this.environment(workspace, {});
      await this.ensureReady(env, workspace.workDir, signal);
      if (nativeTools !== 'off' && this.dialect.nativeSession) {
        yield* this.streamNativeSession(this.dialect.nativeSession, request, workspace, { profile: nativeTools, relay, ...(bridge ? { bridge } : {}) }, AbortSignal.any([signal, toolFailure.signal]));
        return;
      }
      const plan = this.dialect.plan({ model: request.model, prompt: renderPrompt(request), request, workspace, nativeTools, ...(bridge ? { bridge } : {}) });
      for (const [path, content] of Object.entries(plan.files ?? {})) await writeFile(join(workspace.root, path), content, { mode: 0o600 });
      const parser = this.dialect.parser(bridge, nativeTools);
      const process = runCli(
        {
          binary: this.binary,
          args: plan.args,
          env: await this.environment(workspace, plan.env),
          cwd: workspace.workDir,
          stdin: plan.stdin,
          ...(this.options.outputLimitBytes === undefined ? {} : { outputLimitBytes: this.options.outputLimitBytes }),
          ...(this.options.killGraceMs === undefined ? {} : { killGraceMs: this.options.killGraceMs }),
        },
        AbortSignal.any([signal, toolFailure.signal]),
      );
      for await (const output of process) {
        const parts = output.type === 'line' ? parser.line(output.line) : parser.exit(output.code, output.signal, output.stderrTail);
        for (const part of parts) yield part;
      }
    } finally {
      await bridge?.close();
      await workspace.remove();
    }
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  /** The run on an idle warm process (or a newly started one), which goes back to the pool only if it ended cleanly. */
  private async *streamWarm(pool: WarmPool<WarmEntry>, request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    const runSpace = await this.createWorkspace();
    const run = { model: request.model, prompt: renderPrompt(request), cwd: runSpace.workDir, outputLimitBytes: this.options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES };
    const warm = this.dialect.warm!;
    const key = warm.perModel ? request.model : '';
    let entry = pool.take(key);
    let pooled = entry !== undefined;
    if (warm.singleUse) this.startSpare(pool, key, request.model);
    try {
      for (;;) {
        entry ??= await this.startWarm(request.model, signal);
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

  private async *streamNativeSession(start: NonNullable<CliDialect['nativeSession']>, request: ProviderRequest, workspace: RunWorkspace, context: NativeSessionContext, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    const outputLimitBytes = this.options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    const env = await this.environment(workspace, this.dialect.safetyEnv);
    const spawn = { binary: this.binary, env, cwd: workspace.workDir, root: workspace.root, model: request.model, outputLimitBytes, ...(this.options.killGraceMs === undefined ? {} : { killGraceMs: this.options.killGraceMs }) };
    const session = await start(spawn, context, signal);
    try {
      yield* session.run({ model: request.model, prompt: renderPrompt(request), cwd: workspace.workDir, outputLimitBytes }, signal);
    } finally {
      await session.close();
    }
  }

  /** Starts a spare in the background for the next run; a failure only means that run starts cold. */
  private startSpare(pool: WarmPool<WarmEntry>, key: string, model: string): void {
    this.startWarm(model, new AbortController().signal).then(
      (spare) => pool.give(key, spare, spare.alive),
      () => undefined,
    );
  }

  private async startWarm(model: string, signal: AbortSignal): Promise<WarmEntry> {
    const workspace = await this.createWorkspace();
    try {
      const env = await this.environment(workspace, this.dialect.safetyEnv);
      await this.ensureReady(env, workspace.workDir, signal);
      const outputLimitBytes = this.options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
      const spawn = { binary: this.binary, env, cwd: workspace.workDir, root: workspace.root, model, outputLimitBytes, ...(this.options.killGraceMs === undefined ? {} : { killGraceMs: this.options.killGraceMs }) };
      return new WarmEntry(await this.dialect.warm!.start(spawn, signal), workspace);
    } catch (error) {
      await workspace.remove();
      throw error;
    }
  }

  /** Version and sign-in state, never a generation call; bounded by the caller's signal. */
  async inspect(signal: AbortSignal): Promise<ProviderInspection> {
    let workspace: RunWorkspace;
    try {
      workspace = await this.createWorkspace();
    } catch (error) {
      // No folder where the CLI would honour its run files: discovery says why runs are refused.
      return inspectionFromFailure(error);
    }
    try {
      const env = await this.environment(workspace, this.dialect.safetyEnv);
      let version: string;
      try {
        version = await this.ensureReady(env, workspace.workDir, signal);
      } catch (error) {
        return inspectionFromFailure(error);
      }
      const probe: CliProbe = { binary: this.binary, env, cwd: workspace.workDir, accountDirectory: env[this.dialect.accountVariable] ?? env.HOME, product: this.dialect.product };
      return inspectionFromStatus(this.dialect.product, version, await this.dialect.status(probe, signal), this.info.models);
    } finally {
      await workspace.remove();
    }
  }

  /** Checked before every run: the CLI must honour the run's private files where they are written. */
  private createWorkspace(): Promise<RunWorkspace> {
    return createRunWorkspace({ ownerRule: this.dialect.runFilesOwner ?? 'owner-or-root', product: this.dialect.product, ...(this.options.runBases ? { bases: this.options.runBases } : {}) });
  }

  private get binary(): string {
    return this.options.binary ?? this.dialect.defaultBinary;
  }

  private ensureReady(env: Record<string, string>, cwd: string, signal: AbortSignal): Promise<string> {
    this.readiness ??= checkReadiness(
      { binary: this.binary, env, cwd, product: this.dialect.product, minimumVersion: this.dialect.minimumVersion, parseVersion: (output) => this.dialect.parseVersion(output) },
      signal,
    ).catch((error: unknown) => {
      this.readiness = undefined;
      throw error;
    });
    return this.readiness;
  }

  private async environment(workspace: RunWorkspace, adapterEnv: Record<string, string>): Promise<Record<string, string>> {
    const account = this.options.accountDirectory;
    return childEnvironment({
      ...(this.options.hostEnvironment === undefined ? {} : { host: this.options.hostEnvironment }),
      // With a dedicated account directory nothing of the user's home is visible to the CLI.
      home: account === undefined ? (this.options.hostEnvironment?.HOME ?? homedir()) : workspace.root,
      tmpDir: workspace.tmpDir,
      configured: (await this.options.environment?.()) ?? {},
      adapter: { ...(account === undefined ? {} : { [this.dialect.accountVariable]: account }), ...adapterEnv },
    });
  }
}
