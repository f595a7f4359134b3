/**
 * Supervision of one CLI child process: spawned without a shell in its own process group,
 * the prompt written to stdin (never argv) and stdin then closed, stdout split into lines,
 * stdout+stderr bounded, and the whole group stopped (TERM, then KILL after a grace period)
 * on cancel, on early exit of the consumer, and after the leader exits, so no descendant
 * outlives the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { DriverError } from '../../protocol/errors.js';

export const DEFAULT_OUTPUT_LIMIT_BYTES = 2_000_000;
const STDERR_TAIL_BYTES = 65_536;
const DEFAULT_KILL_GRACE_MS = 2_000;

export interface CliSpawnOptions {
  binary: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Written to stdin, which is then closed; `null` closes stdin at once; an `OpenStdin` stays open for the caller. */
  stdin: string | null | OpenStdin;
  outputLimitBytes?: number;
  killGraceMs?: number;
}

export type CliOutput =
  | { type: 'line'; line: string }
  /** Stderr is kept privately for classification and never put in public messages. */
  | { type: 'exit'; code: number | null; signal: NodeJS.Signals | null; stderrTail: string };

type Pending = CliOutput | { type: 'failure'; error: unknown };

/** Runs a CLI and yields its stdout lines (blank ones skipped), then its exit. */
export async function* runCli(options: CliSpawnOptions, signal: AbortSignal): AsyncGenerator<CliOutput> {
  signal.throwIfAborted();
  const limit = options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
  const queue: Pending[] = [];
  let wake: (() => void) | undefined;
  const push = (item: Pending) => {
    queue.push(item);
    wake?.();
  };

  const child = spawn(options.binary, options.args, {
    cwd: options.cwd,
    env: options.env,
    detached: process.platform !== 'win32',
    shell: false,
    windowsHide: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const group = new ProcessGroup(child, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);

  let outputBytes = 0;
  let stderrTail = '';
  const countOutput = (chunk: Buffer) => {
    outputBytes += chunk.length;
    if (outputBytes > limit && !group.stopping) {
      push({ type: 'failure', error: new DriverError('CLI_OUTPUT_LIMIT', 'The CLI produced more output than the limit allows.') });
      group.stop();
    }
  };

  const decoder = new StringDecoder('utf8');
  let partial = '';
  const emitLines = (text: string) => {
    partial += text;
    let newline = partial.indexOf('\n');
    while (newline !== -1) {
      const line = partial.slice(0, newline).replace(/\r$/, '');
      partial = partial.slice(newline + 1);
      if (line.trim() !== '') push({ type: 'line', line });
      newline = partial.indexOf('\n');
    }
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    countOutput(chunk);
    if (!group.stopping) emitLines(decoder.write(chunk));
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    countOutput(chunk);
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
  });
  child.stdin!.on('error', () => {
    // The CLI may exit before reading its stdin; its exit status tells what happened.
  });
  child.on('error', (error: NodeJS.ErrnoException) => {
    const code = error.code === 'ENOENT' || error.code === 'EACCES' ? 'CLI_UNAVAILABLE' : 'CLI_FAILED';
    push({ type: 'failure', error: new DriverError(code, code === 'CLI_UNAVAILABLE' ? 'The CLI binary was not found or is not executable.' : 'The CLI could not be started.', { cause: error }) });
  });
  child.on('close', (code, exitSignal) => {
    if (!group.stopping) emitLines(decoder.end() + '\n');
    push({ type: 'exit', code, signal: exitSignal, stderrTail });
  });
  // Once the leader is gone, nothing of the group may stay behind (it would also hold the pipes open).
  child.on('exit', () => group.sweep());

  const onAbort = () => {
    push({ type: 'failure', error: signal.reason });
    group.stop();
  };
  signal.addEventListener('abort', onAbort, { once: true });

  if (options.stdin instanceof OpenStdin) options.stdin.attach(child.stdin!);
  else if (options.stdin === null) child.stdin!.end();
  else child.stdin!.end(options.stdin);

  try {
    for (;;) {
      if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const item = queue.shift()!;
      if (item.type === 'failure') throw item.error;
      yield item;
      if (item.type === 'exit') return;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    await group.stopAndWait();
  }
}

/**
 * Stdin kept open for a conversation with the CLI (JSON-RPC modes, or a warm process that
 * receives its prompt later). Writes made before the child exists are queued.
 */
export class OpenStdin {
  private target: Writable | undefined;
  private queued: string[] = [];
  private ended = false;

  write(text: string): void {
    if (this.ended) return;
    if (this.target) this.target.write(text);
    else this.queued.push(text);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.target?.end();
  }

  attach(target: Writable): void {
    this.target = target;
    for (const text of this.queued) target.write(text);
    this.queued = [];
    if (this.ended) target.end();
  }
}

/** The child's process group: polite stop, forced stop after the grace period, final sweep. */
class ProcessGroup {
  stopping = false;
  private readonly closed: Promise<void>;
  private killTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly child: ChildProcess,
    private readonly graceMs: number,
  ) {
    this.closed = new Promise((resolve) => {
      if (child.pid === undefined) return resolve();
      child.once('close', () => resolve());
      child.once('error', () => {
        if (child.pid === undefined || child.exitCode !== null) resolve();
      });
    });
  }

  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.signal('SIGTERM');
    this.killTimer = setTimeout(() => this.signal('SIGKILL'), this.graceMs);
    this.killTimer.unref();
  }

  sweep(): void {
    this.signal('SIGKILL');
  }

  async stopAndWait(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.stop();
    await this.closed;
    clearTimeout(this.killTimer);
  }

  private signal(name: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      if (process.platform === 'win32') this.child.kill(name);
      else process.kill(-pid, name);
    } catch {
      // ESRCH: the group is already gone.
    }
  }
}
