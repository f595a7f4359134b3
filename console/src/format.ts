/** How the console writes times, durations, ids, errors and JSON. */
import { DriverError } from '../../src/client/index.js';

/** A local time: the time of day for today, with the date otherwise. */
export function time(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const today = date.toDateString() === new Date().toDateString();
  return today ? date.toLocaleTimeString() : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** `850 ms`, `12.4 s`, `3 min 05 s`, `2 h 07 min`, `3 d 4 h`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(Math.floor(seconds % 60)).padStart(2, '0')} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** From `from` until `to`, or until now (the browser's clock) while it runs. */
export function since(from: string, to?: string): number {
  return Math.max(0, (to ? Date.parse(to) : Date.now()) - Date.parse(from));
}

export function shortId(id: string): string {
  return id.length > 13 ? id.slice(0, 8) : id;
}

export function tokens(usage: { inputTokens?: number; outputTokens?: number } | undefined): string {
  return `${(usage?.inputTokens ?? 0).toLocaleString()} / ${(usage?.outputTokens ?? 0).toLocaleString()}`;
}

/** JSON (pretty-printed unless `compact`), cut at `max` characters with a note of how much was left out. */
export function bounded(value: unknown, max: number, compact = false): string {
  const text = (compact ? JSON.stringify(value) : JSON.stringify(value, null, 2)) ?? 'undefined';
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters)`;
}

/** The host refused the token: the session is over. */
export function isAuthFailure(failure: unknown): boolean {
  return failure instanceof DriverError && ['UNAUTHORIZED', 'FORBIDDEN', 'AUTH_REQUIRED'].includes(failure.code);
}

export function describeFailure(failure: unknown): string {
  if (failure instanceof DriverError) {
    if (failure.code === 'FORBIDDEN') return `Forbidden (403 FORBIDDEN): ${failure.message} The console needs a token with "operator": true.`;
    if (failure.code === 'UNAUTHORIZED') return `The host refused this token (401 UNAUTHORIZED).`;
    if (failure.code === 'HOST_UNREACHABLE') return `The host could not be reached: ${failure.message}`;
    return `${failure.code}: ${failure.message}`;
  }
  return `Unexpected failure: ${String(failure)}`;
}
