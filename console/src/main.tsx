/**
 * The operator console: sign in with an operator token, then five views over the host's
 * operator endpoints. Every value from the host is rendered as text (Preact escapes it);
 * nothing is ever inserted as HTML.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Api, ApiError, forgetToken, saveToken, savedToken, type Json } from './api.js';

const VIEWS = ['providers', 'runs', 'approvals', 'jobs', 'usage'] as const;
type View = (typeof VIEWS)[number];
const POLL_MS = 1000;
const MAX_ARGUMENT_CHARS = 2000;

function App() {
  const [token, setToken] = useState<string | undefined>(savedToken());
  const [notice, setNotice] = useState<string>();
  const signOut = (message?: string) => {
    forgetToken();
    setToken(undefined);
    setNotice(message);
  };
  if (!token) return <SignIn notice={notice} onSignIn={(value) => (saveToken(value), setNotice(undefined), setToken(value))} />;
  return <Shell api={new Api(token)} onSignOut={signOut} />;
}

function SignIn({ notice, onSignIn }: { notice: string | undefined; onSignIn: (token: string) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | undefined>(notice);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const token = value.trim();
    if (!token) return;
    setBusy(true);
    try {
      // The token is checked against an operator endpoint before it is kept.
      await new Api(token).post('/v1/operator/runs', { finished: 0 });
      onSignIn(token);
    } catch (failure) {
      setError(describeFailure(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>agenticdriver console</h1>
      <form onSubmit={submit}>
        <label for="token">Operator token</label>
        <input id="token" name="token" type="password" autocomplete="off" value={value} onInput={(event) => setValue((event.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      {error && (
        <p class="error" role="alert" data-testid="signin-error">
          {error}
        </p>
      )}
      <p class="hint">The token stays in this tab's session storage and is sent only to this host.</p>
    </main>
  );
}

function describeFailure(failure: unknown): string {
  if (failure instanceof ApiError) {
    if (failure.status === 403) return `Forbidden (403 ${failure.code}): ${failure.message} The console needs a token with "operator": true.`;
    if (failure.status === 401) return `The host refused this token (401 ${failure.code}).`;
    return `${failure.code}: ${failure.message}`;
  }
  return `The host could not be reached: ${String(failure)}`;
}

function currentView(): View {
  const name = location.hash.slice(1);
  return (VIEWS as readonly string[]).includes(name) ? (name as View) : 'runs';
}

function Shell({ api, onSignOut }: { api: Api; onSignOut: (message?: string) => void }) {
  const [view, setView] = useState<View>(currentView());
  useEffect(() => {
    const follow = () => setView(currentView());
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  const fail = (failure: unknown) => {
    if (failure instanceof ApiError && (failure.status === 401 || failure.status === 403)) onSignOut(describeFailure(failure));
  };
  return (
    <div class="shell">
      <header>
        <strong>agenticdriver</strong>
        <span class="host">{location.host}</span>
        <nav>
          {VIEWS.map((name) => (
            <a key={name} href={`#${name}`} class={name === view ? 'active' : ''} data-view={name}>
              {name[0]!.toUpperCase() + name.slice(1)}
            </a>
          ))}
        </nav>
        <button class="signout" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      <main>
        {view === 'providers' && <Providers api={api} fail={fail} />}
        {view === 'runs' && <Runs api={api} fail={fail} />}
        {view === 'approvals' && <Approvals api={api} fail={fail} />}
        {view === 'jobs' && <Jobs api={api} fail={fail} />}
        {view === 'usage' && <Usage api={api} fail={fail} />}
      </main>
    </div>
  );
}

interface ViewProps {
  api: Api;
  fail: (failure: unknown) => void;
}

/** Calls `load` now and every POLL_MS while mounted; the newest answer wins. */
function usePoll<T>(load: () => Promise<T>, fail: (failure: unknown) => void, deps: unknown[] = []): { data: T | undefined; error: string | undefined; reload: () => void } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const step = async () => {
      try {
        const value = await load();
        if (live) (setData(value), setError(undefined));
      } catch (failure) {
        if (live) setError(describeFailure(failure));
        fail(failure);
      }
      if (live) timer = setTimeout(step, POLL_MS);
    };
    void step();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [tick, ...deps]);
  return { data, error, reload: () => setTick((value) => value + 1) };
}

function ErrorLine({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

// --- Providers ---------------------------------------------------------------------------------

function Providers({ api, fail }: ViewProps) {
  const [providers, setProviders] = useState<Json[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const load = async (refresh: boolean) => {
    setBusy(true);
    try {
      setProviders((await api.get<{ providers: Json[] }>(refresh ? '/v1/providers?refresh=true' : '/v1/providers')).providers);
      setError(undefined);
    } catch (failure) {
      setError(describeFailure(failure));
      fail(failure);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(false), []);
  return (
    <section>
      <h2>
        Providers{' '}
        <button onClick={() => load(true)} disabled={busy}>
          Refresh
        </button>
      </h2>
      <ErrorLine error={error} />
      {providers && providers.length === 0 && <p>This token is granted no provider.</p>}
      <table>
        <thead>
          <tr>
            <th>Provider</th>
            <th>Vendor</th>
            <th>Auth</th>
            <th>Health</th>
            <th>Models</th>
          </tr>
        </thead>
        <tbody>
          {(providers ?? []).map((provider) => (
            <tr key={provider.id} data-provider={provider.id}>
              <td>{provider.id}</td>
              <td>{provider.vendor}</td>
              <td>{provider.authMode}</td>
              <td>
                <span class={`badge ${provider.health?.status ?? 'unknown'}`}>{provider.health?.status ?? 'unknown'}</span> {provider.health?.message ?? ''}
                {provider.health?.checkedAt && (
                  <div class="muted">
                    {provider.health.code} · checked {time(provider.health.checkedAt)}
                  </div>
                )}
              </td>
              <td>
                {(provider.modelCatalog?.models ?? provider.models ?? []).join(', ')}
                {provider.modelCatalog && <div class="muted">catalog: {provider.modelCatalog.source}</div>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

// --- Runs --------------------------------------------------------------------------------------

function Runs({ api, fail }: ViewProps) {
  const { data, error } = usePoll(() => api.post<{ active: Json[]; finished: Json[] }>('/v1/operator/runs', { finished: 20 }), fail);
  const [watching, setWatching] = useState<string>();
  return (
    <section>
      <h2>Active runs</h2>
      <ErrorLine error={error} />
      <RunTable runs={data?.active ?? []} empty="No run is active." onOpen={setWatching} testid="active-runs" />
      {watching && <RunWatch api={api} runId={watching} onClose={() => setWatching(undefined)} />}
      <h2>Recently finished</h2>
      <RunTable runs={data?.finished ?? []} empty="No run has finished yet." testid="finished-runs" />
    </section>
  );
}

function RunTable({ runs, empty, onOpen, testid }: { runs: Json[]; empty: string; onOpen?: (runId: string) => void; testid: string }) {
  if (runs.length === 0) return <p class="muted" data-testid={testid}>{empty}</p>;
  return (
    <table data-testid={testid}>
      <thead>
        <tr>
          <th>Run</th>
          <th>Subject</th>
          <th>Provider / model</th>
          <th>Started</th>
          <th>Steps</th>
          <th>Tokens in / out</th>
          <th>State</th>
          {onOpen && <th />}
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.runId} data-run={run.runId}>
            <td class="mono">{short(run.runId)}</td>
            <td>{run.subject}</td>
            <td>
              {run.provider} / {run.model}
            </td>
            <td>{time(run.startedAt)}</td>
            <td>{run.steps}</td>
            <td>
              {run.usage?.inputTokens ?? 0} / {run.usage?.outputTokens ?? 0}
            </td>
            <td>
              <span class={`badge ${run.state}`}>{run.state}</span> {run.errorCode ?? ''}
            </td>
            {onOpen && (
              <td>
                <button onClick={() => onOpen(run.runId)}>Watch</button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Follows one event stream into a list; `path` changes restart it. */
function useEventStream(api: Api, path: string) {
  const [events, setEvents] = useState<Json[]>([]);
  const [status, setStatus] = useState('connecting');
  useEffect(() => {
    const stop = new AbortController();
    setEvents([]);
    setStatus('streaming');
    void (async () => {
      try {
        for await (const event of api.events(path, stop.signal)) setEvents((list) => [...list.slice(-499), event]);
        if (!stop.signal.aborted) setStatus('ended');
      } catch (failure) {
        if (!stop.signal.aborted) setStatus(describeFailure(failure));
      }
    })();
    return () => stop.abort();
  }, [path]);
  return { events, status };
}

function RunWatch({ api, runId, onClose }: { api: Api; runId: string; onClose: () => void }) {
  const { events, status } = useEventStream(api, `/v1/operator/runs/${runId}/events`);
  const text = events.filter((event) => event.type === 'text.delta').map((event) => event.text).join('');
  return (
    <div class="panel" data-testid="run-watch">
      <h3>
        Run <span class="mono">{runId}</span> <span class="muted">({status})</span> <button onClick={onClose}>Close</button>
      </h3>
      {text && <pre class="text">{text}</pre>}
      <EventList events={events} />
    </div>
  );
}

function EventList({ events }: { events: Json[] }) {
  return (
    <ol class="events" data-testid="events">
      {events.map((event) => (
        <li key={`${event.runId}-${event.sequence}`} data-type={event.type}>
          <span class="mono">#{event.sequence}</span> <strong>{event.type}</strong> <span class="muted">{describeEvent(event)}</span>
        </li>
      ))}
    </ol>
  );
}

function describeEvent(event: Json): string {
  switch (event.type) {
    case 'run.started':
      return `${event.provider} / ${event.model}`;
    case 'step.started':
      return `step ${event.step}`;
    case 'text.delta':
      return JSON.stringify(event.text);
    case 'tool.called':
      return `${event.call?.name} ${bounded(event.call?.arguments, 200)}`;
    case 'approval.requested':
      return `${event.approval?.call?.name} waits for a decision`;
    case 'approval.resolved':
      return event.resolution?.outcome ?? '';
    case 'usage.reported':
      return `${event.usage?.inputTokens ?? 0} in / ${event.usage?.outputTokens ?? 0} out`;
    case 'run.completed':
      return `${event.result?.steps} steps`;
    case 'run.failed':
    case 'run.cancelled':
      return `${event.error?.code}: ${event.error?.message}`;
    default:
      return '';
  }
}

// --- Approvals ---------------------------------------------------------------------------------

function Approvals({ api, fail }: ViewProps) {
  const { data, error, reload } = usePoll(() => api.post<{ approvals: Json[] }>('/v1/operator/approvals', { limit: 100 }), fail);
  const [result, setResult] = useState<string>();
  const [busy, setBusy] = useState<string>();
  const decide = async (entry: Json, decision: 'approve' | 'deny') => {
    const { approval } = entry;
    setBusy(approval.approvalId);
    try {
      // The decision echoes the exact call shown, as every decision must.
      const resolution = await api.post('/v1/operator/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision });
      setResult(`${approval.call.name} for run ${short(approval.runId)}: ${resolution.outcome}.`);
    } catch (failure) {
      setResult(describeFailure(failure));
      fail(failure);
    } finally {
      setBusy(undefined);
      reload();
    }
  };
  const approvals = data?.approvals ?? [];
  return (
    <section>
      <h2>Pending approvals</h2>
      <ErrorLine error={error} />
      {result && (
        <p class="result" data-testid="decision-result">
          {result}
        </p>
      )}
      {approvals.length === 0 && (
        <p class="muted" data-testid="no-approvals">
          No approval is pending.
        </p>
      )}
      {approvals.map((entry) => (
        <article class="approval" key={entry.approval.approvalId} data-approval={entry.approval.approvalId}>
          <h3>
            <span class="mono">{entry.approval.call.name}</span> <span class="muted">requested {time(entry.approval.requestedAt)}</span>
          </h3>
          <dl>
            <dt>Subject</dt>
            <dd>{entry.subject}</dd>
            <dt>Provider</dt>
            <dd>{entry.provider}</dd>
            <dt>Run</dt>
            <dd class="mono">{entry.approval.runId}</dd>
            {entry.approval.expiresAt && (
              <>
                <dt>Expires</dt>
                <dd>{time(entry.approval.expiresAt)}</dd>
              </>
            )}
          </dl>
          <pre class="arguments" data-testid="arguments">
            {bounded(entry.approval.call.arguments, MAX_ARGUMENT_CHARS)}
          </pre>
          <div class="actions">
            <button class="approve" disabled={busy !== undefined} onClick={() => decide(entry, 'approve')}>
              Approve
            </button>
            <button class="deny" disabled={busy !== undefined} onClick={() => decide(entry, 'deny')}>
              Deny
            </button>
          </div>
        </article>
      ))}
    </section>
  );
}

// --- Jobs --------------------------------------------------------------------------------------

function Jobs({ api, fail }: ViewProps) {
  const { data, error } = usePoll(() => api.post<{ jobs: Json[] }>('/v1/operator/jobs', { limit: 50 }), fail);
  const [following, setFollowing] = useState<string>();
  const jobs = data?.jobs ?? [];
  const counts = jobs.reduce<Record<string, number>>((sum, entry) => ((sum[entry.job.state] = (sum[entry.job.state] ?? 0) + 1), sum), {});
  return (
    <section>
      <h2>Jobs</h2>
      <ErrorLine error={error} />
      <p class="muted">{Object.entries(counts).map(([state, count]) => `${count} ${state}`).join(' · ') || 'No job.'}</p>
      {jobs.length > 0 && (
        <table data-testid="jobs">
          <thead>
            <tr>
              <th>Job</th>
              <th>Subject</th>
              <th>Provider / model</th>
              <th>State</th>
              <th>Events</th>
              <th>Updated</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {jobs.map(({ job, subject }) => (
              <tr key={job.id} data-job={job.id}>
                <td class="mono">{short(job.id)}</td>
                <td>{subject}</td>
                <td>
                  {job.provider} / {job.model}
                </td>
                <td>
                  <span class={`badge ${job.state}`}>{job.state}</span>
                </td>
                <td>{job.cursor}</td>
                <td>{time(job.updatedAt)}</td>
                <td>
                  <button onClick={() => setFollowing(job.id)}>Follow</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {following && <JobTail api={api} jobId={following} onClose={() => setFollowing(undefined)} />}
    </section>
  );
}

function JobTail({ api, jobId, onClose }: { api: Api; jobId: string; onClose: () => void }) {
  const { events, status } = useEventStream(api, `/v1/operator/jobs/${jobId}/stream`);
  const last = events.at(-1);
  const outcome = last && ['run.completed', 'run.failed', 'run.cancelled'].includes(last.type) ? last.type.slice(4) : undefined;
  return (
    <div class="panel" data-testid="job-tail">
      <h3>
        Job <span class="mono">{jobId}</span> <span class="muted" data-testid="job-outcome">{outcome ?? status}</span> <button onClick={onClose}>Close</button>
      </h3>
      <EventList events={events} />
    </div>
  );
}

// --- Usage -------------------------------------------------------------------------------------

function Usage({ api, fail }: ViewProps) {
  const [totals, setTotals] = useState<{ day: Json[]; model: Json[]; provider: Json[] }>();
  const [pages, setPages] = useState<Json[][]>([]);
  const [next, setNext] = useState<number>();
  const [error, setError] = useState<string>();
  const load = async () => {
    try {
      const [day, model, provider, audit] = await Promise.all([
        api.post('/v1/operator/usage', { by: 'day' }),
        api.post('/v1/operator/usage', { by: 'model' }),
        api.post('/v1/operator/usage', { by: 'provider' }),
        api.post('/v1/operator/audit', { limit: 20 }),
      ]);
      setTotals({ day: day.totals, model: model.totals, provider: provider.totals });
      setPages([audit.records]);
      setNext(audit.nextBefore);
      setError(undefined);
    } catch (failure) {
      setError(describeFailure(failure));
      fail(failure);
    }
  };
  const older = async () => {
    try {
      const audit = await api.post('/v1/operator/audit', { limit: 20, before: next });
      setPages((list) => [...list, audit.records]);
      setNext(audit.nextBefore);
    } catch (failure) {
      setError(describeFailure(failure));
    }
  };
  useEffect(() => void load(), []);
  return (
    <section>
      <h2>
        Usage <button onClick={load}>Refresh</button>
      </h2>
      <ErrorLine error={error} />
      {totals && <DayChart rows={totals.day} />}
      <div class="columns">
        <TotalsTable title="Per provider" rows={totals?.provider ?? []} />
        <TotalsTable title="Per model" rows={totals?.model ?? []} />
      </div>
      <h2>Audit log</h2>
      <table data-testid="audit">
        <thead>
          <tr>
            <th>When</th>
            <th>Kind</th>
            <th>Subject</th>
            <th>Decided by</th>
            <th>Tool</th>
            <th>Outcome</th>
            <th>Run</th>
          </tr>
        </thead>
        <tbody>
          {pages.flat().map((record) => (
            <tr key={record.id}>
              <td>{time(record.at)}</td>
              <td>{record.kind}</td>
              <td>{record.subject}</td>
              <td>{record.operator ? `${record.operator} (operator, token ${record.tokenId})` : (record.tokenId ?? '')}</td>
              <td>{record.tool ?? ''}</td>
              <td>{record.outcome ?? record.code ?? ''}</td>
              <td class="mono">{record.runId ? short(record.runId) : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {next !== undefined && <button onClick={older}>Older</button>}
    </section>
  );
}

/** Tokens per day as bars (input below output), drawn as SVG. */
function DayChart({ rows }: { rows: Json[] }) {
  const days = rows.slice(-30);
  if (days.length === 0) return <p class="muted">No usage recorded yet.</p>;
  const width = 900;
  const height = 180;
  const bar = Math.min(60, (width - 40) / days.length - 6);
  const max = Math.max(1, ...days.map((row) => row.inputTokens + row.outputTokens));
  return (
    <figure>
      <svg viewBox={`0 0 ${width} ${height + 40}`} role="img" aria-label="Tokens per day" data-testid="usage-chart">
        {days.map((row, index) => {
          const x = 30 + index * (bar + 6);
          const inHeight = (row.inputTokens / max) * height;
          const outHeight = (row.outputTokens / max) * height;
          return (
            <g key={row.key}>
              <rect x={x} y={height - inHeight} width={bar} height={inHeight} class="input" />
              <rect x={x} y={height - inHeight - outHeight} width={bar} height={outHeight} class="output" />
              <text x={x + bar / 2} y={height + 16} text-anchor="middle">
                {row.key.slice(5)}
              </text>
              <text x={x + bar / 2} y={height + 32} text-anchor="middle" class="muted">
                {row.runs} runs
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        Tokens per day (UTC): <span class="swatch input" /> input <span class="swatch output" /> output; highest day {max.toLocaleString()} tokens.
      </figcaption>
    </figure>
  );
}

function TotalsTable({ title, rows }: { title: string; rows: Json[] }) {
  return (
    <div>
      <h3>{title}</h3>
      <table>
        <thead>
          <tr>
            <th />
            <th>Runs</th>
            <th>Completed</th>
            <th>Failed</th>
            <th>Tokens in / out</th>
            <th>Cost USD</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <td>{row.key}</td>
              <td>{row.runs}</td>
              <td>{row.completed}</td>
              <td>{row.failed + row.cancelled + row.interrupted}</td>
              <td>
                {row.inputTokens} / {row.outputTokens}
              </td>
              <td>{row.costUsd.toFixed(4)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// --- helpers -----------------------------------------------------------------------------------

function short(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

function time(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** Pretty-printed JSON, cut at `max` characters with a note of how much was left out. */
function bounded(value: unknown, max: number): string {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters)`;
}

render(<App />, document.getElementById('app')!);
