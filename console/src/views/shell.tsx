/** The signed-in page: a header that wraps on a phone, the views by URL hash, one live feed for all of them. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { isAuthFailure } from '../format.js';
import { LiveFeed, useLive } from '../live.js';
import { openSession, type Session } from '../session.js';
import { Approvals } from './approvals.js';
import { Jobs } from './jobs.js';
import { Providers } from './providers.js';
import { RunPage } from './run.js';
import { Runs } from './runs.js';
import { Usage } from './usage.js';

const VIEWS = ['runs', 'approvals', 'jobs', 'providers', 'usage'] as const;
type View = (typeof VIEWS)[number];

/** What a view gets: the clients, the live feed, and how to report a failure (a refused token signs out). */
export interface ViewProps {
  session: Session;
  live: LiveFeed;
  fail: (failure: unknown) => void;
}

interface Route {
  view: View;
  /** `#run/<id>`: one run's page (under Runs). */
  runId?: string;
}

function currentRoute(): Route {
  const hash = decodeURIComponent(location.hash.slice(1));
  if (hash.startsWith('run/')) return { view: 'runs', runId: hash.slice(4) };
  return { view: (VIEWS as readonly string[]).includes(hash) ? (hash as View) : 'runs' };
}

export function Shell({ token, onSignOut }: { token: string; onSignOut: (failure?: unknown) => void }) {
  const [route, setRoute] = useState<Route>(currentRoute());
  const session = useMemo(() => openSession(token), [token]);
  const fail = (failure: unknown) => {
    if (isAuthFailure(failure)) onSignOut(failure);
  };
  const live = useMemo(() => new LiveFeed(session.operator, fail), [session]);
  useEffect(() => () => live.close(), [live]);
  useEffect(() => {
    const follow = () => setRoute(currentRoute());
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  const state = useLive(live);
  const props: ViewProps = { session, live, fail };
  return (
    <div class="shell">
      <header>
        <strong class="brand">agenticdriver</strong>
        <span class="host">{location.host}</span>
        <span class={`live ${state.status}`} data-testid="live-status" title="The live update stream">
          {state.status === 'live' ? 'live' : state.status === 'connecting' ? 'connecting…' : 'reconnecting…'}
        </span>
        <nav>
          {VIEWS.map((name) => (
            <a key={name} href={`#${name}`} class={name === route.view ? 'active' : ''} data-view={name}>
              {name[0]!.toUpperCase() + name.slice(1)}
              {name === 'runs' && state.active.size > 0 && <span class="count" data-testid="active-count">{state.active.size}</span>}
              {name === 'approvals' && (state.pendingApprovals ?? 0) > 0 && (
                <span class="count pending" data-testid="pending-count" title="Pending approvals">
                  {state.pendingApprovals}
                </span>
              )}
            </a>
          ))}
        </nav>
        <button class="signout" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      <main>
        {route.view === 'runs' && (route.runId ? <RunPage {...props} runId={route.runId} /> : <Runs {...props} />)}
        {route.view === 'approvals' && <Approvals {...props} />}
        {route.view === 'jobs' && <Jobs {...props} />}
        {route.view === 'providers' && <Providers {...props} />}
        {route.view === 'usage' && <Usage {...props} />}
      </main>
    </div>
  );
}
