/**
 * How the CLI prints: tables and sentences for a person at a terminal; JSON when asked
 * (`--json`) or when stdout is a pipe or a file, so scripts never parse a table. Errors go to
 * stderr: a readable line on a terminal, else one JSON line `{"error": {code, message, retryable}}`.
 */
import { DriverError, toDriverError } from '../protocol/errors.js';
import type { ProviderHealth } from '../protocol/schemas.js';
import type { UsageSinkReport } from '../extensions/usage/report.js';

/** JSON unless a person reads stdout at a terminal and did not ask for JSON. */
export function wantsJson(options: { json?: boolean }): boolean {
  return options.json === true || !process.stdout.isTTY;
}

/** One JSON line. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function printLines(lines: readonly string[]): void {
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Left-aligned columns two spaces apart; `right` lists the columns aligned right (numbers). */
export function table(header: readonly string[], rows: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string[] {
  const widths = header.map((name, column) => Math.max(name.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (right.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header.map((name) => name.toUpperCase())), ...rows.map(line)];
}

/** `label  value` lines with the labels padded to one width. */
export function fields(entries: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...entries.map(([label]) => label.length));
  return entries.map(([label, value]) => `${label.padEnd(width)}  ${value}`);
}

/** A path or word as a shell reads it back: quoted only when it has to be. */
export function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/** Reports a failure on stderr and exits 1. */
export function fail(error: unknown): never {
  const failure = error instanceof DriverError ? error : toDriverError(error);
  if (process.stderr.isTTY) {
    process.stderr.write(`error: ${failure.message}\n  (${failure.code}${failure.retryable ? ', retryable' : ''}${failure.outcome ? `, outcome ${failure.outcome}` : ''})\n`);
  } else {
    // One line, so a script reads the last line of stderr as the error.
    const info = failure.toJSON();
    process.stderr.write(`${JSON.stringify({ error: { ...info, message: info.message.replace(/\s*\n\s*/g, ' ') } })}\n`);
  }
  process.exit(1);
}

/** A provider's health in a table cell: the status, and the reason unless ready. */
export function healthText(health: ProviderHealth | undefined): string {
  if (!health) return '';
  return health.status === 'ready' || !health.message ? health.status : `${health.status}: ${health.message}`;
}

/** The usage sinks in one line: which, which fail, the webhook spool. */
export function usageLine(usage: UsageSinkReport): string {
  const sinks = usage.sinks.length > 0 ? usage.sinks.join(', ') : 'none';
  const failing = usage.health?.sinks.filter((sink) => !sink.ok).map((sink) => sink.sink) ?? [];
  const spool = usage.spool ? `; spool ${usage.spool.pending} pending, ${usage.spool.rejected} rejected` : '';
  return `${sinks}${failing.length > 0 ? `; failing: ${failing.join(', ')}` : ''}${spool}`;
}
