/**
 * Loading a view's data without polling: once when its query changes, then again only when
 * the live feed says something changed — at most once per `spacingMs` (a burst of changes is
 * one request), never two at once. What is shown always answers the current query: an answer
 * to an older one is dropped, and none is shown until the current one has its answer.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  /** Loads again now (or as soon as the spacing allows). */
  reload(): void;
}

export function useLoad<T>(load: () => Promise<T>, query: unknown[], changed: unknown = 0, spacingMs = 1000): Loaded<T> {
  const key = JSON.stringify(query);
  const [state, setState] = useState<{ key?: string; data?: T; error?: unknown }>({});
  const gate = useRef({ load, key, running: false, again: false, last: 0, timer: undefined as ReturnType<typeof setTimeout> | undefined, mounted: false });
  gate.current.load = load;
  gate.current.key = key;

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
    const asked = now.key;
    now
      .load()
      .then(
        (data) => asked === now.key && setState({ key: asked, data }),
        (error: unknown) => asked === now.key && setState((previous) => ({ key: asked, data: previous.key === asked ? previous.data : undefined, error })),
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
    now.last = 0;
    clearTimeout(now.timer);
    now.timer = undefined;
    go();
  }, [key]);
  useEffect(() => {
    if (gate.current.mounted) go();
    gate.current.mounted = true;
  }, [changed]);
  useEffect(() => () => clearTimeout(gate.current.timer), []);
  const current = state.key === key;
  return { data: current ? state.data : undefined, error: current ? state.error : undefined, reload: go };
}
