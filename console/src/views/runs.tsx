/**
 * Runs: the active runs (live: they start, wait and end on screen) and the finished ones, a
 * page at a time, newest first; both filtered by state, subject, provider and text. The first
 * page of finished runs reloads when the live feed says runs finished (on any replica), at
 * most once a second — each page shown is one answer of the host, with its own next cursor.
 */
import { useState } from 'preact/hooks';
import type { OperatorRun, OperatorRunsRequest } from '../../../src/client/index.js';
import { CopyId, ErrorLine, RunDuration, RunState, Scroll, stepsOf } from '../components.js';
import { time, tokens } from '../format.js';
import { useLive } from '../live.js';
import { useLoad } from '../load.js';
import type { ViewProps } from './shell.js';

const PAGE = 25;
const STATES = ['running', 'waiting', 'completed', 'failed', 'cancelled', 'interrupted'] as const;

interface Filters {
  /** `waiting`: active runs waiting for a person or an application (a view of `running`). */
  state: '' | (typeof STATES)[number];
  subject: string;
  provider: string;
  search: string;
}

const NONE: Filters = { state: '', subject: '', provider: '', search: '' };

/** The same filters the host applies to finished runs, for the live active list. */
function matches(run: OperatorRun, filters: Filters): boolean {
  if (filters.state === 'waiting' ? run.waiting === undefined : filters.state !== '' && run.state !== filters.state) return false;
  if (filters.subject && run.subject !== filters.subject) return false;
  if (filters.provider && run.provider !== filters.provider) return false;
  const text = filters.search.toLowerCase();
  return !text || [run.runId, run.subject, run.provider, run.model].some((field) => field.toLowerCase().includes(text));
}

function request(filters: Filters, before: string | undefined): OperatorRunsRequest {
  return {
    finished: PAGE,
    ...(before ? { before } : {}),
    ...(filters.state === 'waiting' ? { state: 'running' as const } : filters.state ? { state: filters.state } : {}),
    ...(filters.subject ? { subject: filters.subject } : {}),
    ...(filters.provider ? { provider: filters.provider } : {}),
    ...(filters.search ? { search: filters.search } : {}),
  };
}

export function Runs({ session, live, fail }: ViewProps) {
  const state = useLive(live);
  const [filters, setFilters] = useState<Filters>(NONE);
  /** The cursors of the pages before this one; the last is this page's. */
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const before = cursors.at(-1);
  const page = useLoad(
    () => session.operator.runs(request(filters, before)).catch((failure: unknown) => (fail(failure), Promise.reject(failure))),
    [filters, before],
    before === undefined ? state.finished : 0,
  );
  const active = [...state.active.values()].filter((run) => matches(run, filters));
  const finished = page.data?.finished ?? [];
  const apply = (next: Filters) => {
    setFilters(next);
    setCursors([undefined]);
  };
  return (
    <section>
      <RunFilters filters={filters} onApply={apply} />
      <h2>
        Active runs <span class="muted">({active.length})</span>
      </h2>
      <RunTable runs={active} empty={filters === NONE ? 'No run is active on this host.' : 'No active run matches.'} testid="active-runs" />
      <h2>Finished runs</h2>
      <ErrorLine error={page.error} />
      <RunTable runs={finished} empty={page.data ? 'No finished run matches.' : 'Loading…'} testid="finished-runs" finished />
      <div class="pager">
        <button type="button" disabled={cursors.length === 1} onClick={() => setCursors((list) => list.slice(0, -1))} data-testid="newer">
          ← Newer
        </button>
        <span class="muted" data-testid="page-number">
          page {cursors.length}
        </span>
        <button type="button" disabled={!page.data?.nextBefore} onClick={() => setCursors((list) => [...list, page.data!.nextBefore])} data-testid="older">
          Older →
        </button>
      </div>
    </section>
  );
}

function RunFilters({ filters, onApply }: { filters: Filters; onApply: (filters: Filters) => void }) {
  const [draft, setDraft] = useState(filters);
  const field = (name: 'subject' | 'provider' | 'search') => (event: Event) => setDraft({ ...draft, [name]: (event.target as HTMLInputElement).value.trim() });
  return (
    <form
      class="filters"
      data-testid="run-filters"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      <label>
        State
        <select
          name="state"
          value={draft.state}
          onChange={(event) => {
            const next = { ...draft, state: (event.target as HTMLSelectElement).value as Filters['state'] };
            setDraft(next);
            onApply(next);
          }}
        >
          <option value="">any</option>
          {STATES.map((value) => (
            <option key={value} value={value}>
              {value === 'waiting' ? 'waiting for approval or a tool' : value}
            </option>
          ))}
        </select>
      </label>
      <label>
        Subject
        <input name="subject" value={draft.subject} onInput={field('subject')} placeholder="exact" />
      </label>
      <label>
        Provider
        <input name="provider" value={draft.provider} onInput={field('provider')} placeholder="exact" />
      </label>
      <label class="grow">
        Search
        <input name="search" type="search" value={draft.search} onInput={field('search')} placeholder="run id, subject, provider or model" />
      </label>
      <button type="submit">Apply</button>
      <button
        type="button"
        onClick={() => {
          setDraft(NONE);
          onApply(NONE);
        }}
      >
        Clear
      </button>
    </form>
  );
}

function RunTable({ runs, empty, testid, finished = false }: { runs: OperatorRun[]; empty: string; testid: string; finished?: boolean }) {
  if (runs.length === 0) {
    return (
      <p class="muted" data-testid={testid}>
        {empty}
      </p>
    );
  }
  return (
    <Scroll>
      <table class="cards" data-testid={testid}>
        <thead>
          <tr>
            <th>Run</th>
            <th>Subject</th>
            <th>Provider / model</th>
            <th>{finished ? 'Finished' : 'Started'}</th>
            <th>Duration</th>
            <th>Steps</th>
            <th>Tokens in / out</th>
            <th>State</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.runId} data-run={run.runId}>
              <td data-label="Run">
                <CopyId id={run.runId} href={`#run/${run.runId}`} />
              </td>
              <td data-label="Subject">{run.subject}</td>
              <td data-label="Provider / model">
                {run.provider} / {run.model}
              </td>
              <td class="time" data-label={finished ? 'Finished' : 'Started'} title={finished ? run.finishedAt : run.startedAt}>
                {time(finished ? run.finishedAt : run.startedAt)}
              </td>
              <td data-label="Duration">
                <RunDuration run={run} />
              </td>
              <td data-label="Steps">{stepsOf(run)}</td>
              <td data-label="Tokens in / out">{tokens(run.usage)}</td>
              <td data-label="State">
                <RunState run={run} />
                {run.reason && (
                  <div class="reason" data-testid="reason">
                    {run.reason}
                  </div>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Scroll>
  );
}
