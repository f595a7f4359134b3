/**
 * Reading back any run: its info (state, cursor, result or error, usage) and pages of its
 * committed events, for its owning subject only. A token reads a run whose resources it may
 * use — an attached run's provider; a background run's provider, tools and corpus, and the
 * `read` job grant, as `POST /v1/jobs/read` needs.
 */
import { DriverError } from '../../protocol/errors.js';
import type { RunEventPage, RunEventsRequest, RunInfo, RunState } from '../../protocol/schemas.js';
import { requireGrant, requireResources, type Principal } from '../../http/access.js';
import { providerNotGranted } from '../../shared/grants.js';
import type { RunRecordRow, StateStore } from '../../store/store.js';

export const MAX_PAGE_EVENTS = 100;
export const MAX_PAGE_BYTES = 1_500_000;

type Reader = Pick<Principal, 'subject' | 'providers' | 'tools' | 'grants'>;

const FINISHED: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

export class RunRecords {
  constructor(
    private readonly store: Pick<StateStore, 'runs' | 'usage'>,
    /** How long idempotent runs' records are kept (their expiry), when that extension is on. */
    private readonly operationRetentionMs: number | undefined,
  ) {}

  /** A run of the reader's subject that it may read; others are RUN_NOT_FOUND, without telling whether they exist. */
  async load(runId: string, reader: Reader): Promise<RunRecordRow> {
    const row = await this.store.runs.read(runId);
    if (!row || row.subject !== reader.subject || row.expired) throw notFound();
    if (row.mode === 'background') {
      requireGrant(reader, { name: 'jobs', operation: 'read' });
      requireResources(row.request!, reader);
    } else if (!reader.providers.has(row.provider)) {
      throw providerNotGranted(row.provider);
    }
    return row;
  }

  async read(runId: string, reader: Reader): Promise<RunInfo> {
    return this.info(await this.load(runId, reader));
  }

  async events(request: RunEventsRequest, reader: Reader): Promise<RunEventPage> {
    const before = await this.load(request.runId, reader);
    this.checkCursor(request.after, before.cursor);
    const events = await this.store.runs.events(before, request.after, request.limit ?? MAX_PAGE_EVENTS, MAX_PAGE_BYTES);
    // Read after the events, so the page never holds an event beyond the run's cursor.
    const row = (await this.store.runs.read(request.runId)) ?? before;
    const nextCursor = events.at(-1)?.sequence ?? request.after;
    return { run: await this.info(row), events, nextCursor, hasMore: nextCursor < row.cursor };
  }

  /** The cursor (`after`, or the stream's `Last-Event-ID`) must not be past the run's last committed event. */
  checkCursor(after: number, cursor: number, name = 'The cursor'): void {
    if (after > cursor) throw new DriverError('INVALID_RUN_CURSOR', `${name} ${after} is past the run's last event (${cursor}).`);
  }

  private async info(row: RunRecordRow): Promise<RunInfo> {
    const state = stateOf(row);
    const info: RunInfo = {
      runId: row.runId,
      mode: row.mode,
      ...(row.mode === 'background' ? { jobId: row.id } : {}),
      provider: row.provider,
      model: row.model,
      state,
      cursor: row.cursor,
      createdAt: new Date(row.createdAt).toISOString(),
      updatedAt: new Date(row.updatedAt).toISOString(),
    };
    if (!FINISHED.has(state)) return info;
    const expiresAt = row.keyed ? (this.operationRetentionMs === undefined ? undefined : row.updatedAt + this.operationRetentionMs) : row.expiresAt;
    if (expiresAt !== undefined) info.expiresAt = new Date(expiresAt).toISOString();
    const [terminal] = row.cursor > 0 ? await this.store.runs.events(row, row.cursor - 1, 1, Number.MAX_SAFE_INTEGER) : [];
    if (terminal?.type === 'run.completed') {
      info.result = terminal.result;
      info.usage = terminal.result.usage;
    } else if (terminal?.type === 'run.failed' || terminal?.type === 'run.cancelled') {
      info.error = terminal.error;
    }
    if (!info.usage) {
      const { records } = await this.store.usage.finished({ runId: row.runId, limit: 1 });
      if (records[0]?.usage) info.usage = records[0].usage;
    }
    return info;
  }
}

/** The wire state of a row, whichever writer keeps it: an idempotent run cut off (`uncertain`) was interrupted. */
function stateOf(row: RunRecordRow): RunState {
  if (row.state === 'uncertain') return 'interrupted';
  return row.state as RunState;
}

const notFound = () => new DriverError('RUN_NOT_FOUND', 'No such run, or its record\'s retention ended.');
