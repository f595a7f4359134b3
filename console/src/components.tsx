/** Small pieces every view uses: errors, copyable ids, a run's state, a ticking duration. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { OperatorRun } from '../../src/client/index.js';
import { describeFailure, duration, shortId, since } from './format.js';

export function ErrorLine({ error }: { error: unknown }) {
  return error ? (
    <p class="error" role="alert">
      {typeof error === 'string' ? error : describeFailure(error)}
    </p>
  ) : null;
}

/** Wide content (tables) scrolls inside its own box, so the page never does sideways. */
export function Scroll({ children }: { children: ComponentChildren }) {
  return <div class="scroll">{children}</div>;
}

/** An id shown short (or whole), with a button that copies all of it. */
export function CopyId({ id, full = false, href }: { id: string; full?: boolean; href?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(id);
    } catch {
      // No clipboard permission: select the id so the operator can copy it by hand.
      const selection = getSelection();
      const range = document.createRange();
      range.selectNodeContents(document.querySelector(`[data-id="${CSS.escape(id)}"]`) ?? document.body);
      selection?.removeAllRanges();
      selection?.addRange(range);
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  const text = full ? id : shortId(id);
  const shown = { class: full ? 'mono full' : 'mono', title: id, 'data-id': id };
  return (
    <span class="id">
      {href ? (
        <a {...shown} href={href}>
          {text}
        </a>
      ) : (
        <span {...shown}>{text}</span>
      )}
      <button type="button" class="copy" aria-label={`Copy ${id}`} title={copied ? 'Copied' : 'Copy the full id'} data-copy={id} data-copied={copied ? 'yes' : undefined} onClick={copy}>
        {copied ? (
          '✓'
        ) : (
          <svg viewBox="0 0 16 16" width="13" height="13" aria-hidden="true">
            <rect x="5" y="5" width="9" height="9" rx="1.5" />
            <path d="M11 3.5V3a1 1 0 0 0-1-1H3a1 1 0 0 0-1 1v7a1 1 0 0 0 1 1h.5" />
          </svg>
        )}
      </button>
    </span>
  );
}

/** Re-renders every second while mounted (for durations that run on). */
export function useTicking(active: boolean): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setTick((tick) => tick + 1), 1000);
    return () => clearInterval(timer);
  }, [active]);
}

/** How long a run took, or has been running (ticking). */
export function RunDuration({ run }: { run: OperatorRun }) {
  const running = run.state === 'running';
  useTicking(running);
  const ms = run.durationMs ?? since(run.startedAt, run.finishedAt);
  return <span class="duration">{duration(ms)}</span>;
}

/** The run's state; a run waiting for a person or an application says so, with for how long. */
export function RunState({ run }: { run: OperatorRun }) {
  const { waiting } = run;
  useTicking(waiting !== undefined);
  if (waiting) {
    const what = waiting.kind === 'approval' ? 'waiting for approval' : 'waiting for the application';
    return (
      <span class="state">
        <span class="badge waiting" data-state="waiting">
          {what}
        </span>{' '}
        <span class="muted">
          {waiting.tool} · {duration(since(waiting.since))}
        </span>
      </span>
    );
  }
  return (
    <span class="state">
      <span class={`badge ${run.state}`} data-state={run.state}>
        {run.state}
      </span>
      {run.errorCode && <span class="mono code"> {run.errorCode}</span>}
    </span>
  );
}

/** Steps of a run; unknown for an interrupted one (the host stopped before it could count them). */
export function stepsOf(run: OperatorRun): string {
  return run.outcome === 'uncertain' && run.steps === 0 ? 'unknown' : String(run.steps);
}
