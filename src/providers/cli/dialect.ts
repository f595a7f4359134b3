/**
 * What a CLI kind supplies (its dialect) and the shapes its run modes exchange with the
 * adapter: the one-shot plan and stream parser, warm processes and native sessions.
 */
import type { ProviderPart, ProviderRequest } from '../contract/v1.js';
import type { BridgeTool, ToolBridge } from './mcp-bridge.js';
import type { NativeRelay, NativeToolProfile } from './native-tools.js';
import type { CliProbe, CliStatus } from './probe.js';
import type { WarmProcess } from './warm-pool.js';
import type { RunWorkspace } from './workspace.js';

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
  /** A native-mode session turn: the CLI keeps its conversation, resuming `resumeId` or starting one as `newId`. */
  conversation?: { resumeId?: string; newId: string };
}

/** Turns one run's stdout lines into parts; throws a DriverError for failures. */
export interface CliStreamParser {
  line(text: string): ProviderPart[];
  /** The process ended: yield the closing parts (usage, finish) or throw the classified failure. */
  exit(code: number | null, signal: NodeJS.Signals | null, stderrTail: string): ProviderPart[];
  /** The CLI conversation the run reported, for kinds that name it themselves (Codex threads). */
  conversationId?(): string | undefined;
}

/**
 * How a kind keeps a session's conversation between runs: the CLI's home for the session's
 * turns is the session's private folder, which shares the account's sign-in and settings but
 * nothing else, so the saved conversation lives only there.
 */
export interface CliResume {
  /** Fills `home` from the account directory and returns the variables that point the CLI at it. */
  prepareHome(account: string, home: string): Promise<Record<string, string>>;
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
  /** Checked before a one-shot run starts, with its final env and cwd: throws (CLI_UNAVAILABLE) when the CLI would ignore the run's files. */
  verifyRun?(env: Record<string, string>, cwd: string): Promise<void>;
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
  /** Kinds that can continue their own conversation in a later run (native-mode sessions). */
  resume?: CliResume;
}
