/**
 * Runs as the operator sees them from the store, whichever replica serves or served them: the
 * active list (runs in flight on any replica, and background runs waiting checkpointed for a
 * person), and a run's page (its steps and tokens folded from its committed events, and how it
 * ended from its usage record). This replica's own runs are known better by its run monitor
 * (live steps and tokens), which the callers ask first.
 */
import type { OperatorRun, OperatorRunDetail } from '../../protocol/schemas.js';
import type { UsageRecord } from '../../runtime/usage-record.js';
import type { ActiveRunRow, StateStore } from '../../store/store.js';
import { finishedRun } from './operator-runs.js';
import { RunTimeline } from './run-timeline.js';

/** Events read to fold a run's page: a run with more shows its first steps only. */
export const MAX_PAGE_EVENTS = 10_000;
const EVENTS_PER_READ = 1000;
const BYTES_PER_READ = 4_000_000;

type Store = Pick<StateStore, 'runs' | 'usage'>;

/** Row states of a run that started and has not finished (a finished run has a usage record). */
const IN_FLIGHT: ReadonlySet<string> = new Set(['running', 'waiting']);

/** An active run of any replica; steps and tokens are on its page (its list entry has none). */
export function activeRun(row: ActiveRunRow): OperatorRun {
  return {
    runId: row.runId,
    subject: row.subject,
    provider: row.provider,
    model: row.model,
    state: 'running',
    startedAt: new Date(row.createdAt).toISOString(),
    steps: 0,
    usage: {},
    ...(row.waiting ? { waiting: { kind: row.waiting.kind, since: new Date(row.waiting.since).toISOString(), tool: row.waiting.tool, id: row.waiting.id } } : {}),
    ...(row.mode === 'background' ? { jobId: row.id } : {}),
  };
}

/**
 * A run's page from the store: undefined when it has not started or the store has neither its
 * record nor its usage record. `record`: its usage record, when the caller read it already.
 */
export async function storedDetail(store: Store, runId: string, record?: UsageRecord): Promise<OperatorRunDetail | undefined> {
  const row = await store.runs.read(runId);
  record ??= (await store.usage.finished({ limit: 1, runId })).records[0];
  if (!row || row.expired) return record && { run: finishedRun(record) };
  const timeline = new RunTimeline();
  for (let cursor = 0, read = 0; read < MAX_PAGE_EVENTS; ) {
    const events = await store.runs.events(row, cursor, Math.min(EVENTS_PER_READ, MAX_PAGE_EVENTS - read), BYTES_PER_READ);
    for (const event of events) timeline.apply(event);
    read += events.length;
    if (events.length === 0) break;
    cursor = events.at(-1)!.sequence;
  }
  const jobId = row.mode === 'background' ? row.id : undefined;
  // Not started yet (a queued job): nothing to show but its job.
  if (!record && !IN_FLIGHT.has(row.state)) return undefined;
  const run: OperatorRun = record
    ? finishedRun(record, jobId ? { jobId } : {})
    : {
        runId,
        subject: row.subject,
        provider: row.provider,
        model: row.model,
        state: 'running',
        startedAt: new Date(row.createdAt).toISOString(),
        steps: timeline.steps.at(-1)?.step ?? 0,
        usage: { ...timeline.usage },
        ...(timeline.waiting ? { waiting: timeline.waiting } : {}),
        ...(jobId ? { jobId } : {}),
      };
  return { run, steps: timeline.snapshot() };
}
