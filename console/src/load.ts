/**
 * Loading a view's data without polling: once when its query changes, then again only when
 * the live feed says something changed — at most once per `spacingMs` (a burst of changes is
 * one request), never two at once, and an answer to an older query is dropped.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  /** Loads again now (or as soon as the spacing allows). */
  reload(): void;
}

export function useLoad<T>(load: () => Promise<T>, query: unknown[], changed: unknown = 0, spacingMs = 1000): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  const gate = useRef({ load, running: false, again: false, last: 0, timer: undefined as ReturnType<typeof setTimeout> | undefined, version: 0, mounted: false });
  gate.current.load = load;

  const go = () => {
    const now = gate.current;
    if (now.running) return void (now.again = true);
    const wait = now.last + spacingMs - Date.now();
    if (wait > 0) {
      now.timer ??= setTimeout(() => ((now.timer = undefined), go()), wait);
      return;
    }
    now.running = true;
    now.last = Date.now();
    const version = now.version;
    now
      .load()
      .then(
        (data) => version === now.version && setState({ data }),
        (error: unknown) => version === now.version && setState((previous) => ({ ...previous, error })),
      )
      .finally(() => {
        now.running = false;
        if (now.again) {
          now.again = false;
          go();
        }
      });
  };

  useEffect(() => {
    const now = gate.current;
    // A new query: what was shown answered the old one.
    if (now.mounted) setState({});
    now.version += 1;
    now.last = 0;
    clearTimeout(now.timer);
    now.timer = undefined;
    go();
  }, query);
  useEffect(() => {
    if (gate.current.mounted) go();
    gate.current.mounted = true;
  }, [changed]);
  useEffect(() => () => clearTimeout(gate.current.timer), []);
  return { data: state.data, error: state.error, reload: go };
}
