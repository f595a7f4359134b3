/**
 * One adapter for every CLI kind: readiness once, a private workspace and a restricted
 * environment per run, the prompt on stdin, and the CLI's line stream turned into parts by
 * the kind's dialect. Each dialect only knows its CLI's flags, files and event vocabulary.
 */
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderAdapter, ProviderContinuation, ProviderInfo, ProviderInspection, ProviderPart, ProviderRequest } from '../contract/v1.js';
import type { CliProviderOptions } from './config.js';
import type { CliDialect } from './dialect.js';
import { childEnvironment } from './environment.js';
import { inspectionFromFailure, inspectionFromStatus } from './health.js';
import type { CliInstance } from './instance.js';
import { startToolBridge, type ToolBridge } from './mcp-bridge.js';
import { streamNativeSession } from './native-session.js';
import { relayNativePermission, type NativeRelay } from './native-tools.js';
import { streamOneShot } from './one-shot.js';
import type { CliProbe } from './probe.js';
import { checkReadiness } from './readiness.js';
import { WarmRuns } from './warm-runs.js';
import { openSessionFolder, removeSessionFolder, sweepSessionFolders, type SessionFolder } from './session-folder.js';
import { streamSessionTurn } from './session-turn.js';
import { createRunWorkspace, type RunWorkspace, type WorkspaceOptions } from './workspace.js';

export type {
  CliDialect,
  CliRunContext,
  CliResume,
  CliRunPlan,
  CliStreamParser,
  NativeSessionContext,
  WarmMode,
  WarmRun,
  WarmSession,
  WarmSpawn,
} from './dialect.js';

/**
 * Sessions with a turn running in this process (never swept, by any instance sharing the
 * base), and those deleted meanwhile (their folder goes when the turn ends). Session ids are
 * UUIDs, so instances can share the sets.
 */
const activeSessions = new Set<string>();
const forgotten = new Set<string>();

export class CliProviderAdapter implements ProviderAdapter, CliInstance {
  readonly info: ProviderInfo;
  private readiness: Promise<string> | undefined;
  /** The warm-pool mode, when the config and the kind both offer it. */
  private readonly warm: WarmRuns | undefined;

  constructor(
    readonly dialect: CliDialect,
    private readonly options: CliProviderOptions = {},
  ) {
    const warm = options.warm && dialect.warm ? dialect.warm : undefined;
    this.warm = warm && options.warm ? new WarmRuns(this, warm, options.warm) : undefined;
    this.info = {
      id: options.id ?? dialect.kind,
      name: options.name ?? dialect.defaultName,
      vendor: dialect.vendor,
      authMode: 'cli-session',
      // Every kind takes the run's tools through the MCP bridge.
      capabilities: { tools: true, textStreaming: warm ? warm.textStreaming : dialect.textStreaming, nativeContinuation: this.resumable },
      models: options.models ?? [],
    };
  }

  /**
   * One run in one of four modes: a native-mode session turn (the CLI's own conversation in
   * the session's folder), a warm pooled process (no tools, no native profile), a native
   * session (a native tool profile on a kind that has one), or a one-shot process.
   */
  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    signal.throwIfAborted();
    const withTools = request.tools.length > 0;
    if (withTools && !request.callTool) throw new DriverError('UNSUPPORTED_TOOLS', `${this.dialect.product} runs do not support tools.`);
    const nativeTools = this.options.nativeTools ?? 'off';
    // Native tool profiles on a long-lived protocol keep no conversation between runs: those turns replay.
    const continuation = this.resumable && !(nativeTools !== 'off' && this.dialect.nativeSession) ? request.continuation : undefined;
    if (!continuation && this.warm && !withTools && nativeTools === 'off') {
      yield* this.warm.stream(request, signal);
      return;
    }
    const session = continuation && (await this.claimSession(continuation));
    let workspace: RunWorkspace | undefined;
    let bridge: ToolBridge | undefined;
    try {
      workspace = session ? session.folder : await this.createWorkspace();
      // A failed tool call (validation, denial, limit) stops the CLI and ends the step with that error.
      const toolFailure = new AbortController();
      const relay: NativeRelay = (call) => relayNativePermission(request, this.dialect.product, call);
      const permissionTool = nativeTools === 'off' ? undefined : this.dialect.permissionTool?.(relay);
      if (withTools || permissionTool) {
        bridge = await startToolBridge(request.tools, request.callTool, (error) => toolFailure.abort(error), permissionTool ? [permissionTool] : []);
      }
      const env = await this.environment(workspace, {});
      await this.ensureReady(env, workspace.workDir, signal);
      const runSignal = AbortSignal.any([signal, toolFailure.signal]);
      if (session && continuation) {
        const prepareHome = (home: string) => this.dialect.resume!.prepareHome(this.options.accountDirectory!, home);
        yield* streamSessionTurn(this, request, continuation, session.folder, { bridge, nativeTools, prepareHome }, runSignal);
      } else if (nativeTools !== 'off' && this.dialect.nativeSession) {
        yield* streamNativeSession(this, this.dialect.nativeSession, request, workspace, { profile: nativeTools, relay, ...(bridge ? { bridge } : {}) }, runSignal);
      } else {
        yield* streamOneShot(this, request, workspace, { bridge, nativeTools }, runSignal);
      }
    } finally {
      await bridge?.close();
      // A session's folder outlives the run (its remove() keeps it); a run workspace goes.
      await workspace?.remove();
      await session?.release();
    }
  }

  async close(): Promise<void> {
    await this.warm?.close();
  }

  /**
   * Native continuation needs a dedicated account directory: the session's private home
   * shares its sign-in, so the CLI's saved conversations never land in the user's own home.
   */
  private get resumable(): boolean {
    return this.dialect.resume !== undefined && this.options.accountDirectory !== undefined;
  }

  /** A session deleted: its folder goes now, or when the turn running for it here ends. */
  async forgetSession(sessionId: string): Promise<void> {
    if (!this.resumable) return;
    if (activeSessions.has(sessionId)) {
      forgotten.add(sessionId);
      return;
    }
    await removeSessionFolder(this.workspaceOptions(), sessionId);
  }

  /** The session's folder for this turn, never swept meanwhile; released (or removed, if deleted meanwhile) when the turn ends. */
  private async claimSession(continuation: ProviderContinuation): Promise<{ folder: SessionFolder; release(): Promise<void> }> {
    const id = continuation.sessionId;
    if (activeSessions.has(id)) throw new DriverError('SESSION_BUSY', 'A turn of this session is running.', { retryable: true });
    activeSessions.add(id);
    const release = async () => {
      activeSessions.delete(id);
      if (forgotten.delete(id)) await removeSessionFolder(this.workspaceOptions(), id);
    };
    try {
      return { folder: await openSessionFolder(this.workspaceOptions(), id, continuation.retentionMs, activeSessions), release };
    } catch (error) {
      await release();
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
  async createWorkspace(): Promise<RunWorkspace> {
    const workspace = await createRunWorkspace(this.workspaceOptions());
    // Session folders of sessions deleted or expired elsewhere go with the runs' sweep (throttled).
    await sweepSessionFolders(dirname(workspace.root), activeSessions);
    return workspace;
  }

  private workspaceOptions(): WorkspaceOptions {
    return { product: this.dialect.product, ...(this.options.runBases ? { bases: this.options.runBases } : {}) };
  }

  get binary(): string {
    return this.options.binary ?? this.dialect.defaultBinary;
  }

  get outputLimitBytes(): number | undefined {
    return this.options.outputLimitBytes;
  }

  get killGraceMs(): number | undefined {
    return this.options.killGraceMs;
  }

  ensureReady(env: Record<string, string>, cwd: string, signal: AbortSignal): Promise<string> {
    this.readiness ??= checkReadiness(
      { binary: this.binary, env, cwd, product: this.dialect.product, minimumVersion: this.dialect.minimumVersion, parseVersion: (output) => this.dialect.parseVersion(output) },
      signal,
    ).catch((error: unknown) => {
      this.readiness = undefined;
      throw error;
    });
    return this.readiness;
  }

  async environment(workspace: RunWorkspace, adapterEnv: Record<string, string>): Promise<Record<string, string>> {
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
