/**
 * Non-generating probes of a CLI (version, sign-in status, model catalog): each runs under
 * the same supervision as a run, in the caller's private workspace and restricted env, with
 * its output bounded and never retained beyond what the probe parses.
 */
import type { CliOutput } from './process.js';
import { OpenStdin, runCli } from './process.js';
import { parseEventLine, type JsonRecord } from './events.js';

const PROBE_OUTPUT_LIMIT = 4_000_000;

export interface CliProbe {
  binary: string;
  env: Record<string, string>;
  cwd: string;
  /** The CLI's account directory (or HOME when none is configured). */
  accountDirectory: string | undefined;
  product: string;
}

/** What a CLI says about itself without generating: sign-in state and, where exposed, its models. */
export interface CliStatus {
  /** `undefined` when the CLI has no non-generating way to tell. */
  signedIn: boolean | undefined;
  models?: string[];
  /** Whether `models` is the whole catalog (no page was left unread). */
  complete?: boolean;
}

/** Runs a one-shot command with stdin closed; returns its exit code and stdout. */
export async function runCommand(probe: CliProbe, args: string[], signal: AbortSignal): Promise<{ code: number | null; stdout: string }> {
  let stdout = '';
  let code: number | null = null;
  for await (const item of runCli({ binary: probe.binary, args, env: probe.env, cwd: probe.cwd, stdin: null, outputLimitBytes: PROBE_OUTPUT_LIMIT }, signal)) {
    if (item.type === 'line') stdout += `${item.line}\n`;
    else code = item.code;
  }
  return { code, stdout };
}

/**
 * A line-delimited JSON conversation with a long-lived CLI mode: `open` writes the first
 * messages, `reply` sees each JSON line and answers with more messages or `done`. The
 * process group is stopped when the conversation ends. Returns false if the CLI exited first.
 */
export async function converse(
  probe: CliProbe,
  args: string[],
  open: JsonRecord[],
  reply: (message: JsonRecord) => JsonRecord[] | 'done',
  signal: AbortSignal,
): Promise<boolean> {
  const stdin = new OpenStdin();
  const send = (messages: JsonRecord[]) => {
    for (const message of messages) stdin.write(`${JSON.stringify(message)}\n`);
  };
  send(open);
  const output: AsyncGenerator<CliOutput> = runCli({ binary: probe.binary, args, env: probe.env, cwd: probe.cwd, stdin, outputLimitBytes: PROBE_OUTPUT_LIMIT }, signal);
  for await (const item of output) {
    if (item.type === 'exit') return false;
    const answer = reply(parseEventLine(item.line, probe.product));
    if (answer === 'done') return true;
    send(answer);
  }
  return false;
}
