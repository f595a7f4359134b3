/**
 * Structured logs (pino): one JSON line per request and one per run, with ids, subject,
 * status and duration. The lines are built from an allow-list of fields — never headers,
 * bodies, query strings, raw paths (a path may carry a pasted token), prompts or outputs —
 * and pino's redaction covers the usual secret-bearing keys on top. On a terminal the same
 * lines are printed human-readable.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { UsageRecord } from '../runtime/usage-record.js';

export type HostLogger = Logger;

/** Keys that never print, wherever they appear. */
const REDACT = ['authorization', 'token', 'apiKey', 'secret', 'password', 'input', 'output', 'text', 'instructions', 'history', '*.authorization', '*.token', '*.apiKey', '*.secret', '*.password', '*.input', '*.output', '*.text', '*.instructions', '*.history'];

export interface LoggerOptions {
  /** Where lines go; default stderr. */
  destination?: DestinationStream;
  /** Human-readable lines (default: when stderr is a terminal). */
  pretty?: boolean;
  level?: string;
}

export function createHostLogger(options: LoggerOptions = {}): HostLogger {
  const pretty = options.pretty ?? (options.destination === undefined && process.stderr.isTTY === true);
  const target = options.destination ?? (pino.destination({ fd: 2, sync: true }) as DestinationStream);
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'agenticdriver' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    pretty ? prettyStream(target) : target,
  );
}

/** One request: the route pattern (never the raw target), status, duration, and who asked. */
export interface RequestLine {
  requestId: string;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  subject?: string;
  tokenId?: string;
  /** True when the client went away before the response was complete. */
  aborted?: boolean;
}

export function logRequest(logger: HostLogger, line: RequestLine): void {
  logger.info({ kind: 'request', ...line }, 'request');
}

/** One run, from its usage record: ids, subject, provider, model, status, duration. */
export function logRun(logger: HostLogger, record: UsageRecord): void {
  const line = {
    kind: 'run',
    runId: record.runId,
    subject: record.subject,
    ...(record.tokenId !== undefined ? { tokenId: record.tokenId } : {}),
    provider: record.provider,
    model: record.model,
    status: record.status,
    ...(record.errorCode !== undefined ? { errorCode: record.errorCode } : {}),
    steps: record.steps,
    durationMs: record.durationMs,
  };
  if (record.status === 'failed' || record.status === 'interrupted') logger.warn(line, 'run');
  else logger.info(line, 'run');
}

/** A usage sink failure, under its code (`USAGESTAT_ERROR` / `USAGESTAT_SCHEMA`). */
export function logSinkFailure(logger: HostLogger, failure: { code: string; sink: string; message: string }): void {
  logger.warn({ kind: 'usage-sink', ...failure }, failure.code);
}

/** A tiny formatter instead of pino-pretty: `12:00:01.123 INFO  run runId=… status=completed durationMs=12`. */
function prettyStream(target: DestinationStream): DestinationStream {
  return {
    write(chunk: string) {
      for (const text of chunk.split('\n')) {
        if (text === '') continue;
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(text) as Record<string, unknown>;
        } catch {
          target.write(`${text}\n`);
          continue;
        }
        const { time, level, msg, service: _service, kind: _kind, ...fields } = line;
        const clock = typeof time === 'string' ? time.slice(11, 23) : '';
        const pairs = Object.entries(fields).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
        target.write(`${clock} ${String(level).toUpperCase().padEnd(5)} ${String(msg)} ${pairs.join(' ')}\n`);
      }
    },
  };
}
