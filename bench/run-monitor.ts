/**
 * What watching costs a run (src/extensions/operator/run-monitor.ts): events per second through
 * `RunMonitor.track` with no watcher, with watchers that keep up, and with watchers that never
 * read (they are dropped once their queue is full; the run must not slow down or buffer
 * without bound). Prints one JSON object; `--events N` (default 200,000), `--watchers N` (8).
 *
 *   npx tsx bench/run-monitor.ts
 */
import { RunMonitor, WATCHER_QUEUE_LIMIT } from '../src/extensions/operator/run-monitor.js';
import type { RunEvent } from '../src/protocol/schemas.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const EVENTS = option('events', 200_000);
const WATCHERS = option('watchers', 8);
const RUN_ID = '00000000-0000-4000-8000-000000000001';
const timestamp = new Date().toISOString();

async function* run(count: number): AsyncGenerator<RunEvent> {
  yield { type: 'run.started', runId: RUN_ID, sequence: 1, timestamp, provider: 'mock', model: 'demo' };
  for (let sequence = 2; sequence < count; sequence += 1) yield { type: 'text.delta', runId: RUN_ID, sequence, timestamp, text: 'token ' };
  yield { type: 'run.completed', runId: RUN_ID, sequence: count, timestamp, result: { runId: RUN_ID, provider: 'mock', model: 'demo', text: '', usage: {}, steps: 1, finishReason: 'stop' } };
}

async function measure(mode: 'none' | 'reading' | 'stalled'): Promise<{ mode: string; eventsPerSecond: number; droppedWatchers: number; heapGrowthMb: number }> {
  const monitor = new RunMonitor();
  const tracked = monitor.track(run(EVENTS), { subject: 'bench' });
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = process.hrtime.bigint();
  await tracked.next();
  const readers: Promise<void>[] = [];
  const stop = new AbortController();
  if (mode !== 'none') {
    for (let index = 0; index < WATCHERS; index += 1) {
      const events = monitor.watch(RUN_ID, stop.signal);
      if (mode === 'reading') readers.push((async () => {
        for await (const _event of events);
      })());
    }
  }
  for await (const _event of tracked);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const heapGrowthMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  stop.abort();
  await Promise.all(readers);
  return { mode, eventsPerSecond: Math.round(EVENTS / seconds), droppedWatchers: monitor.dropped, heapGrowthMb: Number(heapGrowthMb.toFixed(1)) };
}

const rows = [];
for (const mode of ['none', 'reading', 'stalled'] as const) rows.push(await measure(mode));
console.log(JSON.stringify({ bench: 'run-monitor', events: EVENTS, watchers: WATCHERS, watcherQueueLimit: WATCHER_QUEUE_LIMIT, rows }, null, 2));
