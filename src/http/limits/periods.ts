/**
 * Budget periods: calendar ones (`day`, `week` from Monday, `month`) aligned in an IANA time
 * zone, and rolling ones (the last `rollingMs`, counted in 60 buckets, so the oldest bucket is
 * counted whole: never less than the period's spend).
 */
export type BudgetPeriod = 'day' | 'week' | 'month' | { rollingMs: number };

/** Where a period's counter stands at one moment. */
export interface PeriodWindow {
  /** The counter's window (calendar: the period's start; rolling: the current bucket's start). */
  window: number;
  /** Rolling only: the first bucket still counted. */
  since?: number;
  /** When the period resets (calendar) or its oldest counted bucket stops counting (rolling), epoch ms. */
  resetAt: number;
}

const MINUTE_MS = 60_000;
const ROLLING_BUCKETS = 60;

export function periodKey(period: BudgetPeriod): string {
  return typeof period === 'string' ? period : `rolling-${period.rollingMs}`;
}

export function minuteWindow(now: number): PeriodWindow {
  const window = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  return { window, resetAt: window + MINUTE_MS };
}

/** The calendar period last computed per zone and period: reused until it ends (the zone's rules are read once a period). */
const calendar = new Map<string, PeriodWindow>();

export function periodWindow(period: BudgetPeriod, now: number, timeZone: string): PeriodWindow {
  if (typeof period === 'string') {
    const key = `${timeZone}\u0000${period}`;
    const cached = calendar.get(key);
    if (cached && now >= cached.window && now < cached.resetAt) return cached;
    const computed = calendarWindow(period, now, timeZone);
    if (calendar.size > 256) calendar.clear();
    calendar.set(key, computed);
    return computed;
  }
  const bucket = Math.max(1000, Math.ceil(period.rollingMs / ROLLING_BUCKETS));
  const since = Math.floor((now - period.rollingMs) / bucket) * bucket;
  return { window: Math.floor(now / bucket) * bucket, since, resetAt: since + bucket + period.rollingMs };
}

function calendarWindow(period: 'day' | 'week' | 'month', now: number, timeZone: string): PeriodWindow {
  const { year, month, day } = localDate(now, timeZone);
  let start: [number, number, number];
  let next: [number, number, number];
  if (period === 'day') {
    start = [year, month, day];
    next = [year, month, day + 1];
  } else if (period === 'week') {
    const weekday = (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7;
    start = [year, month, day - weekday];
    next = [year, month, day - weekday + 7];
  } else {
    start = [year, month, 1];
    next = [year, month + 1, 1];
  }
  return { window: zonedMidnight(start, timeZone), resetAt: zonedMidnight(next, timeZone) };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let found = formatters.get(timeZone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, found);
  }
  return found;
}

function localParts(time: number, timeZone: string): Record<string, number> {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(time)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return parts;
}

function localDate(time: number, timeZone: string): { year: number; month: number; day: number } {
  const { year, month, day } = localParts(time, timeZone);
  return { year: year!, month: month!, day: day! };
}

/** The zone's offset from UTC at `time`, in ms (local wall time minus UTC). */
function offsetAt(time: number, timeZone: string): number {
  const p = localParts(time, timeZone);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall - Math.floor(time / 1000) * 1000;
}

/** Local midnight of a (possibly overflowing) date in the zone, as epoch ms. */
function zonedMidnight([year, month, day]: [number, number, number], timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day);
  const first = wall - offsetAt(wall, timeZone);
  const second = wall - offsetAt(first, timeZone);
  return second;
}
